/**
 * The line classifier and validator, one stage of a read (SPEC §11.1, §11.2.6): each line's bytes
 * in, from the line splitter; out to the collector either the line's text (decoded as strict UTF-8,
 * to be parsed in full) or, for a row whose content the read never uses, only what folding reads.
 *
 * The rule of §11.2.6 lives here and nowhere else. dsh writes every event as
 * `{"type":"<type>","seq":…`. A line after the header that starts that way, with a type whose data
 * the collector does not read ({@link RowCollector.readsData}: tool calls and results, requests,
 * packed chunk rows, …), is neither decoded to a string nor parsed into objects: a validating scan
 * of its bytes (json-scan.ts; its WebAssembly twin json-scan.wat where that runs, see
 * chunk-scanner.ts) checks that it is one JSON value in valid UTF-8 and finds its
 * top-level `type`, `seq`, `time` and `surfaceOp`, which are all the collector gets. A line the
 * scan does not vouch for (damaged, or a top-level key spelled with escapes or repeated `type`) is
 * decoded and parsed in full, like every line that does not start that way, so its outcome
 * (event, skip, or `SESSION_REFERENCE_INVALID_LOG` with its message and line number) is exactly
 * what parsing every line gives.
 * @module
 */
import { decodeUtf8Strict } from '../utf8.js';
import type { ScannedRow } from './json-scan.js';
import type { LineSink } from './lines.js';
import type { ChunkScanner } from './chunk-scanner.js';

/** What the classifier gives its lines to (the collector). */
export interface RowCollector {
  /** The read looks at line `number` at all (a second pass reads a few lines only). */
  wants(number: number): boolean;
  /** The read uses the data of rows of this type (else it gets them without, see {@link RowCollector.row}). */
  readsData(type: string): boolean;
  /** A line in full: its text, `undefined` when its bytes are not UTF-8. Returns `false` to stop. */
  line(text: string | undefined, number: number, terminated: boolean): boolean;
  /** A line not looked at ({@link RowCollector.wants} said no). Returns `false` to stop. */
  passOver(number: number): boolean;
  /**
   * A valid row whose data the read does not use: its top-level `type`, and `seq`, `time`,
   * `surfaceOp` as `JSON.parse` gives them, each only when present. Returns `false` to stop.
   */
  row(row: Record<string, unknown>, number: number): boolean;
}

/** `{"type":"` */
const PREFIX = [0x7b, 0x22, 0x74, 0x79, 0x70, 0x65, 0x22, 0x3a, 0x22];

/**
 * Type strings met, shared, by a hash of their bytes: a type's string is kept once, not once per
 * row, and a row of a type met before makes no string at all (at most 1,024 hashes; a type whose
 * hash is another's gets a string of its own each time).
 */
const TYPE_NAMES = new Map<number, string>();

/**
 * The type a line declares in its first bytes, `{"type":"<type>"`, when it is printable ASCII
 * without escapes; else `undefined`.
 */
export function dshType(bytes: Uint8Array): string | undefined {
  if (bytes.length < PREFIX.length + 1) return undefined;
  for (let i = 0; i < PREFIX.length; i++) if (bytes[i] !== PREFIX[i]) return undefined;
  let end = PREFIX.length;
  let hash = 0;
  for (;;) {
    const c = bytes[end];
    if (c === 0x22) break;
    if (c === undefined || c < 0x20 || c > 0x7e || c === 0x5c) return undefined;
    hash = (hash * 31 + c) | 0;
    end++;
  }
  const known = TYPE_NAMES.get(hash);
  if (known !== undefined && spells(known, bytes, PREFIX.length, end)) return known;
  const type = String.fromCharCode.apply(null, bytes.subarray(PREFIX.length, end) as unknown as number[]);
  if (known === undefined && TYPE_NAMES.size < 1024) TYPE_NAMES.set(hash, type);
  return type;
}

/** `true` when bytes `[start, end)` are the ASCII characters of `text`. */
function spells(text: string, bytes: Uint8Array, start: number, end: number): boolean {
  if (text.length !== end - start) return false;
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) !== bytes[start + i]) return false;
  return true;
}

/** `"append"`, the `surfaceOp` of most rows (SPEC §4.3): read without a string decoded and parsed. */
const APPEND = [0x22, 0x61, 0x70, 0x70, 0x65, 0x6e, 0x64, 0x22];

/** The value of bytes `[start, end)` of a scanned row, as `JSON.parse` gives it. */
function valueAt(bytes: Uint8Array, start: number, end: number): unknown {
  const first = bytes[start]!;
  if (end - start <= 15) {
    // A non-negative integer of at most 15 digits (seqs and times): exact as a double, read at once.
    let value = 0;
    let i = start;
    for (; i < end; i++) {
      const digit = bytes[i]! - 0x30;
      if (digit < 0 || digit > 9) break;
      value = value * 10 + digit;
    }
    if (i === end) return value;
  }
  if (end - start === APPEND.length && APPEND.every((byte, i) => bytes[start + i] === byte)) return 'append';
  if (first === 0x2d || (first >= 0x30 && first <= 0x39)) {
    // A JSON number is ASCII: its text is its bytes, and Number() reads it as JSON.parse does.
    return Number(String.fromCharCode.apply(null, bytes.subarray(start, end) as unknown as number[]));
  }
  return JSON.parse(decodeUtf8Strict(bytes.subarray(start, end))!) as unknown;
}

/** The row a scan found: `type` (from the line's first bytes) and the other keys present. */
function skimmed(bytes: Uint8Array, type: string, scan: ScannedRow): Record<string, unknown> {
  const row: Record<string, unknown> = { type };
  const { starts, ends } = scan;
  if (starts[1]! >= 0) row.seq = valueAt(bytes, starts[1]!, ends[1]!);
  if (starts[2]! >= 0) row.time = valueAt(bytes, starts[2]!, ends[2]!);
  if (starts[3]! >= 0) row.surfaceOp = valueAt(bytes, starts[3]!, ends[3]!);
  return row;
}

/** The classifier stage: a {@link LineSink} in front of a {@link RowCollector}. */
export class LineClassifier implements LineSink {
  /**
   * @param collector Where lines and skipped rows go.
   * @param scanner The read's scanner (shared with its splitter, which copies each chunk into
   *   WebAssembly memory where the scan of skipped rows then runs).
   */
  constructor(
    private readonly collector: RowCollector,
    private readonly scanner: ChunkScanner,
  ) {}

  line(bytes: Uint8Array, number: number, terminated: boolean): boolean {
    const { collector } = this;
    if (number > 1) {
      if (!collector.wants(number)) return collector.passOver(number);
      const type = dshType(bytes);
      if (type !== undefined && !collector.readsData(type)) {
        const scan = this.scanner.scan(bytes);
        if (scan !== undefined && scan.types === 1) return collector.row(skimmed(bytes, type, scan), number);
      }
    }
    return collector.line(bytes.length === 0 ? '' : decodeUtf8Strict(bytes), number, terminated);
  }
}
