/**
 * Parsing dsh session logs held whole, synchronously: JSON Lines, a header line, then events
 * (SPEC §11.1, §11.2). The same pipeline as the streaming reads ({@link readSessionLog}), with the
 * zstd decoder loaded up front.
 * @module
 */
import { inspectCallerValue } from '../caller-data.js';
import { describeValue, fail } from '../errors.js';
import type { SessionEvent, SessionHeader } from '../types.js';
import { LogCollector } from './collect.js';
import { LIBZSTD_WASM_BASE64URL } from './libzstd-wasm.js';
import { asBytes, collectSync, type ZstdCodec } from './pipeline.js';
import { isZstd } from './magic.js';
import { firstFrameLine, libZstdSync, ZstdStream } from './zstd.js';

/** What `parseSessionLog` accepts: the log's text, or its bytes (UTF-8 JSON Lines or zstd frames). */
export type SessionLogInput = string | Uint8Array | ArrayBuffer;

/** A parsed dsh session log: its header line and its events in log order (SPEC §11.1). */
export interface SessionLog {
  header: SessionHeader;
  events: SessionEvent[];
}

/**
 * The text or bytes of `input`.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` for anything else.
 */
function inputOf(input: unknown): string | Uint8Array {
  if (typeof input === 'string') return input;
  const bytes = inspectCallerValue(() => asBytes(input), 'input');
  if (bytes !== undefined) return bytes;
  throw fail('INVALID_ARGUMENT', `a dsh session log must be a string, a Uint8Array or an ArrayBuffer, got ${describeValue(input)}`);
}

/**
 * libzstd for a synchronous parse (see src/store/libzstd.ts): compiled from its bytes on first
 * use, or the module given to `provideZstdWasm`, or its JavaScript form once an asynchronous read
 * has loaded it.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` where none of them is at hand.
 */
function zstdCodec(input: string | Uint8Array): ZstdCodec | undefined {
  if (typeof input === 'string' || !isZstd(input)) return undefined;
  const lib = libZstdSync(LIBZSTD_WASM_BASE64URL);
  if (lib === undefined) {
    throw fail(
      'INVALID_ARGUMENT',
      'zstd bytes need libzstd, and WebAssembly cannot be compiled here (a Content-Security-Policy without \'wasm-unsafe-eval\', or workerd without provideZstdWasm): read them once with readSessionLog, which loads libzstd in JavaScript, or call provideZstdWasm',
    );
  }
  return { lib, ZstdStream, firstFrameLine };
}

/**
 * Parses a dsh session log (SPEC §11.1, §11.2).
 *
 * The input is the log's text, or its bytes: UTF-8 JSON Lines, or — when they start with the zstd
 * magic `28 B5 2F FD` — a sequence of zstd frames, every one decoded (skippable frames skipped, a
 * truncated final frame ignored, content checksums verified). A leading UTF-8 BOM is ignored.
 * Lines are split on `\n` only (a raw U+2028 inside a JSON string is data; a `\r` before the `\n`
 * is JSON whitespace) and decoded one by one as strict UTF-8. Line 1 is the header
 * `{"type":"session","version":N,"id",createdAt,…}`; every later line that is an object with a
 * string `type` and a numeric `seq` is an event, kept in log order with all its fields. Skipped:
 * packed chunk rows (`type` ending in `-chunks`), rows of any other shape, blank lines, and a torn
 * last line (no final `\n`, and not JSON or cut inside a UTF-8 character). Linear in the input
 * size. Synchronous, so it bundles the zstd decoder; {@link readSessionLog} is the streaming,
 * lazily-loading variant.
 * @param input `string`, `Uint8Array` or `ArrayBuffer`.
 * @returns `{ header, events }`; the objects are fresh from `JSON.parse`.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `input` is not a string
 * or bytes; `SESSION_REFERENCE_INVALID_LOG` when the header is missing or invalid (line 1), a line
 * other than a torn last line is not JSON or not UTF-8 (naming its 1-based line number), a line
 * is over 256 MiB, or a complete zstd frame is corrupt.
 */
export function parseSessionLog(input: SessionLogInput): SessionLog {
  const collector = new LogCollector((event) => event);
  const given = inputOf(input);
  collectSync(given, collector, zstdCodec(given));
  return { header: collector.finish(), events: collector.events };
}

/**
 * Reads only the header of a dsh session log (SPEC §11.1, §11.2.1, §12.1): the first line, or for
 * zstd input the frames up to the first `\n`, decoding at most 1 MiB of line 1; the rest is
 * neither decoded nor parsed, so listing sessions stays cheap. A prefix of the log that holds the
 * whole first line is enough.
 * @param input `string`, `Uint8Array` or `ArrayBuffer`, as for {@link parseSessionLog}.
 * @returns The header object (`type`, `version`, `id`, `createdAt` and any other fields).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `input` is not a string
 * or bytes; `SESSION_REFERENCE_INVALID_LOG` (line 1) when the header is missing, torn, invalid,
 * not UTF-8 or over 1 MiB ("header line over 1 MiB"), or a zstd frame read for it is corrupt.
 */
export function parseSessionLogHeader(input: SessionLogInput): SessionHeader {
  const collector = new LogCollector('header');
  const given = inputOf(input);
  collectSync(given, collector, zstdCodec(given));
  return collector.finish();
}
