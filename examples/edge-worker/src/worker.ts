/**
 * A Cloudflare Worker that prepares referenced prompts server-side from dsh session logs kept in an
 * R2 bucket bound as `SESSIONS`; the routes are in handler.ts. Module syntax: the default export
 * is the only export, so workerd sees one entrypoint.
 */
import { provideSqliteWasm } from 'dsh-session-reference';
import libzstd from 'dsh-session-reference/libzstd.wasm';
import sqlite3 from 'dsh-session-reference/sqlite3.wasm';
import { provideZstdWasm } from 'dsh-session-reference/store';
import { handleRequest, type Env } from './handler.js';

// workerd compiles no WebAssembly from bytes: libzstd's decoder (zstd logs, SPEC §11.2) and SQLite
// (the engine of GET /search, SPEC §16.5) come as module imports, compiled when the Worker is
// deployed, and are given to the library here.
provideZstdWasm(libzstd);
provideSqliteWasm(sqlite3);

export type { Env } from './handler.js';

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    return handleRequest(request, env);
  },
};
