/**
 * A Cloudflare Worker that prepares referenced prompts server-side from dsh session logs kept in an
 * R2 bucket bound as `SESSIONS`; the routes are in handler.ts. Module syntax: the default export
 * is the only export, so workerd sees one entrypoint.
 */
import libzstd from 'dsh-session-reference/libzstd.wasm';
import { provideZstdWasm } from 'dsh-session-reference/store';
import { handleRequest, type Env } from './handler.js';

// workerd compiles no WebAssembly from bytes: libzstd's decoder (zstd logs, SPEC §11.2) comes as a
// module import, compiled when the Worker is deployed, and is given to the library here.
provideZstdWasm(libzstd);

export type { Env } from './handler.js';

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    return handleRequest(request, env);
  },
};
