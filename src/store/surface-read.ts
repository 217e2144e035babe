/**
 * Reading a log's surface and title for a store (SPEC §11.2.2, §8): only what projection and
 * retention can use is kept, and at a reference budget (`readRetainedSurface`), message texts
 * retention cannot keep are not held either.
 *
 * A read at a budget keeps each message as a slot: what folding reads, its line and projected
 * size, and the message itself while its text is held. Texts are held until they pass a bound
 * ({@link heldBound}); past it, the oldest held texts are dropped as newer messages come, so that
 * only the newest within a window ({@link windowBound}) stay held. Once the log has ended, the
 * folded surface says which messages retention could keep at the budget: the checkpoints, the
 * newest message, and the newest others while their raw text sizes fit (a lower bound of what
 * retention counts, so it never keeps one more). Those are the answer: every other message is left
 * out and counted in `withheld`, and events that project to nothing are left out too. Messages in
 * the answer whose texts were dropped (older than the window: a surface whose newest messages were
 * replaced) are read again from their lines in a second pass over the log, which holds nothing but
 * them. A log whose texts stay under the bound (a compacted one, as dsh writes long sessions) is
 * answered as `readSurface` answers; either way, a log is usually read once.
 * @module
 */
import { fail } from '../errors.js';
import { projectSurface } from '../projection.js';
import { foldSurface, MESSAGE_BEARING_TYPES } from '../surface.js';
import type { SessionEvent, SessionHeader } from '../types.js';
import { utf8ByteLength } from '../utf8.js';
import { isRecord } from './collect.js';
import { collectLog, type ReadOptions, type StoreSource } from './pipeline.js';

export { checkBudget } from './read-checks.js';

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
export type OpenLog = () => StoreSource | Promise<StoreSource>;

/** An {@link OpenLog} that gives `source`, already opened, first, then `reopen()` for every later call. */
export function firstThen<S extends StoreSource>(source: S, reopen: () => S | Promise<S>): () => S | Promise<S> {
  let first: S | undefined = source;
  return () => {
    const opened = first ?? reopen();
    first = undefined;
    return opened;
  };
}

/** Event types whose data projection reads (SPEC §8.2); every other event is kept as a placeholder. */
const PROJECTED_TYPES: ReadonlySet<string> = new Set(['user/message', 'steering/message', 'assistant/message']);

/** A surface read uses the data of projected rows only: the others reach it without (SPEC §11.2.6). */
export const readsProjected = (type: string) => PROJECTED_TYPES.has(type);

/**
 * What a read at a budget holds of full messages before it drops any text: 16 MiB, counted as the
 * raw UTF-8 bytes of each message's projected text plus {@link MESSAGE_OVERHEAD} (its objects),
 * and at least 4× the budget. A log whose texts stay under it is answered as `readSurface` answers.
 */
const HELD_BYTES = 16 * 1024 * 1024;

/**
 * What a read at a budget holds of the newest messages once it has passed {@link HELD_BYTES}
 * (counted the same way): 1 MiB, and at least 4× the budget, so the messages retention keeps
 * (the newest ones, while they fit the budget) are usually still held when the log ends and the
 * log is read once.
 */
const WINDOW_BYTES = 1024 * 1024;

/** What a parsed message costs besides its text, as a read at a budget counts it (its event, data, content array and block objects). */
const MESSAGE_OVERHEAD = 512;

/** What holding a full message counts toward {@link HELD_BYTES} and {@link WINDOW_BYTES}. */
function heldCost(message: Message): number {
  return MESSAGE_OVERHEAD + message.bytes;
}

/** The bound of {@link HELD_BYTES} for a read at `budget` bytes. */
export function heldBound(budget: number): number {
  return Math.max(HELD_BYTES, 4 * budget);
}

/** The bound of {@link WINDOW_BYTES} for a read at `budget` bytes. */
export function windowBound(budget: number): number {
  return Math.max(WINDOW_BYTES, 4 * budget);
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

/**
 * An event without its data: what folding reads (`type`, `seq`, `surfaceOp`) and `time`. One
 * object literal per shape: a property added afterwards would cost each placeholder an
 * out-of-object property array (V8), and a surface holds one placeholder per tool result.
 */
function placeholder({ type, seq, time, surfaceOp }: SessionEvent): SessionEvent {
  const shared = sharedType(type);
  return surfaceOp === undefined ? { type: shared, seq, time, data: undefined } : { type: shared, seq, time, data: undefined, surfaceOp };
}

function isTextBlock(block: unknown): boolean {
  return isRecord(block) && block.type === 'text';
}

/**
 * Lets go of what projection never reads of a message (SPEC §8.2): its non-text blocks (images,
 * reasoning, tool calls), and with `enveloped` (a user message), when it carries an envelope
 * (§9.4), its model-visible content (which holds the snapshots it was sent with) and all of the
 * envelope but `display`'s text blocks.
 */
function stripMessage(message: Record<string, unknown>, enveloped: boolean): void {
  const { content, envelope } = message;
  if (enveloped && envelope != null) {
    message.content = undefined;
    const { display } = envelope as Record<string, unknown>;
    message.envelope = { display: Array.isArray(display) ? display.filter(isTextBlock) : display };
  } else if (Array.isArray(content)) {
    message.content = content.filter(isTextBlock);
  }
}

/**
 * What a surface read keeps of an event (SPEC §8): nothing of an event folding passes over (no
 * `surfaceOp` and no message: turn and step markers, tool calls), which can never reach the
 * surface; of a message, what projection reads: its text blocks and of an enveloped user message
 * its `envelope.display` ({@link stripMessage}: the event is the read's own, parsed from its
 * line), so that what a read holds of a message is about its projected text; anything else as a
 * placeholder holding what folding reads.
 */
export function surfaceEntry(event: SessionEvent): SessionEvent | undefined {
  const { type, data } = event;
  if (event.surfaceOp === undefined && !MESSAGE_BEARING_TYPES.has(type)) return undefined;
  if (!PROJECTED_TYPES.has(type)) return placeholder(event);
  if (isRecord(data)) {
    // Projection reads the envelopes of user messages only; the text of an assistant message, and
    // maybe of a steering message, is in `data.message` (SPEC §4.5).
    const enveloped = type !== 'assistant/message';
    stripMessage(data, enveloped);
    if (isRecord(data.message)) stripMessage(data.message, enveloped);
  }
  return event;
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
 * A projected message as a read at a budget keeps it: what folding reads, where to read it again,
 * its size, and the event itself while its text is held ({@link Slot.event}). Never part of an
 * answer: the answer holds the event, read again if its text was dropped.
 */
class Slot implements SessionEvent, Message {
  [key: string]: unknown;
  readonly type: string;
  readonly seq: number;
  readonly surfaceOp: SessionEvent['surfaceOp'];

  /**
   * @param event The message as a surface read keeps it, `undefined` once its text is dropped
   *   (checkpoints' never are).
   */
  constructor(public event: SessionEvent | undefined, readonly line: number, readonly bytes: number, readonly checkpoint: boolean) {
    this.type = sharedType(event!.type);
    this.seq = event!.seq;
    this.surfaceOp = event!.surfaceOp;
  }

  // On the prototype, so that a slot costs only its own fields (one per surface message).
  get data(): undefined {
    return undefined;
  }

  /** Folding never reads it, and a slot never reaches an answer. */
  get time(): number {
    return 0;
  }
}

/**
 * The first pass of one read at a budget ({@link RetainedRead.keep}, {@link RetainedRead.fold}),
 * then the answer at the budget ({@link RetainedRead.answer}). Every projected message is kept as
 * a {@link Slot}. Texts
 * are held, oldest first in a queue, until their cost passes the held bound; from then on the
 * oldest are dropped as newer ones come, so that only the newest that fit the window stay held.
 * Each fold ({@link RetainedRead.fold}) lets go of the texts of messages no longer on the surface.
 */
class RetainedRead {
  /** The slots whose texts are held, checkpoints aside, oldest first from {@link RetainedRead.first}. */
  private queue: Slot[] = [];
  private first = 0;
  /** Cost of the texts in {@link RetainedRead.queue}. */
  private held = 0;
  /** What {@link RetainedRead.held} may reach: the held bound, then the window once a text was dropped. */
  private limit: number;
  /** Some text was dropped: the answer may need a second pass. */
  dropped = false;

  constructor(heldBytes: number, private readonly windowBytes: number) {
    this.limit = heldBytes;
  }

  /** The first pass's {@link KeepEvent}. */
  readonly keep = (event: SessionEvent, line: number): SessionEvent | undefined => {
    const entry = surfaceEntry(event);
    if (entry === undefined || !PROJECTED_TYPES.has(entry.type)) return entry;
    const size = projectedSize(entry);
    // A message that projects to nothing never needs its data.
    if (size === undefined) return placeholder(entry);
    const slot = new Slot(entry, line, size.bytes, size.checkpoint);
    // Retention keeps every checkpoint (SPEC §8.3): their texts are held, outside the queue.
    if (size.checkpoint) return slot;
    this.queue.push(slot);
    this.held += heldCost(slot);
    while (this.held > this.limit) this.dropOldest();
    return slot;
  };

  /** The first pass's compaction: folds, then holds the texts of the surface's messages only (a compacted history's are let go). */
  readonly fold = (events: SessionEvent[]): SessionEvent[] => {
    const surface = foldSurface(events);
    this.queue = surface.filter((event): event is Slot => event instanceof Slot && event.event !== undefined && !event.checkpoint);
    this.first = 0;
    this.held = this.queue.reduce((sum, slot) => sum + heldCost(slot), 0);
    return surface;
  };

  private dropOldest(): void {
    const slot = this.queue[this.first]!;
    this.queue[this.first++] = undefined!;
    this.held -= heldCost(slot);
    slot.event = undefined;
    this.dropped = true;
    this.limit = this.windowBytes;
    // Drop the queue's dead front once it is half of it (amortized O(1) per message).
    if (this.first * 2 > this.queue.length) {
      this.queue.splice(0, this.first);
      this.first = 0;
    }
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
    const projected = surface.filter((event): event is Slot => event instanceof Slot);
    const newest = projected.length - 1;
    let total = 0;
    projected.forEach((slot, i) => {
      if (i === newest || slot.checkpoint) total += slot.bytes;
    });
    // The oldest message but checkpoints that may be kept: every older one but checkpoints is left out.
    let oldest = newest;
    while (oldest > 0) {
      const { bytes, checkpoint } = projected[oldest - 1]!;
      if (!checkpoint && total + bytes > budget) break;
      if (!checkpoint) total += bytes;
      oldest--;
    }
    const events: SessionEvent[] = [];
    const withheld = { messages: 0, bytes: 0 };
    projected.forEach((slot, i) => {
      if (i >= oldest || slot.checkpoint) {
        events.push(slot);
      } else {
        withheld.messages++;
        withheld.bytes += slot.bytes;
      }
    });
    return withheld.messages > 0 ? { events, withheld } : { events };
  }
}

/**
 * Reads a log's surface and title (SPEC §11.2.2, §8.2): the folded surface with placeholders for
 * what projection never reads. With `budget` (UTF-8 bytes of a reference object), messages
 * retention cannot keep at that budget are left out and counted in `withheld`, once texts were
 * dropped: when the texts held passed `heldBytes` (default {@link heldBound}), after which only
 * the newest within `windowBytes` (default {@link windowBound}, at most `heldBytes`) stay held.
 * The log is opened a second time only when a message the answer keeps had its text dropped, to
 * read it again. Tests pass small bounds.
 * @throws SessionReferenceError as the pipeline, and `SESSION_REFERENCE_READ_FAILED` when the log
 * changed between the two passes (a line no longer holds the event it held).
 */
export async function readSessionSurface(
  open: OpenLog,
  options: ReadOptions,
  budget?: number,
  heldBytes = heldBound(budget ?? 0),
  windowBytes = Math.min(heldBytes, windowBound(budget ?? 0)),
): Promise<SessionRead> {
  const retained = budget === undefined ? undefined : new RetainedRead(heldBytes, windowBytes);
  const read = await readFolded(open, options, retained);
  if (budget === undefined) return read;
  if (retained!.dropped) {
    // `prepare` folds what it is given again (SPEC §8.2), which may change a surface (repeated seqs,
    // a replace naming a seq that comes later): the answer is taken from that fold, and is exact
    // when it folds to itself. Else nothing is left out, and every dropped text is read again.
    const answer = retained!.answer(foldSurface(read.events), budget);
    if (foldsToItself(answer.events)) Object.assign(read, answer);
  }
  const reread = new Map<number, Slot>();
  for (const event of read.events) if (event instanceof Slot && event.event === undefined) reread.set(event.line, event);
  const found = reread.size === 0 ? undefined : await readAgain(open, options, read.header, reread);
  read.events = read.events.map((event) => (event instanceof Slot ? event.event ?? found!.get(event.line)! : event));
  return read;
}

/** The first pass: the folded surface (slots included for a read at a budget), header and title. */
async function readFolded(open: OpenLog, options: ReadOptions, retained: RetainedRead | undefined): Promise<SessionRead> {
  // Folded as the lines go by, so shadowed events (a compacted history) are not held to the end.
  const collector = await collectLog(await open(), retained?.keep ?? surfaceEntry, options, retained?.fold ?? foldSurface, undefined, readsProjected);
  return { header: collector.finish(), capturedThroughSeq: collector.lastSeq, events: foldSurface(collector.events), title: collector.title };
}

/** True when folding `events` gives them back, node for node. */
function foldsToItself(events: readonly SessionEvent[]): boolean {
  const folded = foldSurface(events);
  return folded.length === events.length && folded.every((event, i) => event === events[i]);
}

/**
 * The second pass: the events at the lines of `reread`, as a surface read keeps them, each checked
 * to be the event its slot stood for (same type, seq and `surfaceOp`, a text of the same size,
 * not a checkpoint) in a log with the same header id.
 */
async function readAgain(open: OpenLog, options: ReadOptions, header: SessionHeader, reread: Map<number, Slot>): Promise<Map<number, SessionEvent>> {
  const found = new Map<number, SessionEvent>();
  const keep = (event: SessionEvent, line: number) => {
    const slot = reread.get(line)!;
    const entry = surfaceEntry(event);
    const size = entry && projectedSize(entry);
    const same =
      event.type === slot.type &&
      Object.is(event.seq, slot.seq) &&
      JSON.stringify(event.surfaceOp) === JSON.stringify(slot.surfaceOp) &&
      size?.bytes === slot.bytes &&
      !size.checkpoint;
    if (!same) throw changed(line);
    found.set(line, entry!);
    return undefined;
  };
  const collector = await collectLog(await open(), keep, options, undefined, new Set(reread.keys()), readsProjected);
  if (collector.finish().id !== header.id) throw changed(1);
  for (const line of reread.keys()) if (!found.has(line)) throw changed(line);
  return found;
}

function changed(line: number) {
  return fail('READ_FAILED', `the log changed while it was being read: line ${line} no longer holds the event it held`);
}
