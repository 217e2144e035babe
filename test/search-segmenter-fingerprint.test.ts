/**
 * The host's segmentation fingerprint (src/host-segmenter.ts, SPEC §16.4), in every runtime: an
 * index names the fingerprint it was built under; loaded under the same one, its segmenter
 * signature is taken as it is; under another fingerprint, or none, the sample is segmented and an
 * index of other words is rebuilt (`indexFromBytes` gives `undefined`).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { useSegmenterFingerprint } from '../src/host-segmenter.js';
import { createIndex, indexFromBytes, indexToBytes } from '../src/search/index-bytes.js';
import * as kit from '../src/search/kit.js';
import { useRoot } from '../src/search/root.js';

useRoot(kit);

const MAX = 4096;

/** The bytes of a new empty index, then of the same with `change` run on its database. */
async function indexBytes(change?: (run: (sql: string) => void) => void): Promise<Uint8Array> {
  const index = await createIndex(MAX);
  const bytes = await indexToBytes(index);
  index.close();
  if (change === undefined) return bytes;
  const opened = (await indexFromBytes(bytes, MAX))!;
  change((sql) => opened.sql.run(sql));
  const changed = await indexToBytes(opened);
  opened.close();
  return changed;
}

/** True when `bytes` load as an index here (else the caller rebuilds). */
async function loads(bytes: Uint8Array): Promise<boolean> {
  const index = await indexFromBytes(bytes, MAX);
  index?.close();
  return index !== undefined;
}

describe('the segmentation fingerprint of a host (src/host-segmenter.ts)', () => {
  afterEach(() => useSegmenterFingerprint(undefined));

  it('an index records the fingerprint it was built under, and none without one', async () => {
    useSegmenterFingerprint(() => 'host-A');
    const named = (await indexFromBytes(await indexBytes(), MAX))!;
    expect(named.sql.all("SELECT value FROM search_meta WHERE key = 'wordsBy'")).toEqual([['host-A']]);
    named.close();
    useSegmenterFingerprint(undefined);
    const unnamed = (await indexFromBytes(await indexBytes(), MAX))!;
    expect(unnamed.sql.all("SELECT key FROM search_meta ORDER BY key")).toEqual([['format'], ['maxIndexBytes'], ['words']]);
    unnamed.close();
  });

  it('under the same fingerprint the signature is taken as it is; under another or none it is checked', async () => {
    useSegmenterFingerprint(() => 'host-A');
    const right = await indexBytes();
    const otherWords = await indexBytes((run) => run("UPDATE search_meta SET value = 'other words' WHERE key = 'words'"));
    expect(await loads(otherWords)).toBe(true);
    for (const other of [() => 'host-B', undefined]) {
      useSegmenterFingerprint(other);
      expect(await loads(otherWords)).toBe(false);
      expect(await loads(right)).toBe(true);
    }
  });

  it('an index whose words split as here is named for this host when loaded: its next export is trusted without segmenting', async () => {
    const unnamed = await indexBytes();
    useSegmenterFingerprint(() => 'host-A');
    const index = (await indexFromBytes(unnamed, MAX))!;
    const exported = await indexToBytes(index);
    index.close();
    const again = (await indexFromBytes(exported, MAX))!;
    expect(again.sql.all("SELECT value FROM search_meta WHERE key = 'wordsBy'")).toEqual([['host-A']]);
    again.close();
  });

  it('meta rows other than those an index is built with are another index: rebuilt', async () => {
    useSegmenterFingerprint(() => 'host-A');
    const variants = [
      (run: (sql: string) => void) => run("INSERT INTO search_meta(key, value) VALUES ('extra', 'x')"),
      (run: (sql: string) => void) => run("DELETE FROM search_meta WHERE key = 'words'"),
      (run: (sql: string) => void) => run("UPDATE search_meta SET value = 'other' WHERE key = 'format'"),
      (run: (sql: string) => void) => run("UPDATE search_meta SET value = '1' WHERE key = 'maxIndexBytes'"),
      (run: (sql: string) => void) => run("UPDATE search_meta SET key = 'wordsby' WHERE key = 'wordsBy'"),
    ];
    for (const change of variants) expect(await loads(await indexBytes(change))).toBe(false);
    // Without the fingerprint row, the signature is checked and the index loads.
    expect(await loads(await indexBytes((run) => run("DELETE FROM search_meta WHERE key = 'wordsBy'")))).toBe(true);
  });
});
