/**
 * A faster raw deflate (RFC 1951) than the search index's own, handed in by a host entry: the
 * Node entry gives zlib's `deflateRawSync` ({@link useHostDeflate}, src/node/store.ts), so the core
 * itself names no Node API (SPEC §1.1). The search index packs each session's kept items with it
 * when one is given (`stored.ts`), else with fflate; both write raw deflate, which fflate inflates.
 * In Node 20, zlib packed the bench's 2,000 sessions of about 2 KB of JSON in 95 ms of CPU, fflate
 * in 213 ms (each of fflate's calls allocates some 170 KB of tables; zlib's are native).
 * @module
 */

/** Compresses `bytes` as raw deflate at `level` (0, stored blocks, to 9). */
export type RawDeflate = (bytes: Uint8Array, level: number) => Uint8Array;

let given: RawDeflate | undefined;

/**
 * Hands the core a host's raw deflate (see the module doc), or takes it back (`undefined`). It
 * must write a raw deflate stream of `bytes` at `level`, synchronously. Shared by every index of
 * the realm.
 * @internal
 */
export function useHostDeflate(deflate: RawDeflate | undefined): void {
  given = deflate;
}

/** The raw deflate a host entry handed in, or `undefined` (then the index uses fflate). */
export function hostDeflate(): RawDeflate | undefined {
  return given;
}
