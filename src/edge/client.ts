/**
 * Entry `dsh-session-reference/edge/client` (SPEC §17.9): the edge service (SPEC §17.4) seen from a
 * front end, with the local service's own method names, arguments, shapes and error codes, so an
 * app swaps `createSessionReferences(...)` for `createEdgeClient(...)` without other changes and
 * hands `client.listCandidates` to the composer's `suggest.fetch` (SPEC §15.9). Web APIs only
 * (`fetch`, `Response`, `AbortController`, `TextDecoder`): every runtime of SPEC §1.3.
 * @module dsh-session-reference/edge/client
 */
import { checkSignal, raceAbort, throwIfAborted } from '../abort.js';
import { copyCallerData, readCallerOptions } from '../caller-data.js';
import type { SessionCandidate } from '../candidates.js';
import { composeMessage, MY_REQUEST_SEPARATOR, readMessage } from '../compose.js';
import { isPositiveSafeInteger } from '../config.js';
import { argumentError, check, describeValue, fail, SESSION_REFERENCE_ERROR_CODES, SessionReferenceError, type ErrorCodeInput, type SessionReferenceErrorCode } from '../errors.js';
import { isNonEmptyString, readAgent, type AgentCopy } from '../host.js';
import { formatSessionReferenceMention } from '../mention.js';
import type { SessionSearchHit, SessionSearchSnippet } from '../search/search.js';
import { guarded, normalizeReferences, parseContentMentions, readReferences, type PreparedSessionReferences, type SessionReferences } from '../service.js';
import type { ContentBlock, HookContext, UserMessage } from '../types.js';

export type { SessionCandidate, SessionSearchHit, SessionSearchSnippet, PreparedSessionReferences };

/** Options of {@link createEdgeClient}. */
export interface EdgeClientOptions {
  /**
   * The service's base URL, `http:` or `https:`: the routes are resolved under it, so a service
   * mounted under a path prefix works (`https://app.example.com/refs` → `…/refs/candidates`). No
   * user name or password (a secret never goes in a URL), no query, no fragment.
   */
  url: string | URL;
  /** A bearer token sent as `Authorization: Bearer <token>` (SPEC §17.3): visible ASCII, no spaces. */
  token?: string | undefined;
  /**
   * Called before every request for the token to send (a short-lived token refreshed by the app);
   * resolves to the token, or `undefined`/`null` to send none. Excludes `token`. Given the call's
   * abort signal. A throw or a value that is not a token rejects the call with
   * `SESSION_REFERENCE_READ_FAILED` (the token itself is never in a message).
   */
  getToken?: ((signal: AbortSignal) => string | null | undefined | Promise<string | null | undefined>) | undefined;
  /** The `fetch` to use; default the runtime's global `fetch`. Called as `fetch(url, init)`. */
  fetch?: ((input: string, init: RequestInit) => Promise<Response>) | undefined;
  /** `listCandidates` also matches titles (`titles=1`, SPEC §6.7), as `config.matchTitles` does locally. Default `false`. */
  matchTitles?: boolean | undefined;
  /** `'words'`: `listCandidates` matches word prefixes (`match=words`, SPEC §15.10), as `config.candidateMatch` does locally. Default `'substring'`. */
  candidateMatch?: 'substring' | 'words' | undefined;
  /** Largest response body read, in bytes; a longer one is `SESSION_REFERENCE_READ_FAILED`. Default {@link EDGE_CLIENT_MAX_RESPONSE_BYTES}. */
  maxResponseBytes?: number | undefined;
}

/**
 * The calls of the local service (`SessionReferences`, SPEC §6, §7, §9.5, §16.2) over the edge
 * service's routes (SPEC §17.4). Each method works detached from the client (`const { listCandidates } = client`).
 */
export type EdgeClient = Pick<SessionReferences, 'listCandidates' | 'searchSessions' | 'referenceUserMessage' | 'prepare'>;

/** Default {@link EdgeClientOptions.maxResponseBytes}: 64 MiB. */
export const EDGE_CLIENT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * What a refused request carries as the `cause` of its {@link SessionReferenceError}: the HTTP
 * status, and the server's `code` and `message` when its body had them (`UNAUTHENTICATED`,
 * `ROUTE_NOT_FOUND`, …, or a `SESSION_REFERENCE_*` code).
 */
export interface EdgeResponseCause {
  status: number;
  code?: string | undefined;
  message?: string | undefined;
}

/** The id of the message `prepare` sends: only its context is used, never the message. */
const PREPARE_MESSAGE_ID = 'dsh-session-reference-edge-client-prepare';

/** A token as it can stand in an `Authorization` header: visible ASCII, no spaces. */
const TOKEN = /^[\x21-\x7e]+$/;

/**
 * A client of the edge service (SPEC §17.9) that a front end uses in place of the local service:
 *
 * - `listCandidates(agent, query?, limit?, signal?)` → `GET /candidates?as=&q=&limit=` (`&titles=1`
 *   with `matchTitles`, `&match=words` with `candidateMatch: 'words'`): `SessionCandidate[]` (SPEC §6.5); `limit` omitted → the service's
 *   `CANDIDATE_LIMIT`. Hand it to the editor: `suggest: { fetch: (query, signal) =>
 *   client.listCandidates(agent, query, undefined, signal) }`.
 * - `searchSessions(agent, query, { limit?, signal? })` → `GET /search?as=&q=&limit=`: `SessionSearchHit[]` (SPEC §16.2).
 * - `referenceUserMessage(agent, message, signal?)` → `POST /prepare { as, message }`: the composed
 *   message (SPEC §9.4). A message without mentions is composed here, with no request (as locally).
 * - `prepare(agent, content, references, signal?)` → `POST /prepare` of a message holding one
 *   canonical mention per distinct reference: `{ content, context? }` (SPEC §7.4), `content` a copy
 *   of the caller's, `context` the service's HookContext. No references: no request.
 *
 * Arguments are read once and checked here exactly as the local service checks them (same codes
 * and messages; `agent.id` is `as`, the service ranks by the cwd it holds for that session), before
 * any request. `TOO_MANY` is the service's to decide (its `MAX_REFERENCES`).
 *
 * Answers map back to the local service's errors:
 * - an error body `{ code, message }` with a `SESSION_REFERENCE_*` code → that code and the
 *   server's message as they are (a `cause: { code, message }` in the body → an error as `cause`);
 * - any other refusal by its status: 401 and 403 (the token is missing, expired or refused; the
 *   app's setup, not its arguments) → `SESSION_REFERENCE_INVALID_CONFIG`; 404 and 405 (no such
 *   route: a wrong `url`) → `SESSION_REFERENCE_INVALID_CONFIG`; other 4xx →
 *   `SESSION_REFERENCE_INVALID_ARGUMENT`; 499 → `SESSION_REFERENCE_CANCELLED`; 429, 5xx and
 *   anything else → `SESSION_REFERENCE_READ_FAILED`. The message names the route, status and the
 *   server's code and message; `cause` is an {@link EdgeResponseCause};
 * - a network failure, a body that is not JSON (or over `maxResponseBytes`), or a JSON answer of
 *   the wrong shape → `SESSION_REFERENCE_READ_FAILED` (cause kept);
 * - an abort of the call's `signal` → `SESSION_REFERENCE_CANCELLED` (cause `signal.reason`) at
 *   once, the request itself aborted; a late answer is ignored.
 * @example
 * const client = createEdgeClient({ url: 'https://refs.example.com', getToken: () => session.accessToken });
 * const rows = await client.listCandidates({ id: sessionId }, 'schema');
 * const message = await client.referenceUserMessage({ id: sessionId }, userMessage);
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` for options that are not an
 * object, an unknown key, a `url` that is not an absolute `http:`/`https:` URL without
 * credentials, query or fragment, both `token` and `getToken`, a `token` that is not visible ASCII,
 * a `getToken` or `fetch` that is not a function, a `matchTitles` that is not a boolean, a
 * `candidateMatch` other than `'substring'` or `'words'`, or a
 * `maxResponseBytes` that is not a positive safe integer.
 */
export function createEdgeClient(options: EdgeClientOptions): EdgeClient {
  try {
    return clientOf(readOptions(options));
  } catch (error) {
    throw argumentError(error, 'INVALID_CONFIG');
  }
}

/** The checked options. */
interface ClientSetup {
  base: URL;
  token: string | undefined;
  getToken: EdgeClientOptions['getToken'];
  fetch: (input: string, init: RequestInit) => Promise<Response>;
  matchTitles: boolean;
  candidateMatch: 'substring' | 'words';
  maxResponseBytes: number;
}

const OPTION_KEYS = ['url', 'token', 'getToken', 'fetch', 'matchTitles', 'candidateMatch', 'maxResponseBytes'];

function readOptions(given: unknown): ClientSetup {
  const options = readCallerOptions(given, 'options', 'INVALID_CONFIG');
  check(options !== undefined, 'INVALID_CONFIG', 'options must be an object { url, token? | getToken?, fetch? }', given);
  const [unknown] = Object.keys(options).filter((key) => !OPTION_KEYS.includes(key));
  check(unknown === undefined, 'INVALID_CONFIG', 'unknown option', unknown);
  const { url, token, getToken, fetch: fetchOption, matchTitles = false, candidateMatch = 'substring', maxResponseBytes = EDGE_CLIENT_MAX_RESPONSE_BYTES } = options;
  // The token never goes into a message: only what is wrong with it.
  if (token !== undefined && (typeof token !== 'string' || !TOKEN.test(token))) throw fail('INVALID_CONFIG', 'token must be a string of visible ASCII characters without spaces (its value is not shown)');
  check(token === undefined || getToken === undefined, 'INVALID_CONFIG', 'give token or getToken, not both', 'both');
  check(getToken === undefined || typeof getToken === 'function', 'INVALID_CONFIG', 'getToken must be a function', getToken);
  check(fetchOption === undefined || typeof fetchOption === 'function', 'INVALID_CONFIG', 'fetch must be a function', fetchOption);
  check(typeof matchTitles === 'boolean', 'INVALID_CONFIG', 'matchTitles must be a boolean', matchTitles);
  check(candidateMatch === 'substring' || candidateMatch === 'words', 'INVALID_CONFIG', "candidateMatch must be 'substring' or 'words'", candidateMatch);
  check(isPositiveSafeInteger(maxResponseBytes), 'INVALID_CONFIG', 'maxResponseBytes must be a positive safe integer (bytes)', maxResponseBytes);
  const call = fetchOption as ClientSetup['fetch'] | undefined;
  return {
    base: baseUrl(url),
    token,
    getToken: getToken as EdgeClientOptions['getToken'],
    // Called with the global as `this`: a `window.fetch` handed over unbound still works.
    fetch: call === undefined ? (input, init) => fetch(input, init) : (input, init) => call.call(globalThis, input, init),
    matchTitles,
    candidateMatch,
    maxResponseBytes,
  };
}

/** The base URL, ending in `/` so that routes resolve under its path. */
function baseUrl(url: unknown): URL {
  let parsed: URL | undefined;
  try {
    parsed = typeof url === 'string' || url instanceof URL ? new URL(url) : undefined;
  } catch {
    parsed = undefined;
  }
  check(parsed !== undefined && (parsed.protocol === 'https:' || parsed.protocol === 'http:'), 'INVALID_CONFIG', 'url must be an absolute http: or https: URL', String(url));
  // Credentials are not shown: a secret never goes into a message either.
  if (parsed.username !== '' || parsed.password !== '') throw fail('INVALID_CONFIG', 'url must not carry a user name or password: give the token as token or getToken');
  check(parsed.search === '' && parsed.hash === '', 'INVALID_CONFIG', 'url must have no query or fragment', parsed.href);
  if (!parsed.pathname.endsWith('/')) parsed.pathname += '/';
  return parsed;
}

/**
 * `as` and `cwd` of every route: the agent's id, and its cwd when it is a non-empty string, else
 * `''` (an agent without one), so that the service ranks by the cwd the caller has, as the local
 * service does (SPEC §6.3), whether or not the session is in the catalog yet.
 */
function agentParams({ id, cwd }: AgentCopy): { as: string; cwd: string } {
  return { as: id, cwd: isNonEmptyString(cwd) ? cwd : '' };
}

function clientOf(setup: ClientSetup): EdgeClient {
  return Object.freeze({
    listCandidates: guarded((agent: unknown, query: unknown, limit: unknown, signal: unknown) => {
      const own = readAgent(agent);
      check(query == null || typeof query === 'string', 'INVALID_ARGUMENT', 'query must be a string', query);
      check(limit == null || isPositiveSafeInteger(limit), 'INVALID_ARGUMENT', 'limit must be a positive safe integer', limit);
      const params: Record<string, string> = { ...agentParams(own) };
      if (query) params.q = query;
      if (limit != null) params.limit = String(limit);
      if (setup.matchTitles) params.titles = '1';
      if (setup.candidateMatch === 'words') params.match = 'words';
      return request(setup, 'GET', 'candidates', params, undefined, checkSignal(signal), readCandidates);
    }),
    searchSessions: guarded((agent: unknown, query: unknown, optionsInput: unknown) => {
      const own = readAgent(agent);
      check(optionsInput === undefined || (typeof optionsInput === 'object' && optionsInput !== null), 'INVALID_ARGUMENT', 'options must be an object { limit?, signal? }', optionsInput);
      const { limit, signal, ...rest } = readCallerOptions(optionsInput, 'options') ?? {};
      check(typeof query === 'string', 'INVALID_ARGUMENT', 'query must be a string', query);
      const [unknown] = Object.keys(rest);
      check(unknown === undefined, 'INVALID_ARGUMENT', 'unknown search option', unknown);
      check(limit == null || isPositiveSafeInteger(limit), 'INVALID_ARGUMENT', 'limit must be a positive safe integer', limit);
      const params: Record<string, string> = { ...agentParams(own), q: query };
      if (limit != null) params.limit = String(limit);
      return request(setup, 'GET', 'search', params, undefined, checkSignal(signal), readHits);
    }),
    referenceUserMessage: guarded(async (agent: unknown, messageInput: unknown, signalInput: unknown) => {
      const own = readAgent(agent);
      const { id } = own;
      const message = readMessage(messageInput);
      const signal = checkSignal(signalInput);
      // Malformed mentions fail here, before any request; a message without any is composed here.
      const { content, references, mentions } = parseContentMentions(message.content);
      normalizeReferences(references, id, Infinity);
      throwIfAborted(signal);
      if (references.length === 0) return composeMessage({ ...message, content }, undefined, mentions);
      return request(setup, 'POST', 'prepare', undefined, { ...agentParams(own), message }, signal, readComposed);
    }),
    prepare: guarded(async (agent: unknown, contentInput: unknown, referencesInput: unknown, signalInput: unknown) => {
      const own = readAgent(agent);
      const { id } = own;
      const content = copyCallerData(contentInput, 'content');
      check(Array.isArray(content), 'INVALID_ARGUMENT', 'content must be an array', content);
      const references = readReferences(referencesInput);
      const signal = checkSignal(signalInput);
      // The service's MAX_REFERENCES decides TOO_MANY.
      const sources = normalizeReferences(references, id, Infinity);
      throwIfAborted(signal);
      const prepared: PreparedSessionReferences = { content: content as ContentBlock[] };
      if (sources.length === 0) return prepared;
      // One canonical mention per distinct reference, in order: the service parses back exactly these ids and labels.
      const text = sources.map((source) => formatSessionReferenceMention(source)).join(' ');
      const message: UserMessage = { id: PREPARE_MESSAGE_ID, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } };
      prepared.context = await request(setup, 'POST', 'prepare', undefined, { ...agentParams(own), message }, signal, (body, what) => contextOf(readComposed(body, what), what));
      return prepared;
    }),
  }) as EdgeClient;
}

/**
 * One request and its answer read by `read` (which throws `READ_FAILED` for a wrong shape). The
 * fetch gets a signal of ours, aborted when the call settles: the caller's abort (any signal of
 * SPEC §10.2, not only an `AbortSignal`) rejects at once and cancels the request.
 */
async function request<R>(
  setup: ClientSetup,
  method: 'GET' | 'POST',
  route: string,
  params: Record<string, string> | undefined,
  body: unknown,
  signal: AbortSignal | undefined,
  read: (body: unknown, what: string) => R,
): Promise<R> {
  throwIfAborted(signal);
  const url = new URL(route, setup.base);
  if (params) url.search = new URLSearchParams(params).toString();
  const what = `${method} /${route}`;
  const controller = new AbortController();
  try {
    return await raceAbort(exchange(setup, url.href, method, body, controller.signal, what).then((answer) => readAnswer(answer, what, read)), signal);
  } finally {
    controller.abort();
  }
}

/** The status and the body's bytes of one request; any failure on the way is `READ_FAILED`. */
async function exchange(setup: ClientSetup, url: string, method: string, body: unknown, signal: AbortSignal, what: string): Promise<{ status: number; text: string }> {
  const headers: Record<string, string> = { accept: 'application/json' };
  const token = await tokenOf(setup, signal);
  if (token !== undefined) headers.authorization = `Bearer ${token}`;
  const init: RequestInit = { method, headers, signal };
  if (body !== undefined) {
    headers['content-type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let response: Response;
  try {
    response = await setup.fetch(url, init);
  } catch (error) {
    throw fail('READ_FAILED', `${what} failed: ${describeValue(error)}`, error);
  }
  const answer = Object(response) as Partial<Response>;
  check(Number.isSafeInteger(answer.status) && typeof answer.headers?.get === 'function', 'READ_FAILED', `${what}: fetch must resolve to a Response`, response);
  return { status: response.status, text: await readBody(response, setup.maxResponseBytes, what) };
}

/** The token to send, or none. */
async function tokenOf(setup: ClientSetup, signal: AbortSignal): Promise<string | undefined> {
  if (setup.getToken === undefined) return setup.token;
  let token: unknown;
  try {
    token = await setup.getToken(signal);
  } catch (error) {
    throw fail('READ_FAILED', `getToken() failed: ${describeValue(error)}`, error);
  }
  if (token == null) return undefined;
  if (typeof token !== 'string' || !TOKEN.test(token)) throw fail('READ_FAILED', 'getToken() must resolve to a string of visible ASCII characters without spaces, or nothing (the value is not shown)');
  return token;
}

/** The body as strict UTF-8 text, read up to `max` bytes. */
async function readBody(response: Response, max: number, what: string): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  const tooLong = () => fail('READ_FAILED', `${what} answered a body over ${max} bytes`);
  if (declared > max) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLong();
  }
  const chunks: Uint8Array[] = [];
  let length = 0;
  try {
    const reader = response.body?.getReader();
    for (let part = await reader?.read(); part !== undefined && !part.done; part = await reader!.read()) {
      length += part.value.byteLength;
      if (length > max) {
        await reader!.cancel().catch(() => undefined);
        throw tooLong();
      }
      chunks.push(part.value);
    }
  } catch (error) {
    if (error instanceof SessionReferenceError) throw error;
    throw fail('READ_FAILED', `${what}: reading the answer failed: ${describeValue(error)}`, error);
  }
  const bytes = new Uint8Array(length);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch (error) {
    throw fail('READ_FAILED', `${what} answered a body that is not UTF-8`, error);
  }
}

/** A success read by `read`; a refusal mapped back to the error the local service would give. */
function readAnswer<R>({ status, text }: { status: number; text: string }, what: string, read: (body: unknown, what: string) => R): R {
  let body: unknown;
  let json = true;
  try {
    body = JSON.parse(text) as unknown;
  } catch (error) {
    json = false;
    if (status >= 200 && status < 300) throw fail('READ_FAILED', `${what} answered a body that is not JSON: ${describeValue(text)}`, error);
  }
  if (status >= 200 && status < 300) {
    try {
      return read(body, what);
    } catch (error) {
      throw argumentError(error, 'READ_FAILED');
    }
  }
  throw refusalError(status, json ? body : undefined, what);
}

/**
 * The error the client rejects with for a refused request (the mapping of {@link createEdgeClient}),
 * for code of an app that calls other routes of the service itself (the CLI's `push` does).
 * @param status The HTTP status (not 2xx).
 * @param body The answer's body parsed as JSON, or `undefined` when it was not JSON.
 * @param what The request, for the message (`GET /sessions`).
 * @returns A `SessionReferenceError`: the body's own `SESSION_REFERENCE_*` code and message, else
 * the status's code with an {@link EdgeResponseCause} as `cause`.
 */
export function refusalError(status: number, body: unknown, what: string): SessionReferenceError {
  const { code, message, cause } = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const said = typeof code === 'string' && typeof message === 'string';
  if (said && isErrorCode(code)) {
    const { code: causeCode, message: causeMessage } = (typeof cause === 'object' && cause !== null ? cause : {}) as Record<string, unknown>;
    const inner = isErrorCode(causeCode) && typeof causeMessage === 'string' ? new SessionReferenceError(causeCode, causeMessage) : undefined;
    return new SessionReferenceError(code, message, inner && { cause: inner });
  }
  const reason: EdgeResponseCause = said ? { status, code, message } : { status };
  const detail = said ? `: ${code}: ${message}` : '';
  return fail(codeOfStatus(status), `${what} answered ${status}${detail}`.slice(0, 1000), reason);
}

function isErrorCode(code: unknown): code is SessionReferenceErrorCode {
  return SESSION_REFERENCE_ERROR_CODES.includes(code as SessionReferenceErrorCode);
}

/** The code of a refusal without a `SESSION_REFERENCE_*` code in its body (see {@link createEdgeClient}). */
function codeOfStatus(status: number): ErrorCodeInput {
  if (status === 401 || status === 403 || status === 404 || status === 405) return 'INVALID_CONFIG';
  if (status === 499) return 'CANCELLED';
  if (status >= 400 && status < 500 && status !== 408 && status !== 429) return 'INVALID_ARGUMENT';
  return 'READ_FAILED';
}

// ---------------------------------------------------------------------------------------------
// Answers: checked, and copied into the shapes the local service returns (keys in its order)

function shape(ok: unknown, what: string, expected: string, value: unknown): asserts ok {
  check(ok, 'READ_FAILED', `${what} answered ${expected}`, value);
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

/** A §6.5 row, keys in the local service's order. */
function candidateOf(row: unknown, what: string): SessionCandidate {
  const { sessionId, label, cwd, createdAt, mention } = Object(row) as Record<string, unknown>;
  shape(
    isString(sessionId) && isString(label) && (cwd === undefined || isString(cwd)) && Number.isFinite(createdAt) && isString(mention),
    what,
    'a row that is not { sessionId, label, cwd?, createdAt, mention }',
    row,
  );
  return { sessionId, label, ...(cwd !== undefined && { cwd }), createdAt: createdAt as number, mention };
}

function readCandidates(body: unknown, what: string): SessionCandidate[] {
  shape(Array.isArray(body), what, 'something other than an array of candidates', body);
  return body.map((row) => candidateOf(row, what));
}

function snippetOf(snippet: unknown, what: string): SessionSearchSnippet {
  const { role, seq, text, highlights } = Object(snippet) as Record<string, unknown>;
  const ranges = Array.isArray(highlights) && highlights.every((range) => Array.isArray(range) && range.length === 2 && range.every((offset) => Number.isSafeInteger(offset)));
  shape(
    (role === 'user' || role === 'assistant' || role === 'title') && (seq === undefined || Number.isFinite(seq)) && isString(text) && ranges,
    what,
    'a snippet that is not { role, seq?, text, highlights }',
    snippet,
  );
  return { role, ...(seq !== undefined && { seq: seq as number }), text, highlights: (highlights as Array<[number, number]>).map(([start, end]) => [start, end]) };
}

function readHits(body: unknown, what: string): SessionSearchHit[] {
  shape(Array.isArray(body), what, 'something other than an array of hits', body);
  return body.map((hit) => {
    const { score, snippets } = Object(hit) as Record<string, unknown>;
    shape(Number.isFinite(score) && Array.isArray(snippets), what, 'a hit without a score and snippets', hit);
    return { ...candidateOf(hit, what), score: score as number, snippets: snippets.map((snippet) => snippetOf(snippet, what)) };
  });
}

/** The composed message of a `/prepare` answer `{ message, metadata }`: a user message with its envelope. */
function readComposed(body: unknown, what: string): UserMessage {
  const { message } = Object(body) as Record<string, unknown>;
  const { role, content, envelope } = Object(message) as Record<string, unknown>;
  const { contexts } = Object(envelope) as Record<string, unknown>;
  shape(role === 'user' && Array.isArray(content) && Array.isArray(contexts) && contexts.length === 1, what, 'something other than { message: a composed user message }', body);
  return message as UserMessage;
}

/**
 * The HookContext the service composed into `message` (SPEC §9.4): its text is the first block
 * less the separator, its source, placement and metadata the envelope's.
 */
function contextOf(message: UserMessage, what: string): HookContext {
  const first = message.content[0] as { type?: unknown; text?: unknown } | undefined;
  const { source, placement, metadata } = Object(message.envelope!.contexts[0]) as Record<string, unknown>;
  const text = first?.type === 'text' && isString(first.text) && first.text.endsWith(MY_REQUEST_SEPARATOR) ? first.text.slice(0, -MY_REQUEST_SEPARATOR.length) : undefined;
  shape(
    text !== undefined && placement === 'prompt-prefix' && typeof source === 'object' && source !== null && Array.isArray(Object(metadata).references),
    what,
    'a message without the context it should carry',
    message.envelope,
  );
  return { source, placement, content: [{ type: 'text', text }], metadata } as HookContext;
}

