/**
 * What the search index keeps of a session's conversation for snippets and phrases (SPEC §16.2):
 * its items' texts as UTF-8 bytes, one buffer per session. A JavaScript string of text with any
 * character past U+00FF holds two bytes per UTF-16 code unit — twice the UTF-8 of mostly-ASCII
 * text that quotes one Chinese word or an arrow — so strings alone could take twice the indexed
 * text before any index; UTF-8 takes exactly the indexed bytes (SPEC §16.7: the index's memory,
 * snippet text included, at most twice the text). Texts are decoded only for the sessions a search
 * shows or checks for a phrase.
 * @module
 */

/** One indexed item of a session's conversation (SPEC §8.2), newest last. */
export interface IndexedItem {
  role: 'user' | 'assistant';
  text: string;
}

/** A session as the index is given it (and as its exported JSON holds it). */
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

/** A session as the index keeps it: its items' texts in one UTF-8 buffer. */
export interface StoredSession extends Omit<IndexedSession, 'items'> {
  /** Each item's role, in order: `u` for user, `a` for assistant. */
  roles: string;
  /** Where each item's text ends in `text`, in bytes. */
  ends: number[];
  /** The items' texts, UTF-8, one after the other. */
  text: Uint8Array;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** `session` as the index keeps it. */
export function storeSession({ items, ...session }: IndexedSession): StoredSession {
  const texts = items.map((item) => encoder.encode(item.text));
  const text = new Uint8Array(texts.reduce((sum, bytes) => sum + bytes.length, 0));
  const ends: number[] = [];
  for (const bytes of texts) {
    const start = ends.length === 0 ? 0 : ends[ends.length - 1]!;
    text.set(bytes, start);
    ends.push(start + bytes.length);
  }
  return { ...session, roles: items.map((item) => (item.role === 'user' ? 'u' : 'a')).join(''), ends, text };
}

/** The items of a kept session, decoded. */
export function itemsOf(session: StoredSession): IndexedItem[] {
  return session.ends.map((end, k) => ({
    role: session.roles[k] === 'u' ? 'user' : 'assistant',
    text: decoder.decode(session.text.subarray(k === 0 ? 0 : session.ends[k - 1], end)),
  }));
}

/** A kept session as it was given (for the exported JSON). */
export function plainSession(session: StoredSession): IndexedSession {
  const { id, identity, seq, title, cwd } = session;
  return { id, identity, seq, title, cwd, items: itemsOf(session) };
}
