/**
 * Reading a log's surface and title for a store (SPEC §11.2.2, §8): only what projection and
 * retention can use is kept, and at a reference budget (`readRetainedSurface`), message texts
 * retention cannot keep are not held either.
 *
 * A read at a budget holds message texts as usual until they pass a bound
 * ({@link heldBound}); past it, each further message is kept as a stand-in holding only its
 * line, seq and projected size, and the ones already held become stand-ins at the next fold.
 * Once the log has ended, the folded surface says which messages retention could keep at the
 * budget: the checkpoints, the newest message, and the newest others while their raw text sizes
 * fit (a lower bound of what retention counts, so it never keeps one more). Those are the answer:
 * every other message is left out and counted in `withheld`, and events that project to nothing
 * are left out too. Stand-ins in the answer are read again from their lines in a second pass over
 * the log, which holds nothing but the answer. A log whose texts stay under the bound (a compacted
 * one, as dsh writes long sessions) is read once, and answered as `readSurface` answers.
 * @module
 */
import { isPositiveSafeInteger } from '../config.js';
import { check, fail } from '../errors.js';
import { projectSurface } from '../projection.js';
import { foldSurface } from '../surface.js';
import type { SessionEvent, SessionHeader } from '../types.js';
import { utf8ByteLength } from '../utf8.js';
import { collectLog, type PulledChunks, type ReadOptions, type SessionLogSource } from './pipeline.js';

/** What a store serves from one log read: its header, folded surface and title (SPEC §11.3, §8). */
export interface SessionRead {
  header: SessionHeader;
  /** `seq` of the log's last event, `null` without events. */
  capturedThroughSeq: number | null;
  /** The folded surface of the log's surface entries (placeholders for what projection never reads). */
  events: SessionEvent[];
  /** `data.title` of the last `session/title` event. */
  title: string | undefined;
  /** Messages left out of `events` by a read at a budget (see `SessionSurface.withheld`). */
  withheld?: { messages: number; bytes: number } | undefined;
}

/** Opens the log's bytes from the start; a read at a budget may open them twice. */
export type OpenLog = () => SessionLogSource | PulledChunks | Promise<SessionLogSource | PulledChunks>;

/** An {@link OpenLog} that gives `source`, already opened, first, then `reopen()` for every later call. */
export function firstThen<S extends SessionLogSource | PulledChunks>(source: S, reopen: () => S | Promise<S>): () => S | Promise<S> {
  let first: S | undefined = source;
  return () => {
    const opened = first ?? reopen();
    first = undefined;
    return opened;
  };
}

/**
 * Checks the budget of a `readRetainedSurface` call (UTF-8 bytes of one reference object).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` unless a positive safe integer.
 */
export function checkBudget(maxReferenceBytes: unknown): asserts maxReferenceBytes is number {
  check(isPositiveSafeInteger(maxReferenceBytes), 'INVALID_ARGUMENT', 'maxReferenceBytes must be a positive safe integer (UTF-8 bytes)', maxReferenceBytes);
}

/** Event types whose data projection reads (SPEC §8.2); every other event is kept as a placeholder. */
const PROJECTED_TYPES: ReadonlySet<string> = new Set(['user/message', 'steering/message', 'assistant/message']);

/**
 * What a read at a budget holds of full messages before it keeps stand-ins: 16 MiB, counted as the
 * raw UTF-8 bytes of each message's projected text plus {@link MESSAGE_OVERHEAD} (its objects),
 * and at least 4× the budget.
 */
const HELD_BYTES = 16 * 1024 * 1024;

/** What a parsed message costs besides its text, as a read at a budget counts it (its event, data, content array and block objects). */
const MESSAGE_OVERHEAD = 512;

/** What holding a full message counts toward {@link HELD_BYTES}. */
function heldCost(message: Message): number {
  return MESSAGE_OVERHEAD + message.bytes;
}

/** The bound of {@link HELD_BYTES} for a read at `budget` bytes. */
export function heldBound(budget: number): number {
  return Math.max(HELD_BYTES, 4 * budget);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Shared type strings, so a placeholder costs no string of its own. */
const TYPE_NAMES = new Map<string, string>();

function sharedType(type: string): string {
  let shared = TYPE_NAMES.get(type);
  if (shared === undefined) {
    shared = type;
    if (TYPE_NAMES.size < 1024) TYPE_NAMES.set(type, type);
  }
  return shared;
}

/** An event without its data: what folding reads (`type`, `seq`, `surfaceOp`) and `time`. */
function placeholder({ type, seq, time, surfaceOp }: SessionEvent): SessionEvent {
  const entry: SessionEvent = { type: sharedType(type), seq, time, data: undefined };
  if (surfaceOp !== undefined) entry.surfaceOp = surfaceOp;
  return entry;
}

/**
 * What a surface read keeps of an event (SPEC §8): the event itself for the user and steering
 * messages projection reads; an assistant message without its non-text blocks (reasoning, tool
 * calls: never projected); anything else as a placeholder holding what folding reads.
 */
function surfaceEntry(event: SessionEvent): SessionEvent {
  const { type, data } = event;
  if (!PROJECTED_TYPES.has(type)) return placeholder(event);
  if (type !== 'assistant/message' || !isRecord(data) || !isRecord(data.message)) return event;
  const { content } = data.message;
  if (!Array.isArray(content) || content.every((block) => isRecord(block) && block.type === 'text')) return event;
  const text = content.filter((block) => isRecord(block) && block.type === 'text');
  return { ...event, data: { ...data, message: { ...data.message, content: text } } };
}

/** The raw UTF-8 bytes of what `entry` projects to, and whether it is a checkpoint; `undefined` when it projects to nothing (SPEC §8.2). */
function projectedSize(entry: SessionEvent): { bytes: number; checkpoint: boolean } | undefined {
  const [item] = projectSurface([entry]);
  return item && { bytes: utf8ByteLength(item.text), checkpoint: item.checkpoint === true };
}

/** A projected message as a read at a budget sees it: its line and the raw UTF-8 bytes of its projected text. */
interface Message {
  line: number;
  /** Never 0: a message without text projects to nothing. */
  bytes: number;
  checkpoint: boolean;
}

/**
 * A message kept without its data: what folding reads, plus where to read it again and its size.
 * Never part of an answer: a read at a budget leaves it out or reads it again.
 */
class StandIn implements SessionEvent, Message {
  [key: string]: unknown;
  readonly type: string;
  readonly seq: number;
  readonly surfaceOp: SessionEvent['surfaceOp'];

  constructor(event: SessionEvent, readonly line: number, readonly bytes: number) {
    this.type = sharedType(event.type);
    this.seq = event.seq;
    this.surfaceOp = event.surfaceOp;
  }

  // On the prototype, so that a stand-in costs only its own five fields (one per surface message).
  get data(): undefined {
    return undefined;
  }

  /** Folding never reads it, and a stand-in never reaches an answer. */
  get time(): number {
    return 0;
  }

  get checkpoint(): false {
    return false;
  }
}

/**
 * The first pass of one read at a budget ({@link RetainedRead.keep}, {@link RetainedRead.fold}),
 * then the answer at the budget ({@link RetainedRead.answer}).
 */
class RetainedRead {
  /** The full projected messages kept (texts held; checkpoints always). */
  private readonly full = new WeakMap<SessionEvent, Message>();
  /** Text bytes of the full messages but checkpoints, as of the last fold plus those kept since. */
  private held = 0;
  /** Past the bound: every message but checkpoints is kept as a stand-in from now on. */
  withholding = false;

  constructor(private readonly bound: number) {}

  /** The first pass's {@link KeepEvent}. */
  readonly keep = (event: SessionEvent, line: number): SessionEvent => {
    const entry = surfaceEntry(event);
    if (!PROJECTED_TYPES.has(entry.type)) return entry;
    const size = projectedSize(entry);
    // A message that projects to nothing never needs its data.
    if (size === undefined) return placeholder(entry);
    const message = { line, ...size };
    // Retention keeps every checkpoint (SPEC §8.3): their texts are held.
    if (message.checkpoint) {
      this.full.set(entry, message);
      return entry;
    }
    if (this.withholding) return new StandIn(entry, line, message.bytes);
    this.full.set(entry, message);
    if ((this.held += heldCost(message)) > this.bound) this.withholding = true;
    return entry;
  };

  /** The first pass's compaction: folds, then recounts the texts held, or turns them into stand-ins once withholding. */
  readonly fold = (events: SessionEvent[]): SessionEvent[] => {
    const surface = foldSurface(events);
    this.held = 0;
    return surface.map((event) => {
      const message = this.full.get(event);
      if (message === undefined || message.checkpoint) return event;
      if (this.withholding) return new StandIn(event, message.line, message.bytes);
      this.held += heldCost(message);
      return event;
    });
  };

  /** The message `event` is, if it is a projected message. */
  private messageOf(event: SessionEvent): Message | undefined {
    return event instanceof StandIn ? event : this.full.get(event);
  }

  /**
   * The answer at `budget` from `surface` (the first pass's surface as `prepare` folds it): its projected messages
   * that retention may keep, in surface order, and the others counted as `withheld`. Retention
   * keeps the checkpoints, the newest message, and the newest others while they fit (SPEC §8.3);
   * each kept one costs at least its raw text bytes, so walking raw sizes from the newest never
   * stops before retention does, and what it leaves out is older than every other message left in
   * but the checkpoints. Events that project to nothing are left out too; the caller checks that
   * the answer folds to itself (SPEC §8.2), which leaving nodes out may break.
   */
  answer(surface: readonly SessionEvent[], budget: number): Pick<SessionRead, 'events' | 'withheld'> {
    const projected = surface.filter((event) => this.messageOf(event) !== undefined);
    const newest = projected.length - 1;
    let total = 0;
    projected.forEach((event, i) => {
      const message = this.messageOf(event)!;
      if (i === newest || message.checkpoint) total += message.bytes;
    });
    // The oldest message but checkpoints that may be kept: every older one but checkpoints is left out.
    let oldest = newest;
    while (oldest > 0) {
      const { bytes, checkpoint } = this.messageOf(projected[oldest - 1]!)!;
      if (!checkpoint && total + bytes > budget) break;
      if (!checkpoint) total += bytes;
      oldest--;
    }
    const events: SessionEvent[] = [];
    const withheld = { messages: 0, bytes: 0 };
    projected.forEach((event, i) => {
      const message = this.messageOf(event)!;
      if (i >= oldest || message.checkpoint) {
        events.push(event);
      } else {
        withheld.messages++;
        withheld.bytes += message.bytes;
      }
    });
    return withheld.messages > 0 ? { events, withheld } : { events };
  }
}

/**
 * Reads a log's surface and title (SPEC §11.2.2, §8.2): the folded surface with placeholders for
 * what projection never reads. With `budget` (UTF-8 bytes of a reference object), messages
 * retention cannot keep at that budget are left out and counted in `withheld`; the log may then be
 * opened a second time to read again the kept messages whose texts were not held: once the texts
 * held pass `heldBytes` (default {@link heldBound}; tests pass a small one).
 * @throws SessionReferenceError as the pipeline, and `SESSION_REFERENCE_READ_FAILED` when the log
 * changed between the two passes (a line no longer holds the event it held).
 */
export async function readSessionSurface(open: OpenLog, options: ReadOptions, budget?: number, heldBytes = heldBound(budget ?? 0)): Promise<SessionRead> {
  const retained = budget === undefined ? undefined : new RetainedRead(heldBytes);
  const read = await readFolded(open, options, retained);
  if (budget === undefined || !retained?.withholding) return read;
  // `prepare` folds what it is given again (SPEC §8.2), which may change a surface (repeated seqs,
  // a replace naming a seq that comes later): the answer is taken from that fold, and is exact
  // when it folds to itself. Else nothing is left out, and every stand-in is read again.
  const answer = retained.answer(foldSurface(read.events), budget);
  if (foldsToItself(answer.events)) Object.assign(read, answer);
  const reread = new Map<number, StandIn>();
  for (const event of read.events) if (event instanceof StandIn) reread.set(event.line, event);
  if (reread.size === 0) return read;
  const found = await readAgain(open, options, read.header, reread);
  read.events = read.events.map((event) => (event instanceof StandIn ? found.get(event.line)! : event));
  return read;
}

/** The first pass: the folded surface (stand-ins included for a read at a budget), header and title. */
async function readFolded(open: OpenLog, options: ReadOptions, retained: RetainedRead | undefined): Promise<SessionRead> {
  // Folded as the lines go by, so shadowed events (a compacted history) are not held to the end.
  const collector = await collectLog(await open(), retained?.keep ?? surfaceEntry, options, retained?.fold ?? foldSurface);
  return { header: collector.finish(), capturedThroughSeq: collector.lastSeq, events: foldSurface(collector.events), title: collector.title };
}

/** True when folding `events` gives them back, node for node. */
function foldsToItself(events: readonly SessionEvent[]): boolean {
  const folded = foldSurface(events);
  return folded.length === events.length && folded.every((event, i) => event === events[i]);
}

/**
 * The second pass: the events at the lines of `reread`, as a surface read keeps them, each checked
 * to be the event its stand-in stood for (same type, seq and `surfaceOp`, a text of the same size,
 * not a checkpoint) in a log with the same header id.
 */
async function readAgain(open: OpenLog, options: ReadOptions, header: SessionHeader, reread: Map<number, StandIn>): Promise<Map<number, SessionEvent>> {
  const found = new Map<number, SessionEvent>();
  const keep = (event: SessionEvent, line: number) => {
    const standIn = reread.get(line)!;
    const entry = surfaceEntry(event);
    const size = projectedSize(entry);
    const same =
      event.type === standIn.type &&
      Object.is(event.seq, standIn.seq) &&
      JSON.stringify(event.surfaceOp) === JSON.stringify(standIn.surfaceOp) &&
      size?.bytes === standIn.bytes &&
      !size.checkpoint;
    if (!same) throw changed(line);
    found.set(line, entry);
    return undefined;
  };
  const collector = await collectLog(await open(), keep, options, undefined, new Set(reread.keys()));
  if (collector.finish().id !== header.id) throw changed(1);
  for (const line of reread.keys()) if (!found.has(line)) throw changed(line);
  return found;
}

function changed(line: number) {
  return fail('READ_FAILED', `the log changed while it was being read: line ${line} no longer holds the event it held`);
}
