/**
 * The routes of the edge Worker (worker.ts): referenced prompts prepared server-side from dsh
 * session logs in an R2 bucket bound as `SESSIONS` (each object one log, `.jsonl` or multi-frame
 * `.jsonl.zstd`, under any key; the session id comes from the log's header).
 *
 *   GET  /candidates?as=ID&q=TEXT&limit=N&titles=1 → SessionCandidate[] (for `@` autocomplete;
 *        `titles=1`: `q` also matches titles, SPEC §6.7)
 *   GET  /search?as=ID&q=TEXT&limit=N → SessionSearchHit[] (sessions by what was said, SPEC §16;
 *        the index is kept in the bucket at {@link searchIndexKey}, see there)
 *   POST /prepare  { "as": ID, "text": "…" } → { message, metadata }
 *        or        { "as": ID, "message": UserMessage }
 *
 * Errors are JSON `{ code, message }` (plus `cause: { code, message }` when a library error wraps
 * another): 400 invalid input, 404 unknown session or route, 405 wrong method, 413 budget or body
 * too large, 499 cancelled, 500 bad configuration, 502 the store failed or holds a broken log.
 *
 * Configuration (`[vars]` in wrangler.toml, all optional): `MAX_REFERENCE_BYTES`,
 * `MAX_REFERENCES`, `CANDIDATE_LIMIT` (SPEC §5), `KEY_PREFIX` (read only keys under it) and
 * `MAX_LOG_BYTES` (decoded bytes one log read may pass, SPEC §11.2.1; default
 * {@link WORKER_MAX_LOG_BYTES}), `MAX_SEARCH_INDEX_BYTES` (the largest search index object loaded or
 * written; default {@link WORKER_MAX_SEARCH_INDEX_BYTES}). Numbers are read by `parsePositiveInteger` (decimal digits only),
 * as the CLI reads its flags.
 */
import {
  createSessionReferences,
  parsePositiveInteger,
  parseSessionReferenceText,
  SessionReferenceError,
  type SessionReferenceConfig,
  type SessionReferences,
  type TargetAgent,
  type UserMessage,
} from 'dsh-session-reference';
import { createObjectStoreSessionQuery, type ObjectStoreBucket } from 'dsh-session-reference/store';

/**
 * The bucket the Worker reads logs from and keeps its search index in: {@link ObjectStoreBucket}
 * plus `put`, for the index only. An R2 bucket binding satisfies it as it is.
 */
export interface SessionsBucket extends ObjectStoreBucket {
  put(key: string, value: Uint8Array): Promise<unknown>;
}

/** The Worker's bindings. */
export interface Env {
  SESSIONS: SessionsBucket;
  MAX_REFERENCE_BYTES?: string | number;
  MAX_REFERENCES?: string | number;
  CANDIDATE_LIMIT?: string | number;
  KEY_PREFIX?: string;
  MAX_LOG_BYTES?: string | number;
  MAX_SEARCH_INDEX_BYTES?: string | number;
}

/**
 * The Worker's default `maxLogBytes` (SPEC §11.2.1): 64 MiB of decoded log per read, where the
 * library's own default is 4 GiB. Memory does not depend on it (logs are streamed: a Worker has
 * 128 MB), CPU time does: reading a log costs CPU in proportion to its decoded bytes, and the worst
 * valid object — a 16 KB zstd frame of blank lines decodes to 512 MiB — costs about 1 s of CPU per
 * request that reads it whole at 64 MiB (bench row `store-worst`, `npm run bench -- --only
 * store-worst`), against 10 ms of CPU per request on the Workers Free plan and 30 s by default on
 * the Paid plan (up to 5 min with `limits.cpu_ms`). A log past the limit fails its read with
 * `SESSION_REFERENCE_INVALID_LOG` (its title row falls back to its id); raise `MAX_LOG_BYTES`
 * with the plan's CPU limit to cite longer logs.
 */
export const WORKER_MAX_LOG_BYTES = 64 * 1024 * 1024;

/** Largest `POST /prepare` body accepted, in bytes. */
const MAX_BODY_BYTES = 1024 * 1024;

/** HTTP status of each error code. */
const STATUS: Record<string, number> = {
  SESSION_REFERENCE_INVALID_ARGUMENT: 400,
  SESSION_REFERENCE_INVALID_REFERENCE: 400,
  SESSION_REFERENCE_SELF_REFERENCE: 400,
  SESSION_REFERENCE_TOO_MANY: 400,
  SESSION_REFERENCE_NOT_FOUND: 404,
  SESSION_REFERENCE_BUDGET_EXCEEDED: 413,
  SESSION_REFERENCE_CANCELLED: 499,
  SESSION_REFERENCE_INVALID_CONFIG: 500,
  SESSION_REFERENCE_READ_FAILED: 502,
  SESSION_REFERENCE_INVALID_LOG: 502,
};

/** An error response of the Worker itself (routing, body limits). */
class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  });
}

function invalid(message: string): SessionReferenceError {
  return new SessionReferenceError('SESSION_REFERENCE_INVALID_ARGUMENT', message);
}

/**
 * The response for a failure. A read failure caused by an unknown session (a mention of an id
 * that is not in the bucket) answers 404 `SESSION_REFERENCE_NOT_FOUND`; other wrapped library
 * errors are reported as `cause`.
 */
function errorResponse(error: unknown): Response {
  if (error instanceof HttpError) return json({ code: error.code, message: error.message }, error.status, error.headers);
  if (!(error instanceof SessionReferenceError)) {
    return json({ code: 'INTERNAL_ERROR', message: error instanceof Error ? error.message : String(error) }, 500);
  }
  const cause = error.cause instanceof SessionReferenceError ? error.cause : undefined;
  if (cause?.code === 'SESSION_REFERENCE_NOT_FOUND') return json({ code: cause.code, message: error.message }, 404);
  const body: Record<string, unknown> = { code: error.code, message: error.message };
  if (cause) body.cause = { code: cause.code, message: cause.message };
  return json(body, STATUS[error.code] ?? 500);
}

/** An optional numeric `[vars]` entry: a number, or text read by `parsePositiveInteger` (500 `SESSION_REFERENCE_INVALID_CONFIG` otherwise). */
function configNumber(env: Env, name: keyof Env): number | undefined {
  const value = env[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value === 'number') return value;
  return parsePositiveInteger(String(value), name, 'SESSION_REFERENCE_INVALID_CONFIG');
}

function configOf(env: Env): SessionReferenceConfig {
  const config: SessionReferenceConfig = {};
  const maxReferenceBytes = configNumber(env, 'MAX_REFERENCE_BYTES');
  const maxReferences = configNumber(env, 'MAX_REFERENCES');
  const candidateLimit = configNumber(env, 'CANDIDATE_LIMIT');
  if (maxReferenceBytes !== undefined) config.maxReferenceBytes = maxReferenceBytes;
  if (maxReferences !== undefined) config.maxReferences = maxReferences;
  if (candidateLimit !== undefined) config.candidateLimit = candidateLimit;
  return config;
}

/**
 * The Worker's default `MAX_SEARCH_INDEX_BYTES`: the largest search index object it loads or
 * writes, 32 MiB, a quarter of a Worker's 128 MB of memory (the loaded bytes and the index built
 * from them are both held). A larger object, whoever wrote it, is ignored and the index rebuilt
 * from the logs, as for a damaged one; a larger rebuilt index answers its search but is not written
 * back (logged).
 */
export const WORKER_MAX_SEARCH_INDEX_BYTES = 32 * 1024 * 1024;

/** The name of the search index object, under `KEY_PREFIX` (see {@link searchIndexKey}). */
export const SEARCH_INDEX_NAME = '.dsh-session-reference/search-index';

/**
 * The key of the search index object (SPEC §16.4): `KEY_PREFIX` + {@link SEARCH_INDEX_NAME}, beside
 * the logs it indexes. Logs are told apart by their bytes, not their keys (any key under the
 * prefix is read as a log), so the Worker's listing leaves out exactly this key
 * ({@link withoutSearchIndex}); no log can be stored there.
 */
export function searchIndexKey(env: Env): string {
  return `${env.KEY_PREFIX ?? ''}${SEARCH_INDEX_NAME}`;
}

/** `bucket` with the search index object left out of its listings: the index is never read as a log. */
function withoutSearchIndex(bucket: ObjectStoreBucket, indexKey: string): ObjectStoreBucket {
  return {
    async list(options) {
      const page = await bucket.list(options);
      const objects = page.objects.filter((object) => object.key !== indexKey);
      return page.cursor === undefined ? { objects, truncated: page.truncated } : { objects, truncated: page.truncated, cursor: page.cursor };
    },
    get: (key, options) => bucket.get(key, options),
  };
}

/** The service over this request's view of the bucket (one query instance per request). */
function open(env: Env, config: SessionReferenceConfig = {}) {
  if (typeof env.SESSIONS !== 'object' || env.SESSIONS === null) {
    throw new SessionReferenceError('SESSION_REFERENCE_INVALID_CONFIG', 'the Worker has no R2 bucket bound as SESSIONS');
  }
  const prefix = env.KEY_PREFIX;
  const maxLogBytes = configNumber(env, 'MAX_LOG_BYTES') ?? WORKER_MAX_LOG_BYTES;
  const bucket = withoutSearchIndex(env.SESSIONS, searchIndexKey(env));
  const sessionQuery = createObjectStoreSessionQuery(bucket, prefix ? { prefix, maxLogBytes } : { maxLogBytes });
  const refs = createSessionReferences({ sessionQuery, config: { ...configOf(env), ...config } });
  return { sessionQuery, refs };
}

/** The target agent: the session `as` names, its header read through the listing (404 when unknown). */
async function targetAgent(
  sessionQuery: ReturnType<typeof open>['sessionQuery'],
  as: unknown,
  signal: AbortSignal,
): Promise<TargetAgent> {
  if (typeof as !== 'string' || as === '') throw invalid(`"as" must name the session the prompt is for, got ${JSON.stringify(as) ?? 'nothing'}`);
  const header = await sessionQuery.readHeader(as, signal);
  const agent: TargetAgent = { id: header.id };
  if (typeof header.cwd === 'string' && header.cwd !== '') agent.cwd = header.cwd;
  return agent;
}

async function candidates(url: URL, env: Env, signal: AbortSignal): Promise<Response> {
  const as = url.searchParams.get('as');
  const query = url.searchParams.get('q') ?? undefined;
  const limit = limitOf(url);
  // `titles=1` turns on title matching (SPEC §6.7): what people type after `@` is usually a title.
  const titles = url.searchParams.get('titles');
  if (titles !== null && titles !== '0' && titles !== '1') throw invalid(`titles must be 0 or 1, got ${JSON.stringify(titles)}`);
  if (as === null) throw invalid('the "as" query parameter must name the session the prompt is for');
  const { sessionQuery, refs } = open(env, { matchTitles: titles === '1' });
  const agent = await targetAgent(sessionQuery, as, signal);
  return json(await refs.listCandidates(agent, query, limit, signal));
}

/** `limit` of a query string: absent, or read by `parsePositiveInteger` (400 otherwise). */
function limitOf(url: URL): number | undefined {
  const limitParam = url.searchParams.get('limit');
  return limitParam === null ? undefined : parsePositiveInteger(limitParam, 'limit');
}

/**
 * The stored search index, or `undefined` when there is none or it cannot be fetched: the index is
 * a cache, so the search then rebuilds it (a corrupt or foreign-version object is ignored by the
 * library itself, SPEC §16.4).
 */
async function loadSearchIndex(env: Env, key: string, max: number): Promise<Uint8Array | undefined> {
  try {
    const object = await env.SESSIONS.get(key);
    if (object === null || (object.size ?? 0) > max) return undefined;
    const bytes = new Uint8Array(await object.arrayBuffer());
    return bytes.length > max ? undefined : bytes;
  } catch {
    return undefined;
  }
}

function sameBytes(a: Uint8Array | undefined, b: Uint8Array): boolean {
  if (a === undefined || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/**
 * Writes the index back when the search changed it. A failed write is logged and does not fail the
 * search, whose answer is complete: the next request rebuilds what it lacks (as the CLI's cache).
 */
async function saveSearchIndex(env: Env, key: string, max: number, loaded: Uint8Array | undefined, refs: SessionReferences): Promise<void> {
  const bytes = await refs.exportSearchIndex();
  if (sameBytes(loaded, bytes)) return;
  if (bytes.length > max) {
    console.error(`search index not saved at ${JSON.stringify(key)}: ${bytes.length} bytes is over MAX_SEARCH_INDEX_BYTES (${max})`);
    return;
  }
  try {
    await env.SESSIONS.put(key, bytes);
  } catch (error) {
    console.error(`search index not saved at ${JSON.stringify(key)}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** `GET /search` (SPEC §16.6): the index is loaded from the bucket, searched, and written back when it changed. */
async function search(url: URL, env: Env, signal: AbortSignal): Promise<Response> {
  const as = url.searchParams.get('as');
  const query = url.searchParams.get('q');
  const limit = limitOf(url);
  if (query === null) throw invalid('the "q" query parameter must give the words to search for');
  if (as === null) throw invalid('the "as" query parameter must name the session the prompt is for');
  const key = searchIndexKey(env);
  const maxIndexObjectBytes = configNumber(env, 'MAX_SEARCH_INDEX_BYTES') ?? WORKER_MAX_SEARCH_INDEX_BYTES;
  // An aborted request reads nothing: searchSessions answers CANCELLED.
  const searchIndex = signal.aborted ? undefined : await loadSearchIndex(env, key, maxIndexObjectBytes);
  const { sessionQuery, refs } = open(env, searchIndex === undefined ? {} : { searchIndex });
  const agent = await targetAgent(sessionQuery, as, signal);
  const hits = await refs.searchSessions(agent, query, limit === undefined ? { signal } : { limit, signal });
  await saveSearchIndex(env, key, maxIndexObjectBytes, searchIndex, refs);
  return json(hits);
}

/** The request body as JSON, at most {@link MAX_BODY_BYTES}. */
async function readJsonBody(request: Request): Promise<unknown> {
  const declared = Number(request.headers.get('content-length'));
  if (declared > MAX_BODY_BYTES) throw new HttpError(413, 'REQUEST_TOO_LARGE', `the body is larger than ${MAX_BODY_BYTES} bytes`);
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.length > MAX_BODY_BYTES) throw new HttpError(413, 'REQUEST_TOO_LARGE', `the body is larger than ${MAX_BODY_BYTES} bytes`);
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

async function prepare(request: Request, env: Env, signal: AbortSignal): Promise<Response> {
  const body = await readJsonBody(request);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid('the body must be a JSON object { "as", "text" | "message" }');
  const record = body as Record<string, unknown>;
  const message = userMessage(record);
  // Malformed mentions fail before the store is read.
  for (const block of message.content) if (block.type === 'text' && typeof block.text === 'string') parseSessionReferenceText(block.text);
  const { sessionQuery, refs } = open(env);
  const agent = await targetAgent(sessionQuery, record.as, signal);
  const composed = await refs.referenceUserMessage(agent, message, signal);
  return json({ message: composed, metadata: composed.envelope?.contexts[0]?.metadata ?? null });
}

/** Routes one request; every failure becomes a JSON error response. */
export async function handleRequest(request: Request, env: Env): Promise<Response> {
  try {
    const url = new URL(request.url);
    const route = url.pathname;
    if (route === '/candidates') {
      if (request.method !== 'GET' && request.method !== 'HEAD') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${request.method} ${route}: use GET`, { allow: 'GET, HEAD' });
      return await candidates(url, env, request.signal);
    }
    if (route === '/search') {
      if (request.method !== 'GET' && request.method !== 'HEAD') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${request.method} ${route}: use GET`, { allow: 'GET, HEAD' });
      return await search(url, env, request.signal);
    }
    if (route === '/prepare') {
      if (request.method !== 'POST') throw new HttpError(405, 'METHOD_NOT_ALLOWED', `${request.method} ${route}: use POST`, { allow: 'POST' });
      return await prepare(request, env, request.signal);
    }
    throw new HttpError(404, 'ROUTE_NOT_FOUND', `no route ${request.method} ${route}: use GET /candidates, GET /search or POST /prepare`);
  } catch (error) {
    return errorResponse(error);
  }
}
