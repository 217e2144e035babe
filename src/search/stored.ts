/**
 * What the search index keeps of a session's conversation for snippets and phrases (SPEC §16.2):
 * its items, compressed (raw deflate by fflate, synchronous: the runtime's `CompressionStream`
 * took 1.7 ms to pack and 1.1 ms to unpack a 2 KB session in Node 20, fflate some 0.05 ms), in the
 * index's own database beside the inverted index. SPEC §16.7 bounds the index's memory, snippet text
 * included, at twice the text it indexes; a session's conversation is often only a few KB (tool
 * output is most of a log and is never indexed), so what is kept per session counts: one row of
 * SQLite (no JavaScript object per session) and text at about half its UTF-8 size. Items are
 * decompressed only for the sessions a search shows or checks for a phrase.
 *
 * fflate is loaded on first use ({@link loadDeflate}, `deflate.ts`), not with the search chunk: a
 * search that shows no hit and writes nothing never needs it, and loading it costs ~20 ms of CPU
 * in Node (a warm CLI search of 2,000 sessions, issue 30 item 3).
 * @module
 */
import { forEachSegment } from '../ascii-words.js';
import type * as Fflate from './deflate.js';
import { DamagedIndexError } from './damage.js';
import { engineRoot as root } from './root.js';

/** One indexed item of a session's conversation (SPEC §8.2), newest last. */
export interface IndexedItem {
  role: 'user' | 'assistant';
  text: string;
}

/** A session as the index is given it (and as a hit's snippets read it). */
export interface IndexedSession {
  id: string;
  /** The store's file identity when the listing gave one, else `undefined` (compare `seq`). */
  identity: string | undefined;
  /** `capturedThroughSeq` of the read that was indexed. */
  seq: number | null;
  /** The cleaned latest title (SPEC §6.6), `''` when none. */
  title: string;
  cwd: string;
  /** The newest items, at most `maxIndexBytes` UTF-8 bytes of text in all (SPEC §16.3). */
  items: IndexedItem[];
}

let fflate: typeof Fflate | undefined;

/**
 * Loads fflate for {@link packItems} and {@link unpackItems}, once per realm; await it before
 * either (the engine does, in `put` and `session`).
 */
export async function loadDeflate(): Promise<void> {
  fflate ??= await import('./deflate.js');
}

/** fflate, loaded. @throws Error when {@link loadDeflate} was not awaited first (a bug of the caller). */
function deflate(): typeof Fflate {
  if (fflate === undefined) throw new Error('stored.ts: await loadDeflate() before packing or unpacking kept items');
  return fflate;
}

/**
 * The newest of `items` holding at most `maxBytes` UTF-8 bytes of text in all, empty items left
 * out; the oldest one kept keeps its end (SPEC §16.3). What the index keeps of a session, however
 * its caller cut it: {@link unpackItems} holds kept items to this bound.
 */
export function keptItems(items: readonly IndexedItem[], maxBytes: number): IndexedItem[] {
  const kept: IndexedItem[] = [];
  let room = maxBytes;
  for (let k = items.length - 1; k >= 0 && room > 0; k--) {
    const { role, text } = items[k]!;
    if (text === '') continue;
    const bytes = root.utf8ByteLength(text);
    const cut = bytes <= room ? text : utf8Tail(text, room);
    if (cut !== '') kept.push({ role, text: cut });
    room -= bytes;
  }
  return kept.reverse();
}

/** The longest end of `text` of at most `maxBytes` UTF-8 bytes, whole code points, not starting inside a word. */
function utf8Tail(text: string, maxBytes: number): string {
  let start = text.length;
  let bytes = 0;
  while (start > 0) {
    const code = text.charCodeAt(start - 1);
    const pair = start > 1 && code >= 0xdc00 && code <= 0xdfff && /[\ud800-\udbff]/.test(text[start - 2]!);
    const size = pair ? 4 : code < 0x80 ? 1 : code < 0x800 ? 2 : 3;
    if (bytes + size > maxBytes) break;
    bytes += size;
    start -= pair ? 2 : 1;
  }
  // A word the cut split is left out: its end alone would be indexed and shown as a word. The
  // segmenter says where that end stops (text without spaces, Chinese or Thai, loses one word).
  if (start > 0 && WORD_CHAR.test(text[start - 1]!) && WORD_CHAR.test(text[start]!)) {
    let first = 0;
    forEachSegment(text.slice(start, start + 256), (from, to) => {
      if (from === 0) first = to;
    });
    start += first;
  }
  return text.slice(start);
}

/** A code unit that may be inside a word: a letter, digit, mark or `_` (a surrogate counts as one). */
const WORD_CHAR = /[\p{L}\p{N}\p{M}_\ud800-\udfff]/u;

/**
 * The most bytes the JSON of {@link packItems} can take for kept items of at most `maxBytes` UTF-8
 * bytes of text ({@link keptItems}): each byte of text at most 6 bytes of JSON (`\u0000`, a lone
 * surrogate's `\udc00` for its 3), each item (1 byte of text at least) 7 more (`[0,"`, `"]`, `,`),
 * and the brackets.
 */
export function maxPackedJsonBytes(maxBytes: number): number {
  return 13 * maxBytes + 2;
}

/**
 * JSON shorter than this (bytes) is kept in a stored block (level 0) rather than compressed: each
 * call of fflate's level 1 allocates some 170 KB of tables (about 50 µs in Node 20 however short
 * its input, against 3 µs for a stored block), and JSON this short would shrink by a few dozen
 * bytes at most (a 120-byte session: 90 bytes at level 1, 125 stored).
 */
const STORED_BELOW = 128;

/**
 * `items` as kept: the UTF-8 JSON of `[role, text]` pairs (`0` user, `1` assistant), compressed,
 * after its length (4 bytes, little-endian), so unpacking knows how much output to expect and
 * stops at it. Needs {@link loadDeflate} awaited first.
 */
export function packItems(items: readonly IndexedItem[]): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(items.map(({ role, text }) => [role === 'user' ? 0 : 1, text])));
  // Level 1: a third of level 6's time for a few percent more bytes (a 300 KB session: 8 ms, not 23,
  // which would hold the event loop that long in one piece). Below STORED_BELOW bytes, level 0:
  // deflate's stored block, still a raw deflate stream, without fflate's tables.
  // A host's own deflate when it gave one (`host-deflate.ts`: Node's zlib), else fflate's.
  const level = json.length < STORED_BELOW ? 0 : 1;
  const compressed = root.hostDeflate()?.(json, level) ?? deflate().deflateSync(json, { level });
  const packed = new Uint8Array(4 + compressed.length);
  new DataView(packed.buffer).setUint32(0, json.length, true);
  packed.set(compressed, 4);
  return packed;
}

/** Deflate's most output per input byte (a run of one byte, 258 per 2 bits): 1032. */
const MAX_INFLATE_RATIO = 1032;

/** Compressed bytes inflated at once, at most (beyond what the stated size still needs). */
const INFLATE_SLICE = 16_384;

/**
 * The items `packItems` kept in `packed`, when they are what {@link keptItems} keeps for
 * `maxBytes`. Nothing stored is believed without a bound: the stored length must be within
 * {@link maxPackedJsonBytes} and what the compressed bytes can give, and the bytes are inflated
 * in slices, stopping as soon as the output passes the stored length (a stream that would inflate
 * to gigabytes costs at most the stated length plus one slice's output, 16.5 MB); the items must
 * then be non-empty texts of at most `maxBytes` in all.
 * @throws DamagedIndexError when `packed` breaks any of these (the caller rebuilds, SPEC §16.4).
 */
export function unpackItems(packed: Uint8Array, maxBytes: number): IndexedItem[] {
  if (packed.length < 4) throw new DamagedIndexError('kept items are cut short');
  const size = new DataView(packed.buffer, packed.byteOffset, 4).getUint32(0, true);
  const compressed = packed.subarray(4);
  if (size > maxPackedJsonBytes(maxBytes) || size > compressed.length * MAX_INFLATE_RATIO) throw new DamagedIndexError('kept items say a size past their bound');
  const json = boundedInflate(compressed, size);
  let pairs: unknown;
  try {
    pairs = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(json));
  } catch {
    throw new DamagedIndexError('kept items are not JSON');
  }
  if (!Array.isArray(pairs)) throw new DamagedIndexError('kept items are not an array');
  let room = maxBytes;
  return pairs.map((pair: unknown) => {
    if (!Array.isArray(pair) || pair.length !== 2 || (pair[0] !== 0 && pair[0] !== 1) || typeof pair[1] !== 'string' || pair[1] === '') {
      throw new DamagedIndexError('a kept item is not [0 | 1, text]');
    }
    room -= root.utf8ByteLength(pair[1]);
    if (room < 0) throw new DamagedIndexError('kept items hold more text than maxIndexBytes');
    return { role: pair[0] === 0 ? 'user' : 'assistant', text: pair[1] };
  });
}

/**
 * The inflation of `compressed`, which must be exactly `size` bytes: stopped as soon as it passes
 * them, give or take one slice of {@link INFLATE_SLICE} compressed bytes. Input of one slice at
 * most (most kept items) is inflated at once into a buffer of `size` bytes: fflate writes nothing
 * past it and reports the length it would have had.
 */
function boundedInflate(compressed: Uint8Array, size: number): Uint8Array {
  if (compressed.length <= INFLATE_SLICE) {
    let json: Uint8Array;
    try {
      json = deflate().inflateSync(compressed, { out: new Uint8Array(size) });
    } catch {
      throw new DamagedIndexError('kept items are not a deflate stream of the size they say');
    }
    if (json.length !== size) throw new DamagedIndexError('kept items are not the size they say');
    return json;
  }
  const out = new Uint8Array(size);
  let length = 0;
  let ended = false;
  const inflater = new (deflate().Inflate)((chunk, final) => {
    if (length + chunk.length > size) throw new DamagedIndexError('kept items inflate past the size they say');
    out.set(chunk, length);
    length += chunk.length;
    ended ||= final;
  });
  try {
    for (let at = 0; at < compressed.length && !ended; ) {
      // A slice inflates to at most MAX_INFLATE_RATIO times its size: INFLATE_SLICE (16 KiB) of
      // input at once stops a stream at most 16.5 MB past its stated size (most kept items are
      // one slice: one push).
      const end = Math.min(compressed.length, at + INFLATE_SLICE);
      inflater.push(compressed.subarray(at, end), end === compressed.length);
      at = end;
    }
  } catch (error) {
    throw error instanceof DamagedIndexError ? error : new DamagedIndexError('kept items are not a deflate stream');
  }
  if (length !== size) throw new DamagedIndexError('kept items are not the size they say');
  return out;
}
