/**
 * The routes of the edge service (SPEC §17.3, §17.4) as a Hono app: CORS for `ALLOWED_ORIGINS`,
 * authentication before anything is read, then the tenant's catalog and logs.
 * @module
 */
import { Hono, type Context } from 'hono';
import { cors } from 'hono/cors';
import { routePath } from 'hono/route';
import { DEFAULT_SESSION_REFERENCE_CONFIG, parsePositiveInteger } from '../config.js';
import { parseSessionReferenceText } from '../mention.js';
import { createSessionReferences } from '../service.js';
import { concat } from '../store/lines.js';
import type { TargetAgent, UserMessage } from '../types.js';
import type { CatalogRow } from './catalog/index.js';
import { tenantOf, type Authenticate } from './auth.js';
import { callCatalog, type CatalogApi } from './catalog-api.js';
import { citedSessionQuery, unknownSession } from './cited.js';
import { bucketOf, candidateLimit, catalogOf, checkEnv, DEFAULT_MAX_UPLOAD_BYTES, logLimits, originsOf, serviceConfig, settingNumber, tenantPrefix, type EdgeEnv } from './env.js';
import { errorResponse, HttpError, invalid, json } from './http.js';
import { sessionKey } from './paths.js';
import { reconcileTenant } from './reconcile.js';
import { storeLog } from './upload.js';
import { provideEdgeWasm } from './wasm.js';

/** Options of {@link createEdgeApp} and `createEdgeWorker`. */
export interface EdgeOptions<E extends EdgeEnv = EdgeEnv> {
  /**
   * Replaces the default bearer-token authentication (SPEC §17.3): returns the tenant of the
   * request, or nothing to answer 401. Called before anything is read.
   */
  authenticate?: Authenticate<E>;
  /** Path prefix the routes are served under (default none: `/candidates`, …), e.g. `/api/sessions`. */
  basePath?: string;
}

/** What the routes keep per request (Hono's `Variables`): the authenticated tenant. */
export interface EdgeVariables {
  tenant: string;
}

type EdgeContext<E extends EdgeEnv> = Context<{ Bindings: E; Variables: EdgeVariables }>;

/** Largest `POST /prepare` body accepted, in bytes. */
const MAX_BODY_BYTES = 1024 * 1024;
/** Rows of one `GET /sessions` page, at most. */
const MAX_ROWS_PAGE = 1000;

/**
 * The edge service's routes as a Hono app (SPEC §17.2: the form an app with its own router
 * mounts). `app.fetch(request, env, ctx)` answers one request; in a Hono app, `app.route('/', createEdgeApp())`
 * or `createEdgeApp({ basePath: '/dsh' })` mounts them.
 *
 * Routes (JSON in and out; errors `{ code, message }`): `GET /candidates?as=&q=&limit=&titles=&match=`,
 * `GET /search?as=&q=&limit=`, `POST /prepare` `{ as, text | message }`, `PUT /sessions/{path}`
 * (the log as the body, `Content-Length` required) → `{ key, sessionId, etag, size }`,
 * `DELETE /sessions/{path}` → `{ key }`, `GET /sessions?cursor=&limit=` → `{ rows, cursor? }`,
 * `POST /reconcile` → `{ done, added, changed, removed }`. Statuses: 400 invalid input (and a body
 * that is not a dsh log), 401 `UNAUTHENTICATED`, 404 unknown session or route, 405 wrong method,
 * 411 no `Content-Length`, 413 too large, 499 cancelled, 500 bad configuration, 502 the store
 * failed or holds a broken log.
 * @param options `{ authenticate?, basePath? }`.
 */
export function createEdgeApp<E extends EdgeEnv = EdgeEnv>(options: EdgeOptions<E> = {}): Hono<{ Bindings: E; Variables: EdgeVariables }> {
  provideEdgeWasm();
  const app = new Hono<{ Bindings: E; Variables: EdgeVariables }>();
  const routes = options.basePath ? app.basePath(options.basePath) : app;
  routes.use('*', corsFor<E>());
  routes.use('*', async (c, next) => {
    // Every setting checked before any route runs: a malformed one is a 500 on every route.
    checkEnv(c.env, options.authenticate === undefined);
    c.set('tenant', await tenantOf(c.req.raw, c.env, options.authenticate));
    await next();
  });
  routes.on(['GET', 'HEAD'], '/candidates', (c) => candidates(c));
  routes.on(['GET', 'HEAD'], '/search', (c) => search(c));
  routes.post('/prepare', (c) => prepare(c));
  routes.put('/sessions/*', (c) => putSession(c));
  routes.delete('/sessions/*', (c) => deleteSession(c));
  routes.on(['GET', 'HEAD'], '/sessions', (c) => listRows(c));
  routes.post('/reconcile', (c) => reconcile(c));
  for (const [path, allow] of [
    ['/candidates', 'GET, HEAD'],
    ['/search', 'GET, HEAD'],
    ['/prepare', 'POST'],
    // `/sessions` before `/sessions/*` (which matches `/sessions` too).
    ['/sessions', 'GET, HEAD'],
    ['/sessions/*', 'PUT, DELETE'],
    ['/reconcile', 'POST'],
  ] as const) {
    routes.all(path, (c) => {
      throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${c.req.method} ${new URL(c.req.url).pathname}: use ${allow}`, { allow });
    });
  }
  app.notFound((c) => errorResponse(new HttpError(404, 'ROUTE_NOT_FOUND', `no route ${c.req.method} ${new URL(c.req.url).pathname}`)));
  app.onError((error) => errorResponse(error));
  return app;
}

/**
 * CORS (SPEC §17.4): preflights and CORS headers for the exact origins of `ALLOWED_ORIGINS`, none
 * for other origins; `Vary: Origin` on every answer when any origin is allowed.
 */
function corsFor<E extends EdgeEnv>() {
  const allowed = cors({
    origin: (origin) => origin,
    allowMethods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    allowHeaders: ['Authorization', 'Content-Type'],
    maxAge: 600,
  });
  return async (c: EdgeContext<E>, next: () => Promise<void>) => {
    const origins = originsOf(c.env);
    if (origins.size === 0) return next();
    const origin = c.req.header('origin');
    if (origin !== undefined && origins.has(origin)) return allowed(c, next);
    await next();
    c.res.headers.append('vary', 'Origin');
  };
}

/** The tenant's catalog, bucket and prefix. */
function tenantStore<E extends EdgeEnv>(c: EdgeContext<E>): { catalog: CatalogApi; prefix: string } {
  const tenant = c.get('tenant');
  return { catalog: catalogOf(c.env, tenant), prefix: tenantPrefix(c.env, tenant) };
}

/** An optional positive integer of the query string (400 otherwise). */
function queryNumber(c: Context, name: string): number | undefined {
  const value = c.req.query(name);
  return value === undefined ? undefined : parsePositiveInteger(value, name);
}

/**
 * Rows of `/candidates` and `/search` (issue 27): `limit` (a positive integer, else 400), by
 * default and at most `CANDIDATE_LIMIT` (SPEC §5 `candidateLimit`, default 50). A larger `limit`
 * is served at the cap (the first rows of the same order), not refused: a front end written for
 * the local service, where `limit` may exceed `candidateLimit`, keeps working against the edge.
 */
function rowLimit<E extends EdgeEnv>(c: EdgeContext<E>): number {
  const cap = candidateLimit(c.env);
  return Math.min(queryNumber(c, 'limit') ?? cap, cap);
}

function required(c: Context, name: string, what: string): string {
  const value = c.req.query(name);
  if (value === undefined) throw invalid(`the "${name}" query parameter must ${what}`);
  return value;
}

async function candidates<E extends EdgeEnv>(c: EdgeContext<E>): Promise<Response> {
  const as = required(c, 'as', 'name the session the prompt is for');
  const q = c.req.query('q');
  const limit = rowLimit(c);
  const titles = c.req.query('titles');
  if (titles !== undefined && titles !== '0' && titles !== '1') throw invalid(`titles must be 0 or 1, got ${JSON.stringify(titles)}`);
  const match = matchOf(c.req.query('match'));
  const { catalog } = tenantStore(c);
  const query = { as, ...agentCwd(c), ...(q !== undefined && { q }), limit, ...(titles === '1' && { titles: true }), ...(match !== undefined && { match }) };
  return json(await callCatalog(() => catalog.candidates(query)));
}

/** `match` of `/candidates` (SPEC §15.10): dsh's substring rule or word prefixes. */
function matchOf(match: string | undefined): 'substring' | 'words' | undefined {
  if (match === undefined || match === 'substring' || match === 'words') return match;
  throw invalid(`match must be "substring" or "words", got ${JSON.stringify(match)}`);
}

async function search<E extends EdgeEnv>(c: EdgeContext<E>): Promise<Response> {
  const as = required(c, 'as', 'name the session the prompt is for');
  const q = required(c, 'q', 'give the words to search for');
  const limit = rowLimit(c);
  const { catalog } = tenantStore(c);
  return json(await callCatalog(() => catalog.search({ as, ...agentCwd(c), q, limit })));
}

/** `cwd=` of `/candidates` and `/search`: the agent's cwd, when the caller gives it (the edge client does, SPEC §17.9). */
function agentCwd(c: Context): { cwd?: string } {
  const cwd = c.req.query('cwd');
  return cwd === undefined ? {} : { cwd };
}

/** The request body, read as it streams in and refused once past {@link MAX_BODY_BYTES} (a body without a length too). */
async function readBoundedBody(request: Request): Promise<Uint8Array> {
  const tooLarge = () => new HttpError(413, 'REQUEST_TOO_LARGE', `the body is larger than ${MAX_BODY_BYTES} bytes`);
  if (Number(request.headers.get('content-length')) > MAX_BODY_BYTES) throw tooLarge();
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  for (let read = 0; ; ) {
    const { done, value } = await reader.read();
    if (done) return concat(chunks);
    read += value.byteLength;
    if (read > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw tooLarge();
    }
    chunks.push(value);
  }
}

/** The request body as JSON, at most {@link MAX_BODY_BYTES}. */
async function readJsonBody(request: Request): Promise<unknown> {
  const bytes = await readBoundedBody(request);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw invalid('the body is not UTF-8');
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw invalid(`the body is not JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The user message of a `POST /prepare` body: `{ text }` or `{ message }`. */
function userMessage(body: Record<string, unknown>): UserMessage {
  const { text, message } = body;
  if ((text === undefined) === (message === undefined)) throw invalid('the body needs exactly one of "text" (a prompt) or "message" (a user message)');
  if (text !== undefined) {
    if (typeof text !== 'string') throw invalid(`"text" must be a string, got ${JSON.stringify(text)}`);
    return { id: crypto.randomUUID(), role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } };
  }
  if (typeof message !== 'object' || message === null || Array.isArray(message) || !Array.isArray((message as UserMessage).content)) {
    throw invalid('"message" must be a user message { id, role: "user", content: [...], source }');
  }
  return message as UserMessage;
}

/**
 * `POST /prepare`: mentions parsed first (a malformed one fails before anything is read), the
 * catalog asked where the cited sessions are, then one R2 get per cited session (SPEC §17.5).
 */
async function prepare<E extends EdgeEnv>(c: EdgeContext<E>): Promise<Response> {
  const body = await readJsonBody(c.req.raw);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the body must be a JSON object { "as", "text" | "message" }');
  const { as } = body as Record<string, unknown>;
  if (typeof as !== 'string' || as === '') throw invalid(`"as" must name the session the prompt is for, got ${JSON.stringify(as) ?? 'nothing'}`);
  const message = userMessage(body as Record<string, unknown>);
  const config = serviceConfig(c.env);
  const cited = new Set<string>();
  for (const block of message.content) {
    if (block?.type === 'text' && typeof block.text === 'string') for (const reference of parseSessionReferenceText(block.text).references) cited.add(reference.sessionId);
  }
  cited.delete(as);
  // More than maxReferences distinct sessions is refused by prepare before any read: look up no more.
  const maxReferences = config.maxReferences ?? DEFAULT_SESSION_REFERENCE_CONFIG.maxReferences;
  const ids = [as, ...[...cited].slice(0, maxReferences)];
  const { catalog, prefix } = tenantStore(c);
  const located = await callCatalog(() => catalog.locate(ids));
  // A cited id the catalog does not know: a plain 404 (over the limit, prepare's own refusal comes
  // first). The agent need not be in the catalog (the session being typed in, not uploaded yet).
  const unknown = cited.size <= maxReferences ? ids.find((id, index) => index > 0 && located[index] === undefined) : undefined;
  if (unknown !== undefined) throw unknownSession(unknown);
  const rows = new Map(located.flatMap((row) => (row === undefined ? [] : [[row.sessionId, row] as const])));
  const sessionQuery = citedSessionQuery({ bucket: bucketOf(c.env), catalog, prefix, ...logLimits(c.env) }, rows);
  const refs = createSessionReferences({ sessionQuery, config });
  const agent = agentOf(as, (body as Record<string, unknown>).cwd, located[0]);
  const composed = await refs.referenceUserMessage(agent, message, c.req.raw.signal);
  return json({ message: composed, metadata: composed.envelope?.contexts[0]?.metadata ?? null });
}

/**
 * The agent of `POST /prepare`: `as`, with the body's `cwd` when it has one (a string; `''` for an
 * agent without a cwd: the edge client always sends it), else the cwd of `as`'s row, else none.
 */
function agentOf(as: string, cwd: unknown, own: CatalogRow | undefined): TargetAgent {
  if (cwd !== undefined && typeof cwd !== 'string') throw invalid(`"cwd" must be a string, got ${JSON.stringify(cwd)}`);
  const chosen = cwd ?? own?.cwd;
  return typeof chosen === 'string' && chosen !== '' ? { id: as, cwd: chosen } : { id: as };
}

/** The tenant-relative key of a `/sessions/{path}` request, from its percent-encoded path. */
function keyOf<E extends EdgeEnv>(c: EdgeContext<E>, prefix: string): string {
  const route = routePath(c).split('/');
  const raw = new URL(c.req.url).pathname.split('/');
  // The route's segments before `*` are the path's own: the rest is {path}, still encoded.
  return sessionKey(raw.slice(route.length - 1).join('/'), prefix);
}

async function putSession<E extends EdgeEnv>(c: EdgeContext<E>): Promise<Response> {
  const { catalog, prefix } = tenantStore(c);
  const key = keyOf(c, prefix);
  const max = settingNumber(c.env, 'MAX_UPLOAD_BYTES') ?? DEFAULT_MAX_UPLOAD_BYTES;
  return json(await storeLog(c.req.raw, bucketOf(c.env), catalog, prefix, key, max, logLimits(c.env).maxLogBytes));
}

async function deleteSession<E extends EdgeEnv>(c: EdgeContext<E>): Promise<Response> {
  const { catalog, prefix } = tenantStore(c);
  const key = keyOf(c, prefix);
  const bucket = bucketOf(c.env);
  const existed = (await bucket.head(prefix + key)) !== null;
  await bucket.delete(prefix + key);
  await callCatalog(() => catalog.removeObject(key));
  // A PUT of the key that landed after the delete (and was indexed before the removal) keeps its
  // object: the catalog follows the bucket's final state, so that object is indexed again.
  if ((await bucket.head(prefix + key)) !== null) {
    await callCatalog(() => catalog.indexObject(prefix, key, logLimits(c.env))).catch((error: unknown) => {
      console.warn(`dsh-session-reference edge: re-indexing ${JSON.stringify(key)} after a racing PUT failed (reconcile repairs it)`, error);
    });
  }
  if (!existed) throw new HttpError(404, 'SESSION_REFERENCE_NOT_FOUND', `no log at ${JSON.stringify(key)}`);
  return json({ key });
}

async function listRows<E extends EdgeEnv>(c: EdgeContext<E>): Promise<Response> {
  const cursor = c.req.query('cursor');
  const limit = Math.min(queryNumber(c, 'limit') ?? MAX_ROWS_PAGE, MAX_ROWS_PAGE);
  const { catalog } = tenantStore(c);
  const page = await callCatalog(() => catalog.rows(cursor === '' ? undefined : cursor, limit));
  const rows = page.rows.map(({ key, sessionId, etag, size, uploaded }) => ({ key, sessionId, etag, size, uploaded }));
  return json(page.cursor === undefined ? { rows } : { rows, cursor: page.cursor });
}

async function reconcile<E extends EdgeEnv>(c: EdgeContext<E>): Promise<Response> {
  const { catalog, prefix } = tenantStore(c);
  return json(await reconcileTenant(catalog, prefix, c.env));
}
