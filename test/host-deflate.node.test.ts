/**
 * The Node entry's raw deflate (src/host-deflate.ts `useHostDeflate`, handed zlib's
 * `deflateRawSync` by src/node/store.ts): the search index packs kept items with it, and unpacks
 * them with fflate as it unpacks its own; opening a Node store installs it.
 */
import { deflateRawSync } from 'node:zlib';
import fc from 'fast-check';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { hostDeflate, useHostDeflate } from '../src/host-deflate.js';
import { createDshStoreSessionQuery } from '../src/node/index.js';
import * as kit from '../src/search/kit.js';
import { useRoot } from '../src/search/root.js';
import { loadDeflate, packItems, unpackItems, type IndexedItem } from '../src/search/stored.js';

useRoot(kit);
beforeAll(loadDeflate);
afterEach(() => useHostDeflate(undefined));

const MAX = 256 * 1024;
const zlib = (bytes: Uint8Array, level: number) => deflateRawSync(bytes, { level });
const items = fc.array(fc.record({ role: fc.constantFrom<IndexedItem['role']>('user', 'assistant'), text: fc.string({ minLength: 1, maxLength: 300, unit: 'binary' }) }), { minLength: 1, maxLength: 5 });

describe("a host's raw deflate packs kept items", () => {
  it('items packed by zlib are its raw deflate of their JSON (stored below 128 bytes), and unpack as packed', () => {
    useHostDeflate(zlib);
    fc.assert(
      fc.property(items, (given) => {
        const packed = packItems(given);
        const json = new TextEncoder().encode(JSON.stringify(given.map(({ role, text }) => [role === 'user' ? 0 : 1, text])));
        expect([...packed.subarray(4)]).toEqual([...deflateRawSync(json, { level: json.length < 128 ? 0 : 1 })]);
        expect(unpackItems(packed, MAX)).toEqual(given);
      }),
      { seed: 30_21, numRuns: 100 },
    );
  });

  it('without one, items are packed by fflate and unpack alike', () => {
    fc.assert(
      fc.property(items, (given) => {
        expect(unpackItems(packItems(given), MAX)).toEqual(given);
      }),
      { seed: 30_22, numRuns: 50 },
    );
  });

  it('opening a Node store hands the index zlib', () => {
    expect(hostDeflate()).toBeUndefined();
    createDshStoreSessionQuery({ root: '/nonexistent-dsh-store' });
    const json = new TextEncoder().encode('x'.repeat(500));
    expect([...hostDeflate()!(json, 1)]).toEqual([...deflateRawSync(json, { level: 1 })]);
  });
});
