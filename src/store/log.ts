/**
 * Parsing dsh session logs: JSON Lines, a header line, then events (SPEC §11.1, §11.2).
 * @module
 */
import { describeValue, fail } from '../errors.js';
import type { SessionEvent, SessionHeader } from '../types.js';
import { firstLogLine, logText, type SessionLogInput } from './text.js';

export type { SessionLogInput } from './text.js';

/** A parsed dsh session log: its header line and its events in log order (SPEC §11.1). */
export interface SessionLog {
  header: SessionHeader;
  events: SessionEvent[];
}

/** True for a line of nothing but JSON whitespace (space, tab, CR): it carries no row. */
function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const unit = line.charCodeAt(i);
    if (unit !== 0x20 && unit !== 0x09 && unit !== 0x0d) return false;
  }
  return true;
}

type LineValue = { ok: true; value: unknown } | { ok: false; error: unknown };

function parseJson(line: string): LineValue {
  try {
    return { ok: true, value: JSON.parse(line) as unknown };
  } catch (error) {
    return { ok: false, error };
  }
}

function invalidLine(line: number, what: string, cause?: unknown) {
  return fail('INVALID_LOG', `dsh session log line ${line} ${what}`, cause);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The header of a log's first line: `{"type":"session","version":N,"id":string,"createdAt":number,…}`
 * (`version` an integer, `createdAt` finite epoch milliseconds; other fields kept as they are).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` naming line 1 otherwise.
 */
function readHeader(line: string): SessionHeader {
  if (isBlank(line)) throw invalidLine(1, 'is missing: a session log starts with its header');
  const parsed = parseJson(line);
  if (!parsed.ok) throw invalidLine(1, `is not JSON: ${describeValue(line)}`, parsed.error);
  const header = parsed.value;
  if (
    !isRecord(header) ||
    header.type !== 'session' ||
    !Number.isInteger(header.version) ||
    typeof header.id !== 'string' ||
    typeof header.createdAt !== 'number' ||
    !Number.isFinite(header.createdAt)
  ) {
    throw invalidLine(1, `is not a session header {"type":"session","version","id","createdAt"}: ${describeValue(line)}`);
  }
  return header as SessionHeader;
}

/** True for an event row: an object with a string `type` and a finite numeric `seq`. */
function isEventRow(value: unknown): value is SessionEvent {
  return isRecord(value) && typeof value.type === 'string' && typeof value.seq === 'number' && Number.isFinite(value.seq);
}

/** Visits the `\n`-separated lines of `text` after the first, with 1-based numbers. */
function forEachLine(text: string, from: number, visit: (line: string, number: number, last: boolean) => void): void {
  for (let start = from, number = 2; start < text.length; number++) {
    const newline = text.indexOf('\n', start);
    const end = newline === -1 ? text.length : newline;
    visit(text.slice(start, end), number, newline === -1);
    start = end + 1;
  }
}

/**
 * The event of one line after the header, or `undefined` when the line is skipped: blank lines,
 * packed chunk rows (`type` ending in `-chunks`), rows of unknown shape, and a torn last line
 * (no final `\n` and not JSON).
 */
function readEventLine(line: string, number: number, unterminated: boolean): SessionEvent | undefined {
  if (isBlank(line)) return undefined;
  const parsed = parseJson(line);
  if (!parsed.ok) {
    if (unterminated) return undefined;
    throw invalidLine(number, `is not JSON: ${describeValue(line)}`, parsed.error);
  }
  const row = parsed.value;
  if (!isEventRow(row) || row.type.endsWith('-chunks')) return undefined;
  return row;
}

/**
 * Parses a dsh session log (SPEC §11.1, §11.2).
 *
 * The input is the log's text, or its bytes: UTF-8 JSON Lines, or — when they start with the zstd
 * magic `28 B5 2F FD` — a sequence of zstd frames, every one decoded (skippable frames skipped, a
 * truncated final frame ignored). A leading UTF-8 BOM is ignored. Lines are split on `\n` only (a
 * raw U+2028 inside a JSON string is data; a `\r` before the `\n` is JSON whitespace). Line 1 is
 * the header `{"type":"session","version":N,"id",createdAt,…}`; every later line that is an object
 * with a string `type` and a numeric `seq` is an event, kept in log order with all its fields.
 * Skipped: packed chunk rows (`type` ending in `-chunks`), rows of any other shape, blank lines,
 * and a torn last line (no final `\n` and not JSON). Linear in the input size.
 * @param input `string`, `Uint8Array` or `ArrayBuffer`.
 * @returns `{ header, events }`; the objects are fresh from `JSON.parse`.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `input` is not a string
 * or bytes; `SESSION_REFERENCE_INVALID_LOG` when the header is missing or invalid (line 1), a line
 * other than a torn last line is not JSON (naming its 1-based line number), the bytes are not
 * UTF-8, or a complete zstd frame is corrupt.
 */
export function parseSessionLog(input: SessionLogInput): SessionLog {
  const text = logText(input);
  const firstNewline = text.indexOf('\n');
  const headerLine = firstNewline === -1 ? text : text.slice(0, firstNewline);
  const header = readHeader(headerLine);
  const events: SessionEvent[] = [];
  if (firstNewline !== -1) {
    forEachLine(text, firstNewline + 1, (line, number, unterminated) => {
      const event = readEventLine(line, number, unterminated);
      if (event) events.push(event);
    });
  }
  return { header, events };
}

/**
 * Reads only the header of a dsh session log (SPEC §11.1, §12.1): the first line, or for zstd
 * input the first frame(s) up to the first `\n`; the rest is neither decoded nor parsed, so
 * listing sessions stays cheap. A prefix of the log that holds the whole first line (or first
 * frame) is enough.
 * @param input `string`, `Uint8Array` or `ArrayBuffer`, as for {@link parseSessionLog}.
 * @returns The header object (`type`, `version`, `id`, `createdAt` and any other fields).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `input` is not a string
 * or bytes; `SESSION_REFERENCE_INVALID_LOG` (line 1) when the header is missing, torn or invalid,
 * its bytes are not UTF-8, or a zstd frame read for it is corrupt.
 */
export function parseSessionLogHeader(input: SessionLogInput): SessionHeader {
  return readHeader(firstLogLine(input));
}
