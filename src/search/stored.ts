/**
 * What the search index keeps of a session's conversation for snippets and phrases (SPEC §16.2):
 * its items, compressed (raw deflate by fflate, synchronous: the runtime's `CompressionStream`
 * took 1.7 ms to pack and 1.1 ms to unpack a 2 KB session in Node 20, fflate some 0.05 ms), in the
 * index's own database beside the inverted index. SPEC §16.7 bounds the index's memory, snippet text
 * included, at twice the text it indexes; a session's conversation is often only a few KB (tool
 * output is most of a log and is never indexed), so what is kept per session counts: one row of
 * SQLite (no JavaScript object per session) and text at about half its UTF-8 size. Items are
 * decompressed only for the sessions a search shows or checks for a phrase.
 * @module
 */
import { deflateSync, inflateSync } from 'fflate';

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

/**
 * `items` as kept: the UTF-8 JSON of `[role, text]` pairs (`0` user, `1` assistant), compressed,
 * after its length (4 bytes, little-endian), so unpacking inflates into a buffer of the right size
 * at once (fflate otherwise grows its output by copies, most of an unpack's time).
 */
export function packItems(items: readonly IndexedItem[]): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(items.map(({ role, text }) => [role === 'user' ? 0 : 1, text])));
  // Level 1: a third of level 6's time for a few percent more bytes (a 300 KB session: 8 ms, not 23,
  // which would hold the event loop that long in one piece).
  const compressed = deflateSync(json, { level: 1 });
  const packed = new Uint8Array(4 + compressed.length);
  new DataView(packed.buffer).setUint32(0, json.length, true);
  packed.set(compressed, 4);
  return packed;
}

/**
 * The items `packItems` kept in `packed`.
 * @throws Error when `packed` is not what `packItems` writes (a damaged database: the caller
 * rebuilds, SPEC §16.4).
 */
export function unpackItems(packed: Uint8Array): IndexedItem[] {
  if (packed.length < 4) throw new Error('kept items are cut short');
  const size = new DataView(packed.buffer, packed.byteOffset, 4).getUint32(0, true);
  // Deflate expands at most 1032 to 1: a larger size is damage, never an allocation.
  if (size > (packed.length - 4) * 1032 + 64) throw new Error('kept items say a size their bytes cannot hold');
  const json = inflateSync(packed.subarray(4), { out: new Uint8Array(size) });
  if (json.length !== size) throw new Error('kept items are not the size they say');
  const pairs: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(json));
  if (!Array.isArray(pairs)) throw new Error('kept items are not an array');
  return pairs.map((pair: unknown) => {
    if (!Array.isArray(pair) || pair.length !== 2 || (pair[0] !== 0 && pair[0] !== 1) || typeof pair[1] !== 'string') throw new Error('a kept item is not [0 | 1, text]');
    return { role: pair[0] === 0 ? 'user' : 'assistant', text: pair[1] };
  });
}
