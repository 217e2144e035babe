/**
 * What names the runtime's word segmentation without running it, handed in by a host entry: the
 * Node entry gives its Node and ICU versions ({@link useSegmenterFingerprint}, src/node/store.ts),
 * so the core itself names no Node API (SPEC §1.1). A search index records it beside the
 * segmenter's answer on its sample (`segmenterSignature`, search/words.ts); a later load under the
 * same fingerprint trusts that answer instead of segmenting the sample again, which costs a
 * process its first `Intl.Segmenter` and ICU's Chinese, Japanese and Thai dictionaries (about
 * 13 ms of a warm CLI search in Node 20, issue 30 item 3). Without one, every load segments the
 * sample (SPEC §16.4: an index built by other ICU data is rebuilt).
 * @module
 */

let given: (() => string) | undefined;

/**
 * Hands the core a host's segmentation fingerprint (see the module doc), or takes it back
 * (`undefined`). Two runtimes giving the same text must split words alike. Shared by every index
 * of the realm.
 * @internal
 */
export function useSegmenterFingerprint(fingerprint: (() => string) | undefined): void {
  given = fingerprint;
}

/** The fingerprint a host entry handed in, or `undefined`. */
export function segmenterFingerprint(): string | undefined {
  return given?.();
}
