/**
 * From the lines of a dsh session log to its header, events and title (SPEC §11.1, §11.3, §8):
 * each line parsed once, as it goes by, keeping only what the read asks for.
 * @module
 */
import { describeValue, fail } from '../errors.js';
import type { SessionEvent, SessionHeader } from '../types.js';
import type { RowCollector } from './classify.js';

/**
 * What a read keeps of each event, given the event and its line number: the event itself
 * (`parseSessionLog`), a smaller entry (a store's surface read: a placeholder, a slot), or
 * nothing (`undefined` as the function's result, or as the whole `KeepEvent`: a title read).
 */
export type KeepEvent = ((event: SessionEvent, line: number) => SessionEvent | undefined) | undefined;

/** Kept events at which a collector with `compact` first compacts them. */
const COMPACT_AT = 4096;

/** True for an object that is not an array (a JSON object). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
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

/**
 * The header of a log's first line: `{"type":"session","version":N,"id":string,"createdAt":number,…}`
 * (`version` an integer, `createdAt` finite epoch milliseconds; other fields kept as they are).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` naming line 1 otherwise.
 */
function readHeader(line: string | undefined): SessionHeader {
  if (line === undefined) throw invalidLine(1, 'is not valid UTF-8');
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

/** True for a packed chunk row (`type` ending in `-chunks`): never an event (SPEC §11.1). */
function isChunkRow(type: string): boolean {
  return type.endsWith('-chunks');
}

/** The event of a parsed row, or `undefined` for packed chunk rows and rows of unknown shape (SPEC §11.1). */
function rowEvent(row: unknown): SessionEvent | undefined {
  return isEventRow(row) && !isChunkRow(row.type) ? row : undefined;
}

/**
 * The event of one line after the header, or `undefined` when the line is skipped: blank lines,
 * packed chunk rows, rows of unknown shape, and a torn last line (no final `\n` and not JSON, or
 * not UTF-8).
 */
function readEventLine(line: string | undefined, number: number, terminated: boolean): SessionEvent | undefined {
  if (line === undefined) {
    if (!terminated) return undefined;
    throw invalidLine(number, 'is not valid UTF-8');
  }
  if (isBlank(line)) return undefined;
  const parsed = parseJson(line);
  if (!parsed.ok) {
    if (!terminated) return undefined;
    throw invalidLine(number, `is not JSON: ${describeValue(line)}`, parsed.error);
  }
  return rowEvent(parsed.value);
}

/** What a read uses the data of: every row but packed chunk rows (a whole log, `parseSessionLog`). */
export function everyRow(type: string): boolean {
  return !isChunkRow(type);
}

/** `data.title` of a `session/title` event when it is a string (SPEC §11.3). */
export function eventTitle(event: SessionEvent): string | undefined {
  if (event.type !== 'session/title' || !isRecord(event.data)) return undefined;
  const { title } = event.data;
  return typeof title === 'string' ? title : undefined;
}

/**
 * True for a replace op naming a seq greater than its own event's, one written later (SPEC §8.2).
 * Folding moves a replacing event to the slot of the first node it replaces, so a later event
 * can come to stand before this one, and folding again would let this replace match it: then
 * folding as the lines go by no longer equals folding the whole log, and must stop.
 */
function namesLaterSeq({ seq, surfaceOp }: SessionEvent): boolean {
  if (!isRecord(surfaceOp) || surfaceOp.op !== 'replace') return false;
  const { start, end } = surfaceOp;
  return (typeof start === 'number' && start > seq) || (typeof end === 'number' && end > seq);
}

/**
 * The collector, last stage of a read: a {@link RowCollector} that collects a log's header and
 * events as the lines go by. After the input ends, {@link LogCollector.finish} checks that there
 * was a header.
 */
export class LogCollector implements RowCollector {
  header: SessionHeader | undefined;
  /** Text of line 1 when it ended without `\n` and is not JSON (a header still being written), when reading the header only. */
  private tornHeader: string | undefined;
  /** Where the truncated final zstd frame taken back began (see {@link LogCollector.mark}), when one was. */
  private truncatedAt: number | undefined;
  /** Kept events in log order (see {@link KeepEvent}). */
  events: SessionEvent[] = [];
  /** `seq` of the last event (`null` before any). */
  lastSeq: number | null = null;
  /** The latest `session/title`. */
  title: string | undefined;
  /** Every seq so far was larger than the one before, and no replace named a later seq (so folding may run as the lines go by). */
  private increasing = true;
  /** `events.length` at which {@link LogCollector.compact} runs next. */
  private nextCompaction = COMPACT_AT;
  /** The last of {@link LogCollector.lines}: the read stops after it. */
  private readonly lastLine: number;

  /**
   * @param keep What to keep of each event; `'header'` reads line 1 only (a listing), where a torn
   *   first line (no `\n`, not JSON) leaves {@link LogCollector.header} `undefined` instead of failing.
   * @param compact Shrinks the kept events as the lines go by (a surface read folds them, SPEC
   *   §8.2, dropping shadowed and non-surface events); it must return a new array, and
   *   `compact(compact(a).concat(b))` must equal `compact(a.concat(b))`, which folding does while
   *   seqs keep increasing (no seq repeats) and no replace names a later seq. Runs when the kept
   *   events double.
   * @param lines When given, only these lines (and the header) are parsed, and the read stops after the last of them.
   * @param readsData The row types whose data `keep` reads (default: every type but packed chunk
   *   rows): rows of other types reach `keep` as `{ type, seq, time?, surfaceOp? }` without data
   *   (SPEC §11.2.6, classify.ts).
   */
  constructor(
    private readonly keep: KeepEvent | 'header',
    private readonly compact?: (events: SessionEvent[]) => SessionEvent[],
    private readonly lines?: ReadonlySet<number>,
    private readonly reads: (type: string) => boolean = everyRow,
  ) {
    let last = lines === undefined ? Infinity : 1;
    for (const line of lines ?? []) last = Math.max(last, line);
    this.lastLine = last;
  }

  /** Reads line 1 only. */
  get headerOnly(): boolean {
    return this.keep === 'header';
  }

  line(text: string | undefined, number: number, terminated: boolean): boolean {
    if (number === 1) {
      // A leading BOM (U+FEFF) is not part of the header (SPEC §11.1).
      if (text?.charCodeAt(0) === 0xfeff) text = text.slice(1);
      if (this.headerOnly && !terminated && (text === undefined || !parseJson(text).ok)) {
        this.tornHeader = text ?? '';
        return false;
      }
      this.header = readHeader(text);
      return !this.headerOnly;
    }
    if (!this.wants(number)) return this.passOver(number);
    return this.event(readEventLine(text, number, terminated), number);
  }

  /** `session/title` rows are always read in full: every read keeps the latest title. */
  readsData(type: string): boolean {
    return type === 'session/title' || this.reads(type);
  }

  wants(number: number): boolean {
    return this.lines === undefined || number === 1 || this.lines.has(number);
  }

  passOver(number: number): boolean {
    return number < this.lastLine;
  }

  row(row: Record<string, unknown>, number: number): boolean {
    return this.event(rowEvent(row), number);
  }

  /** Collects the event of line `number` (`undefined`: a skipped line). */
  private event(event: SessionEvent | undefined, number: number): boolean {
    if (event === undefined) return number < this.lastLine;
    if ((this.lastSeq !== null && !(event.seq > this.lastSeq)) || namesLaterSeq(event)) this.increasing = false;
    this.lastSeq = event.seq;
    const title = eventTitle(event);
    if (title !== undefined) this.title = title;
    const kept = typeof this.keep === 'function' ? this.keep(event, number) : undefined;
    if (kept !== undefined) this.events.push(kept);
    if (this.events.length >= this.nextCompaction && this.compact && this.increasing) {
      this.events = this.compact(this.events);
      this.nextCompaction = Math.max(COMPACT_AT, 2 * this.events.length);
    }
    return number < this.lastLine;
  }

  /**
   * The header, once the input has ended.
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` (line 1) when the log had no
   * line at all or its first line is torn (then {@link LogCollector.header} is `undefined`).
   */
  finish(): SessionHeader {
    if (this.header !== undefined) return this.header;
    // No line 1 because the frame holding it was cut: the message says so, as the listing may have shown line 1 (a first frame over 1 MiB).
    if (this.tornHeader === undefined && this.truncatedAt !== undefined) {
      throw invalidLine(1, `is missing: a session log starts with its header, and the zstd frame at byte ${this.truncatedAt} is truncated`);
    }
    return readHeader(this.tornHeader ?? '');
  }

  /**
   * A restore point: calling the result takes back everything collected since, and notes
   * `truncatedAt`, where the truncated final zstd frame whose lines these were began.
   */
  mark(): (truncatedAt: number) => void {
    // Compaction replaces the array and never changes an earlier one: the marked array, cut back
    // to its marked length, is the state at the mark.
    const { header, lastSeq, title, increasing, nextCompaction, events } = this;
    const length = events.length;
    return (truncatedAt) => {
      Object.assign(this, { header, lastSeq, title, increasing, nextCompaction, events, truncatedAt });
      events.length = length;
    };
  }
}
