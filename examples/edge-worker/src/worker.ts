/**
 * A Cloudflare Worker that prepares referenced prompts server-side from dsh session logs kept in an
 * R2 bucket bound as `SESSIONS`; the routes are in handler.ts. Module syntax: the default export
 * is the only export, so workerd sees one entrypoint.
 */
import { handleRequest, type Env } from './handler.js';

export type { Env } from './handler.js';

export default {
  fetch(request: Request, env: Env): Promise<Response> {
    return handleRequest(request, env);
  },
};
