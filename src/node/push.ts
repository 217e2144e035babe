/**
 * `dsh-session-reference push` (SPEC §17.8): uploads the chosen log of every session of a dsh
 * store to the edge service, except those the service already holds with the same bytes. Node only.
 * @module
 */
import { createHash } from 'node:crypto';
import { constants, type promises as fsPromises } from 'node:fs';
import { open } from 'node:fs/promises';
import { relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { refusalError } from '../edge/client.js';
import { describeValue, fail, isInstance, type SessionReferenceError } from '../errors.js';
import { mapLimited } from '../store/limit.js';
import { listSessionLogs, type SessionLogFile } from './store.js';
import { escapeControls } from './terminal.js';

/** The environment variable `push` reads its token from (never a flag: flags show in process lists). */
export const PUSH_TOKEN_VARIABLE = 'DSH_SESSION_REFERENCE_TOKEN';

/** Uploads in flight at once (SPEC §17.8). */
export const PUSH_CONCURRENCY = 4;

/**
 * Retries of one request: attempts in all (the first included), the first backoff and the longest
 * wait, in milliseconds. A `Retry-After` longer than `maxWaitMs` is not waited for: the request
 * fails, naming the wait the service asked for.
 */
export interface PushRetry {
  attempts: number;
  baseDelayMs: number;
  maxWaitMs: number;
}

/** Default {@link PushRetry}: 5 attempts, backoff 1 s doubling (with jitter), waits of at most 60 s. */
export const PUSH_RETRY: Readonly<PushRetry> = Object.freeze({ attempts: 5, baseDelayMs: 1000, maxWaitMs: 60_000 });

/** Options of {@link pushStore}. */
export interface PushOptions {
  /** The service's base URL (checked by {@link checkServiceUrl}). */
  to: string;
  /** The dsh store's root directory. */
  root: string;
  /** The bearer token; none sends no `Authorization` (a service run with `AUTH_MODE = "none"`). */
  token?: string | undefined;
  /** List what would be uploaded, upload nothing. */
  dryRun?: boolean | undefined;
  /** Default {@link PUSH_RETRY}. */
  retry?: PushRetry | undefined;
  /** Called after each log is settled, and once before the first. */
  onProgress?: ((progress: PushProgress) => void) | undefined;
  signal?: AbortSignal | undefined;
}

/** Where a push stands: logs settled so far of `total`, and how each ended. */
export interface PushProgress {
  total: number;
  done: number;
  uploaded: number;
  unchanged: number;
  failed: number;
}

/** One log of a push. */
export interface PushedLog {
  /** The log's path relative to the store root, `/`-separated: its key in the service (SPEC §17.8). */
  key: string;
  /** The id in the log's header; absent when the header could not be read (then `status` is `failed`). */
  sessionId?: string;
  /** Bytes. */
  size: number;
  /** The MD5 of its bytes, lowercase hex (R2's etag of a single-part upload). */
  md5: string;
  /** `pending`: `--dry-run` would upload it. */
  status: 'uploaded' | 'unchanged' | 'failed' | 'pending';
  /** Why it failed: `CODE: message` (the service's refusal, or what the local read found). */
  error?: string;
  /** The stable code of `error` (`SESSION_REFERENCE_INVALID_LOG`, `SESSION_REFERENCE_READ_FAILED`, …), for scripts reading `--json`. */
  code?: string;
}

/** What {@link pushStore} did. */
export interface PushSummary {
  /** The service's base URL. */
  to: string;
  dryRun: boolean;
  uploaded: number;
  unchanged: number;
  failed: number;
  /** Logs a `--dry-run` would upload (0 otherwise). */
  pending: number;
  /** Every log, in key order. */
  logs: PushedLog[];
}

/** Raised for a `--to` or a token that cannot be used: the CLI's usage error (exit status 2). */
export class PushUsageError extends Error {}

/**
 * The service's base URL for `push`, ending in `/`: `https:`, or `http:` only to a loopback host
 * (`localhost`, `127.0.0.0/8`, `[::1]`) — the token would otherwise travel in clear; no user name
 * or password, query or fragment.
 * @throws PushUsageError naming what is wrong (never the URL's credentials).
 */
export function checkServiceUrl(to: string): URL {
  let url: URL;
  try {
    url = new URL(to);
  } catch {
    throw new PushUsageError(`--to must be an absolute URL, got ${JSON.stringify(to)}`);
  }
  if (url.username !== '' || url.password !== '') throw new PushUsageError('--to must not carry a user name or password: the token comes from ' + PUSH_TOKEN_VARIABLE);
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new PushUsageError(`--to must be an https: URL, got ${JSON.stringify(url.protocol)}`);
  if (url.protocol === 'http:' && !isLoopback(url.hostname)) throw new PushUsageError(`--to must be https: (http: only to a loopback host): the token would travel in clear to ${JSON.stringify(url.host)}`);
  if (url.search !== '' || url.hash !== '') throw new PushUsageError('--to must have no query or fragment');
  if (!url.pathname.endsWith('/')) url.pathname += '/';
  return url;
}

function isLoopback(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(hostname);
}

/**
 * Pushes the store at `root` to the service at `to` (SPEC §17.8): lists the chosen log of every
 * session directory (SPEC §12.1, `listSessionLogs`: by file name, one directory at a time, the
 * header checked locally so a malformed log costs no upload), pages through the service's `GET
 * /sessions`, and uploads with `PUT /sessions/{key}` each log whose MD5 and size differ from the service's row of that key, at most
 * {@link PUSH_CONCURRENCY} at a time. A log is read from one open file descriptor: hashed, then
 * sent as the same bytes (its size at open, `Content-Length` set), so a log dsh appends to meanwhile
 * is pushed as it was. A request answered 429 or 5xx, or failing on the network, is retried with
 * backoff (or after its `Retry-After`); other refusals fail that log at once. One log's failure
 * never stops the others: a log whose header is malformed, a directory that cannot be listed, a
 * file that cannot be read and a refused upload are each a `failed` entry of the summary (`key`
 * the log's or the directory's relative path, `error` its `CODE: message`, `code` its code).
 * @throws SessionReferenceError when the store's root cannot be listed or `GET /sessions` fails
 * (after its retries): the whole push is refused, nothing uploaded.
 */
export async function pushStore(options: PushOptions): Promise<PushSummary> {
  const base = checkServiceUrl(options.to);
  const http = new ServiceHttp(base, options.token, options.retry ?? PUSH_RETRY, options.signal);
  const files = await listSessionLogs(options.root, options.signal);
  const remote = await http.rows();
  const progress: PushProgress = { total: files.length, done: 0, uploaded: 0, unchanged: 0, failed: 0 };
  options.onProgress?.({ ...progress });
  const logs = await mapLimited(files, PUSH_CONCURRENCY, options.signal, async (file) => {
    const log = await pushLog(http, remote, options.root, file, options.dryRun === true);
    progress.done++;
    if (log.status !== 'pending') progress[log.status]++;
    options.onProgress?.({ ...progress });
    return log;
  });
  logs.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const count = (status: PushedLog['status']) => logs.filter((log) => log.status === status).length;
  return { to: base.href, dryRun: options.dryRun === true, uploaded: count('uploaded'), unchanged: count('unchanged'), failed: count('failed'), pending: count('pending'), logs };
}

/** A row of `GET /sessions`, as far as `push` needs it. */
interface RemoteRow {
  etag: string;
  size: number;
}

/** One log: hashed, compared, uploaded when needed; every failure becomes its `error`. */
async function pushLog(http: ServiceHttp, remote: ReadonlyMap<string, RemoteRow>, root: string, { path, sessionId, error }: SessionLogFile, dryRun: boolean): Promise<PushedLog> {
  const key = relative(root, path).split(sep).join('/');
  if (error !== undefined) return { key, size: 0, md5: '', status: 'failed', error: `${error.code}: ${error.message}`, code: error.code };
  const log: PushedLog = { key, sessionId, size: 0, md5: '', status: 'failed' };
  let file: fsPromises.FileHandle | undefined;
  try {
    // Non-blocking and checked after open: a log replaced by a FIFO is never waited on.
    file = await open(path, constants.O_RDONLY | constants.O_NONBLOCK).catch((error: unknown) => {
      throw fail('READ_FAILED', `cannot open ${JSON.stringify(path)}: ${describeValue(error)}`, error);
    });
    const stats = await file.stat();
    if (!stats.isFile()) throw fail('READ_FAILED', `${JSON.stringify(path)} is not a regular file`);
    log.size = stats.size;
    log.md5 = await md5Of(file, log.size, path);
    const row = remote.get(key);
    if (row !== undefined && row.size === log.size && normalEtag(row.etag) === log.md5) {
      log.status = 'unchanged';
    } else if (dryRun) {
      log.status = 'pending';
    } else {
      await http.upload(key, file, log.size, log.md5);
      log.status = 'uploaded';
    }
  } catch (error) {
    const reason = isInstance(error) ? error : fail('READ_FAILED', describeValue(error), error);
    log.error = `${reason.code}: ${reason.message}`;
    log.code = reason.code;
  } finally {
    await file?.close();
  }
  return log;
}

/** The MD5 of the first `size` bytes of `file`, lowercase hex. */
async function md5Of(file: fsPromises.FileHandle, size: number, path: string): Promise<string> {
  const hash = createHash('md5');
  let read = 0;
  try {
    const chunks = size === 0 ? [] : file.createReadStream({ start: 0, end: size - 1, autoClose: false, highWaterMark: 1024 * 1024 });
    for await (const chunk of chunks) {
      hash.update(chunk as Buffer);
      read += (chunk as Buffer).length;
    }
  } catch (error) {
    throw fail('READ_FAILED', `reading ${JSON.stringify(path)} failed: ${describeValue(error)}`, error);
  }
  // SPEC §11.2.4: a file that ends before its size at open is a failure, not a shorter log.
  if (read !== size) throw fail('READ_FAILED', `short read of ${JSON.stringify(path)}: ${read} of ${size} bytes`);
  return hash.digest('hex');
}

/** An etag as R2 writes it (`"…"` in headers, bare in bindings), lowercase. */
function normalEtag(etag: string): string {
  return etag.replace(/^W\//, '').replace(/^"|"$/g, '').toLowerCase();
}

/** Pages of `GET /sessions` followed at most (SPEC §10.3). */
const MAX_PAGES = 100_000;

/** The service's routes as `push` calls them, with the token and the retry policy. */
class ServiceHttp {
  constructor(
    private readonly base: URL,
    private readonly token: string | undefined,
    private readonly retry: PushRetry,
    private readonly signal: AbortSignal | undefined,
  ) {}

  /** Every row of the tenant's catalog, by key. */
  async rows(): Promise<Map<string, RemoteRow>> {
    const rows = new Map<string, RemoteRow>();
    const cursors = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const url = new URL('sessions', this.base);
      if (cursor !== undefined) url.searchParams.set('cursor', cursor);
      const body = await this.json('GET /sessions', url, () => ({ method: 'GET' }));
      const { rows: list, cursor: next } = Object(body) as Record<string, unknown>;
      if (!Array.isArray(list) || (next !== undefined && typeof next !== 'string')) throw fail('READ_FAILED', `GET /sessions answered something other than { rows, cursor? }: ${describeValue(body)}`);
      for (const row of list) {
        const { key, etag, size } = Object(row) as Record<string, unknown>;
        if (typeof key !== 'string' || typeof etag !== 'string' || !Number.isSafeInteger(size)) throw fail('READ_FAILED', `GET /sessions answered a row that is not { key, etag, size }: ${describeValue(row)}`);
        rows.set(key, { etag, size: size as number });
      }
      if (next === undefined) return rows;
      if (cursors.has(next)) throw fail('READ_FAILED', `GET /sessions answered the cursor ${describeValue(next)} twice`);
      cursors.add(next);
      cursor = next;
    }
    throw fail('READ_FAILED', `GET /sessions answered more than ${MAX_PAGES} pages`);
  }

  /** `PUT /sessions/{key}` of the first `size` bytes of `file`; the service's etag must be `md5`. */
  async upload(key: string, file: fsPromises.FileHandle, size: number, md5: string): Promise<void> {
    const url = new URL(`sessions/${key.split('/').map(encodeURIComponent).join('/')}`, this.base);
    const what = `PUT /sessions/${key}`;
    const body = await this.json(what, url, () => ({
      method: 'PUT',
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(size) },
      // A fresh stream of the same descriptor for every attempt.
      body: size === 0 ? new Uint8Array(0) : (Readable.toWeb(file.createReadStream({ start: 0, end: size - 1, autoClose: false })) as ReadableStream<Uint8Array>),
      duplex: 'half',
    }));
    const etag = (Object(body) as Record<string, unknown>).etag;
    if (typeof etag !== 'string' || normalEtag(etag) !== md5) throw fail('READ_FAILED', `${what}: the service holds etag ${describeValue(etag)}, not the MD5 of the bytes sent (${md5})`);
  }

  /** One request's JSON answer, retried on 429, 5xx and network failures. */
  private async json(what: string, url: URL, init: () => RequestInit & { duplex?: 'half' }): Promise<unknown> {
    for (let attempt = 1; ; attempt++) {
      const request = init();
      request.headers = { accept: 'application/json', ...(request.headers as Record<string, string>), ...(this.token !== undefined && { authorization: `Bearer ${this.token}` }) };
      request.signal = this.signal ?? null;
      let status: number;
      let text: string;
      let retryAfter: string | null = null;
      try {
        const response = await fetch(url, request);
        status = response.status;
        retryAfter = response.headers.get('retry-after');
        text = await response.text();
      } catch (error) {
        if (this.signal?.aborted) throw fail('CANCELLED', 'cancelled by the signal', this.signal.reason);
        const failure = fail('READ_FAILED', `${what} failed: ${describeValue(error)}`, error);
        await this.wait(attempt, null, failure);
        continue;
      }
      let body: unknown;
      try {
        body = JSON.parse(text) as unknown;
      } catch {
        body = undefined;
      }
      if (status >= 200 && status < 300) {
        if (body === undefined) throw fail('READ_FAILED', `${what} answered a body that is not JSON: ${describeValue(text)}`);
        return body;
      }
      const refused = refusalError(status, body, what);
      if (status !== 429 && status < 500) throw withTokenHint(refused, status);
      await this.wait(attempt, retryAfter, refused);
    }
  }

  /**
   * Waits before attempt `attempt + 1`: `Retry-After` (seconds or an HTTP date) when given, else
   * backoff doubling from `baseDelayMs` with jitter; throws `failure` when no attempt is left or
   * the wait asked for is longer than `maxWaitMs`.
   */
  private async wait(attempt: number, retryAfter: string | null, failure: SessionReferenceError): Promise<void> {
    if (attempt >= this.retry.attempts) throw annotate(failure, `after ${attempt} attempts`);
    let delay = Math.min(this.retry.maxWaitMs, this.retry.baseDelayMs * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
    if (retryAfter !== null) {
      const seconds = /^\d+$/.test(retryAfter.trim()) ? Number(retryAfter.trim()) * 1000 : Date.parse(retryAfter) - Date.now();
      if (Number.isFinite(seconds)) delay = Math.max(0, seconds);
      if (delay > this.retry.maxWaitMs) throw annotate(failure, `the service asked to retry after ${Math.ceil(delay / 1000)} s`);
    }
    await sleep(delay, this.signal);
  }
}

/** `error` with `note` added to its message, in parentheses. */
function annotate(error: SessionReferenceError, note: string): SessionReferenceError {
  error.message = `${error.message} (${note})`;
  return error;
}

/** A 401 says where the token comes from (never what it is). */
function withTokenHint(error: SessionReferenceError, status: number): SessionReferenceError {
  return status === 401 ? annotate(error, `set ${PUSH_TOKEN_VARIABLE} to a token the service accepts`) : error;
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(fail('CANCELLED', 'cancelled by the signal', signal.reason));
    const onAbort = () => {
      clearTimeout(timer);
      reject(fail('CANCELLED', 'cancelled by the signal', signal!.reason));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** What {@link runPush} writes to and reads from; `process` fits. */
export interface PushIO {
  stdout: { write(text: string): unknown };
  /** The progress line goes here, only when it is a terminal (`isTTY`). */
  stderr: { write(text: string): unknown; isTTY?: boolean | undefined };
  env?: Readonly<Record<string, string | undefined>> | undefined;
}

/** A token as it can stand in an `Authorization` header: visible ASCII, no spaces. */
const TOKEN = /^[\x21-\x7e]+$/;

/**
 * The CLI's `push --to URL [--store DIR] [--dry-run] [--json]` (SPEC §17.8): {@link pushStore} with
 * the token from {@link PUSH_TOKEN_VARIABLE}, a progress line on stderr when it is a terminal, and
 * the summary on stdout (uploaded, unchanged, failed and each failure; `--json`: the
 * {@link PushSummary}). The token never appears in what it writes.
 * @returns The exit status: 1 when any upload failed, else 0.
 * @throws PushUsageError for a `--to` or a token that cannot be used; SessionReferenceError as {@link pushStore}.
 */
export async function runPush(options: { to: string; root: string; dryRun: boolean; json: boolean }, io: PushIO): Promise<number> {
  const given = (io.env ?? process.env)[PUSH_TOKEN_VARIABLE];
  const token = given === undefined || given === '' ? undefined : given.trim();
  if (token !== undefined && !TOKEN.test(token)) throw new PushUsageError(`${PUSH_TOKEN_VARIABLE} must be one token of visible ASCII characters (its value is not shown)`);
  // Belt and braces: nothing written can carry the token, whatever a server or library echoes.
  const redact = (text: string) => (token !== undefined && token.length >= 8 ? text.split(token).join('[token]') : text);
  const out = (text: string) => io.stdout.write(`${redact(text)}\n`);
  const tty = io.stderr.isTTY === true;
  const onProgress = tty
    ? ({ total, done, uploaded, unchanged, failed }: PushProgress) =>
        io.stderr.write(`\r\u001b[K${options.dryRun ? 'checked' : 'pushed'} ${done}/${total}: ${uploaded} uploaded, ${unchanged} unchanged, ${failed} failed`)
    : undefined;
  let summary: PushSummary;
  try {
    summary = await pushStore({ to: options.to, root: options.root, token, dryRun: options.dryRun, onProgress });
  } catch (error) {
    if (isInstance(error)) error.message = redact(error.message);
    throw error;
  } finally {
    if (tty) io.stderr.write('\r\u001b[K');
  }
  if (options.json) {
    out(escapeControls(JSON.stringify(summary, null, 2), true));
  } else {
    const counts = summary.dryRun
      ? `would upload ${summary.pending}, unchanged ${summary.unchanged}, failed ${summary.failed} (dry run: nothing uploaded)`
      : `uploaded ${summary.uploaded}, unchanged ${summary.unchanged}, failed ${summary.failed}`;
    out(`${counts} — ${escapeControls(summary.to)}`);
    for (const log of summary.logs) {
      if (log.status === 'failed') out(`failed ${escapeControls(log.key)}: ${escapeControls(log.error ?? '')}`);
      else if (log.status === 'pending') out(`would upload ${escapeControls(log.key)} (${log.size} bytes)`);
    }
  }
  return summary.failed > 0 ? 1 : 0;
}
