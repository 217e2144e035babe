/**
 * `PUT /sessions/{path}` (SPEC §17.4, §17.6): the body is a dsh log only if its first line (or
 * first zstd frame) is a dsh header, checked on a bounded peek before anything is stored; then the
 * peeked bytes and the rest of the body stream to R2 with the declared length (never held whole),
 * and the catalog indexes the stored object before the answer (read-your-writes). A log the
 * catalog refuses is deleted again: nothing stays stored.
 * @module
 */
import { describeValue, isInstance } from '../errors.js';
import { concat } from '../store/lines.js';
import { MAX_HEADER_BYTES } from '../store/pipeline.js';
import { readSessionHeader } from '../store/read.js';
import type { SessionHeader } from '../types.js';
import { callCatalog, type CatalogApi } from './catalog-api.js';
import { HttpError } from './http.js';

/**
 * Bytes of the body read before its header must be complete: a header line is at most 1 MiB
 * (SPEC §11.2.1), plus room for zstd's frame overhead around it.
 */
export const PEEK_BYTES = MAX_HEADER_BYTES + 64 * 1024;

/**
 * Stops reading a refused body (issue 27): the answer goes out at once, whatever the client still
 * has to send, and a stalled body holds nothing open. A client that reads the answer only after
 * writing its whole body may see its connection closed instead (the CLI's `push` reads it).
 */
async function cancel(body: ReadableStream<Uint8Array> | ReadableStreamDefaultReader<Uint8Array>): Promise<void> {
  await body.cancel().catch(() => {});
}

/** What a stored upload answers. */
export interface StoredLog {
  key: string;
  sessionId: string;
  etag: string;
  size: number;
}

function invalidLog(message: string): HttpError {
  return new HttpError(400, 'SESSION_REFERENCE_INVALID_LOG', message);
}

/**
 * The declared length of the body.
 * @throws HttpError 411 `LENGTH_REQUIRED` without a `Content-Length`, 400 for a malformed one, 413
 * `REQUEST_TOO_LARGE` past `max`.
 */
export function declaredLength(request: Request, max: number): number {
  const header = request.headers.get('content-length');
  if (header === null) throw new HttpError(411, 'LENGTH_REQUIRED', 'PUT /sessions/{path} needs a Content-Length (the size of the log in bytes)');
  if (!/^\d{1,16}$/.test(header.trim())) throw new HttpError(400, 'SESSION_REFERENCE_INVALID_ARGUMENT', `Content-Length must be a byte count, got ${describeValue(header)}`);
  const length = Number(header.trim());
  if (length > max) throw new HttpError(413, 'REQUEST_TOO_LARGE', `the log is ${length} bytes, more than MAX_UPLOAD_BYTES (${max})`);
  if (length === 0) throw invalidLog('the body is empty: a dsh log starts with its header line');
  return length;
}

/** The first chunks of the body, up to the end of the header (at most {@link PEEK_BYTES}), and the header. */
async function peekHeader(reader: ReadableStreamDefaultReader<Uint8Array>, length: number): Promise<{ chunks: Uint8Array[]; read: number }> {
  const chunks: Uint8Array[] = [];
  let read = 0;
  // The header is looked for each time the bytes read have doubled (from 4 KiB), not at every
  // chunk: a body sent in tiny chunks costs O(n log n), not O(n²); and once as soon as a line
  // break arrives, so that a bad first line is refused without waiting for more (issue 27).
  let next = 4096;
  let lineEnded = false;
  for (;;) {
    const { done, value } = await reader.read();
    const newline: boolean = !done && !lineEnded && value.includes(0x0a);
    if (!done) {
      chunks.push(value);
      read += value.byteLength;
    }
    lineEnded ||= newline;
    const ended = done || read >= length;
    if (!ended && !newline && read < next && read < PEEK_BYTES) continue;
    next = Math.max(next, read * 2);
    const header = await headerOf(concat(chunks));
    if (header !== undefined) return { chunks, read };
    if (ended) throw invalidLog('the body holds no complete dsh header line (the first line, or the first zstd frame, must be {"type":"session",…})');
    if (read >= PEEK_BYTES) throw invalidLog(`no complete dsh header in the first ${PEEK_BYTES} bytes of the body`);
  }
}

async function headerOf(bytes: Uint8Array): Promise<SessionHeader | undefined> {
  try {
    return await readSessionHeader(bytes, {});
  } catch (error) {
    if (isInstance(error) && error.code === 'SESSION_REFERENCE_INVALID_LOG') throw invalidLog(error.message);
    throw error;
  }
}

/** A stream of exactly `length` bytes: the peeked chunks, then the rest of `reader`. */
function rejoined(peeked: Uint8Array[], reader: ReadableStreamDefaultReader<Uint8Array>, length: number): ReadableStream<Uint8Array> {
  const { readable, writable } = new FixedLengthStream(length);
  const writer = writable.getWriter();
  void (async () => {
    try {
      for (const chunk of peeked) await writer.write(chunk);
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        await writer.write(value);
      }
      await writer.close();
    } catch (error) {
      await writer.abort(error).catch(() => {});
      await reader.cancel(error).catch(() => {});
    }
  })();
  return readable as ReadableStream<Uint8Array>;
}

/**
 * Stores the body of `request` at `prefix + key` and indexes it.
 * @throws HttpError (see {@link declaredLength}), 400 `SESSION_REFERENCE_INVALID_LOG` for a body
 * that is not a dsh log (nothing stored), and the catalog's errors (the object deleted again).
 */
export async function storeLog(request: Request, bucket: R2Bucket, catalog: CatalogApi, prefix: string, key: string, maxBytes: number, maxLogBytes: number): Promise<StoredLog> {
  const body = request.body;
  let length: number;
  try {
    length = declaredLength(request, maxBytes);
  } catch (error) {
    if (body !== null) await cancel(body);
    throw error;
  }
  if (body === null) throw invalidLog('the body is empty: a dsh log starts with its header line');
  const reader = body.getReader();
  let peeked: { chunks: Uint8Array[]; read: number };
  try {
    peeked = await peekHeader(reader, length);
  } catch (error) {
    await cancel(reader);
    throw error;
  }
  if (peeked.read > length) throw new HttpError(400, 'SESSION_REFERENCE_INVALID_ARGUMENT', `the body is longer than its Content-Length (${length})`);
  try {
    await bucket.put(prefix + key, rejoined(peeked.chunks, reader, length));
  } catch (error) {
    throw new HttpError(502, 'SESSION_REFERENCE_READ_FAILED', `storing the log failed: ${error instanceof Error ? error.message : String(error)}`);
  }
  try {
    const row = await callCatalog(() => catalog.indexObject(prefix, key, { maxLogBytes }));
    if (row === undefined) throw new HttpError(409, 'CONFLICT', `the log at ${describeValue(key)} was deleted while it was being stored`);
    return { key, sessionId: row.sessionId, etag: row.etag, size: row.size };
  } catch (error) {
    // Nothing stays stored that the catalog does not hold (SPEC §17.4).
    await bucket.delete(prefix + key).catch(() => {});
    await callCatalog(() => catalog.removeObject(key)).catch(() => {});
    if (isInstance(error) && error.code === 'SESSION_REFERENCE_INVALID_LOG') throw invalidLog(error.message);
    throw error;
  }
}
