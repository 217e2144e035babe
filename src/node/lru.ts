/**
 * The bounded caches of the Node store (SPEC §11.2.5): at most a number of entries and of bytes,
 * least recently used first out, and a way to drop what a listing no longer finds.
 * @module
 */

/**
 * A string-keyed cache of at most `maxEntries` entries and `maxBytes` bytes (each entry's bytes
 * as `sizeOf` estimates them), the least recently used entry evicted first. `get` and `set` count
 * as uses. An entry larger than `maxBytes` on its own is not kept.
 */
export class LruCache<V> {
  /** Entries in order of use, least recent first (a `Map` keeps insertion order). */
  private readonly entries = new Map<string, { value: V; bytes: number }>();
  /** Bytes of every entry, as `sizeOf` estimated them. */
  bytes = 0;
  /** Entries set or deleted so far (evictions included): unchanged, the cache holds what it held. */
  changes = 0;

  constructor(
    readonly maxEntries: number,
    readonly maxBytes: number,
    private readonly sizeOf: (key: string, value: V) => number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }

  /** The value of `key`, now the most recently used. */
  get(key: string): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Sets `key` (the most recently used), then evicts the least recently used while over a bound. */
  set(key: string, value: V): void {
    this.delete(key);
    this.changes++;
    const bytes = this.sizeOf(key, value);
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { value, bytes });
    this.bytes += bytes;
    while (this.entries.size > this.maxEntries || this.bytes > this.maxBytes) this.delete(this.entries.keys().next().value!);
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
    this.changes++;
  }

  /** The value of `key`, its place in the order of use left as it is. */
  peek(key: string): V | undefined {
    return this.entries.get(key)?.value;
  }

  /** Every entry as `[key, value]`, least recently used first (not counted as uses). */
  *entriesOf(): IterableIterator<[string, V]> {
    for (const [key, entry] of this.entries) yield [key, entry.value];
  }

  /** Drops every entry whose key is not in `keys` (the files a listing found). */
  retain(keys: ReadonlySet<string>): void {
    for (const key of [...this.entries.keys()]) if (!keys.has(key)) this.delete(key);
  }
}
