/**
 * Search hardening, class by class (issue 28 items 1–3), in every runtime:
 * - forged indexes: kept items that inflate past their bound (any size, any claim, any session)
 *   or that disagree with the index's words are damage, found where used and rebuilt — the answer
 *   is a fresh build's (SPEC §16.4, §16.7);
 * - path-shaped queries: a run of a cwd's words with its own separators (`srv/alpha`,
 *   `/srv/alpha`, `proj-x`) finds the session by its cwd, as text and titles are found (§16.2);
 * - long unspaced queries: segmented in slices, yielding and honouring an abort inside; past
 *   `MAX_QUERY_LENGTH` a query is `INVALID_ARGUMENT` (docs/service.md).
 * Seeds are fixed; fast-check prints the seed and path of a failure.
 */
import fc from 'fast-check';
import { deflateSync } from 'fflate';
import { beforeAll, describe, expect, it } from 'vitest';
import { createSessionReferences, type SessionSearchHit } from '../src/index.js';
import { DamagedIndexError } from '../src/search/damage.js';
import { indexFromBytes, indexToBytes } from '../src/search/index-bytes.js';
import * as kit from '../src/search/kit.js';
import { useRoot } from '../src/search/root.js';
import { loadDeflate, maxPackedJsonBytes, packItems, unpackItems } from '../src/search/stored.js';
import { MAX_QUERY_LENGTH } from '../src/search/words.js';
import { expectRejectCode } from './helpers.js';
import { assistantMessage, fakeQuery, userMessage, type FakeSession } from './sessions.js';

useRoot(kit);

const AGENT = { id: 'agent', cwd: '/w/agent' };
const ids = (hits: SessionSearchHit[]) => hits.map((hit) => hit.sessionId);

function session(id: string, createdAt: number, texts: string[], title?: string, cwd?: string): FakeSession {
  const events = texts.map((text, k) => (k % 2 ? assistantMessage(k + 1, text) : userMessage(k + 1, text)));
  return { header: { id, createdAt, ...(cwd ? { cwd } : {}) }, events, ...(title ? { title } : {}) };
}

const SESSIONS = [
  session('s-ledger', 5, ['Which checksum should the ledger export use?', 'We chose XXH64 for the checksum.'], 'Ledger export', '/srv/alpha'),
  session('s-freight', 4, ['Let us triage the freight schemas today.', 'The zeppelin schema is fine.'], 'Freight triage', '/home/u/proj-x'),
  session('s-chinese', 3, ['我们讨论了数据库迁移的方案', '校验和使用XXH64算法。'], '数据库迁移'),
];

/** `packed` length-prefixed as `packItems` writes it, claiming `size` bytes of JSON. */
function withClaim(compressed: Uint8Array, size: number): Uint8Array {
  const packed = new Uint8Array(4 + compressed.length);
  new DataView(packed.buffer).setUint32(0, size >>> 0, true);
  packed.set(compressed, 4);
  return packed;
}

/** A deflate stream of `size` bytes of `byte` (a run: about 1,000 times smaller than what it inflates to). */
function bomb(size: number, byte: number): Uint8Array {
  return deflateSync(new Uint8Array(size).fill(byte), { level: 1 });
}

/** `bytes` (an exported index) with `change` run on its database, under a valid checksum (what a forger can write). */
async function forged(bytes: Uint8Array, change: (run: (sql: string, ...bindings: Array<string | number | Uint8Array | null>) => void) => void): Promise<Uint8Array> {
  const index = (await indexFromBytes(bytes, 256 * 1024))!;
  change((sql, ...bindings) => index.sql.run(sql, ...bindings));
  const out = await indexToBytes(index);
  index.close();
  return out;
}

describe('forged indexes: no stored size believed without a bound (issue 28.1)', () => {
  beforeAll(loadDeflate);
  const MAX = 4096;

  it('kept items unpack to at most what maxIndexBytes allows, or are damage — whatever they inflate to and claim', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 4 * 1024 * 1024 }),
        fc.constantFrom(0, 0x20, 0x41),
        fc.oneof(fc.constant('honest'), fc.constant('max'), fc.integer({ min: 0, max: 0xffffffff })),
        (size, byte, claim) => {
          const compressed = bomb(size, byte);
          const claimed = claim === 'honest' ? size : claim === 'max' ? maxPackedJsonBytes(MAX) : claim;
          // Zeros and spaces and letters are never items: every such stream is damage, found by the bound or the parse.
          expect(() => unpackItems(withClaim(compressed, claimed), MAX)).toThrow(DamagedIndexError);
        },
      ),
      { seed: 28_1, numRuns: 40 },
    );
  });

  it('valid JSON items past maxIndexBytes (one item or many, empty texts) are damage; items within it unpack as packed', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 3000 }), { minLength: 1, maxLength: 12 }), (texts) => {
        const items = texts.map((text, k) => ({ role: k % 2 ? ('assistant' as const) : ('user' as const), text }));
        const bytes = texts.reduce((sum, text) => sum + kit.utf8ByteLength(text), 0);
        const packed = packItems(items);
        if (bytes <= MAX && texts.every((text) => text !== '')) expect(unpackItems(packed, MAX)).toEqual(items);
        else expect(() => unpackItems(packed, MAX)).toThrow(DamagedIndexError);
      }),
      { seed: 28_12, numRuns: 60 },
    );
  });

  it('items of a few dozen bytes are kept in a stored deflate block, longer ones compressed; both unpack as packed', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 200 }), (text) => {
        const items = [{ role: 'assistant' as const, text }];
        const packed = packItems(items);
        const json = new TextEncoder().encode(JSON.stringify([[1, text]]));
        // A final stored block starts with the byte 1 (BFINAL, BTYPE 00), then LEN and NLEN: the JSON follows as is.
        if (json.length < 128) expect([...packed.subarray(4, 9)]).toEqual([1, json.length & 0xff, json.length >> 8, ~json.length & 0xff, (~json.length >> 8) & 0xff]);
        else expect(packed.length).toBeLessThan(4 + 5 + json.length);
        expect(unpackItems(packed, MAX)).toEqual(items);
      }),
      { seed: 28_13, numRuns: 200 },
    );
  });

  it('an exported index with any session’s items forged (bombs, lies, other text) is rebuilt: the answer is a fresh build’s', async () => {
    const query = fakeQuery(SESSIONS);
    const fresh = createSessionReferences({ sessionQuery: query });
    const queries = ['checksum', 'freight zeppelin', '数据库'];
    const expected = await Promise.all(queries.map((q) => fresh.searchSessions(AGENT, q)));
    const bytes = await fresh.exportSearchIndex();
    const items = fc.oneof(
      fc.record({ size: fc.integer({ min: 0, max: 8 * 1024 * 1024 }), byte: fc.constantFrom(0x20, 0x5b) }).map(({ size, byte }) => withClaim(bomb(size, byte), size)),
      fc.integer({ min: 0, max: 0xffffffff }).map((claim) => withClaim(bomb(1 << 20, 0x61), claim)),
      // Valid items of other text: the index's words disagree with the text kept.
      fc.string({ minLength: 1, maxLength: 40 }).map((text) => packItems([{ role: 'user', text }])),
      fc.uint8Array({ maxLength: 64 }),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...SESSIONS.map((s) => s.header.id)), items, async (id, blob) => {
        const searchIndex = await forged(bytes, (run) => run('UPDATE search_sessions SET items = ? WHERE id = ?', blob, JSON.stringify(id)));
        const refs = createSessionReferences({ sessionQuery: query, config: { searchIndex } });
        for (const [k, q] of queries.entries()) expect(await refs.searchSessions(AGENT, q), q).toEqual(expected[k]);
        // Rebuilt, not kept: what it exports now holds the store's text again.
        const again = createSessionReferences({ sessionQuery: fakeQuery([]), config: { searchIndex: await refs.exportSearchIndex() } });
        expect(await again.exportSearchIndex()).toHaveLength((await refs.exportSearchIndex()).length);
      }),
      { seed: 28_13, numRuns: 12 },
    );
  });
});

describe('forged titles: a kept title is cleaned as a label and bounded (SPEC §6.6, §16.2)', () => {
  it('a forged title with controls, bidi overrides or any length gives a clean label of at most 120 code points, or is damage and rebuilt', async () => {
    const query = fakeQuery(SESSIONS);
    const fresh = createSessionReferences({ sessionQuery: query });
    const expected = await fresh.searchSessions(AGENT, 'ledger');
    const bytes = await fresh.exportSearchIndex();
    const junk = fc.string({ unit: fc.constantFrom('a', ' ', '\u202e', '\u0007', '\n', '\u200b', '\ud83d', 'é'), maxLength: 6000 });
    await fc.assert(
      fc.asyncProperty(junk, junk, async (before, after) => {
        const title = `${before} Ledger ${after}`;
        const searchIndex = await forged(bytes, (run) => run('UPDATE search_sessions SET title = ? WHERE id = ?', JSON.stringify(title), JSON.stringify('s-ledger')));
        const [hit] = await createSessionReferences({ sessionQuery: query, config: { searchIndex } }).searchSessions(AGENT, 'ledger');
        expect(hit!.sessionId).toBe('s-ledger');
        expect([...hit!.label].length).toBeLessThanOrEqual(120);
        expect(hit!.label).not.toMatch(/[\p{Cc}\p{Cf}]/u);
        // What the index could have been written with is answered as written; anything longer is damage: the fresh answer.
        if (JSON.stringify(title).length > 120 * 2 * 6 + 2) expect(hit).toEqual(expected[0]);
      }),
      { seed: 28_61, numRuns: 25 },
    );
  });
});

describe('path-shaped queries find a session by its cwd (issue 28.2)', () => {
  const segment = fc.stringMatching(/^[a-z][a-z0-9]{0,7}$/);
  // `/` and `-` end a word; `_` joins the segments on both sides into one word (UAX #29 ExtendNumLet).
  const separator = fc.constantFrom('/', '-', '_');

  it('any run of the cwd’s words with its own separators (starting at a word), with or without a leading separator, finds it', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(separator, segment), { minLength: 1, maxLength: 6 }), fc.nat(), fc.nat(), fc.boolean(), async (pieces, a, b, lead) => {
        // The cwd: its segments, each after its separator (the first after the root's slash).
        const joined = (from: number, to: number) => pieces.slice(from, to).map(([sep, word], k) => (k === 0 ? word : `${sep}${word}`)).join('');
        const path = `/${joined(0, pieces.length)}`;
        // The query: a run of whole segments with the separators between them, maybe after the one before.
        let from = a % pieces.length;
        while (from > 0 && pieces[from]![0] === '_') from--; // a run starts where a word does
        const to = from + 1 + (b % (pieces.length - from));
        const query = (lead ? (from === 0 ? '/' : pieces[from]![0]) : '') + joined(from, to);
        const sessions = [session('s-path', 2, ['nothing about where it runs'], 'Untitled work', path), session('s-other', 1, ['other words'], 'Other', '/elsewhere/qqq')];
        const refs = createSessionReferences({ sessionQuery: fakeQuery(sessions) });
        const hits = await refs.searchSessions(AGENT, query);
        expect(ids(hits), `${query} in ${path}`).toContain('s-path');
      }),
      { seed: 28_2, numRuns: 60 },
    );
  });

  it('the probe’s shapes: srv/alpha, /srv/alpha, proj-x — and words of the path out of order or apart are not a path', async () => {
    const refs = createSessionReferences({ sessionQuery: fakeQuery(SESSIONS) });
    for (const query of ['srv/alpha', '/srv/alpha', 'srv alpha', 'proj-x', '/home/u/proj-x', 'u/proj']) {
      expect(ids(await refs.searchSessions(AGENT, query)).length, query).toBe(1);
    }
    expect(ids(await refs.searchSessions(AGENT, 'alpha/srv'))).toEqual([]);
    expect(ids(await refs.searchSessions(AGENT, 'home/proj-x'))).toEqual([]);
  });
});

describe('long unspaced queries never block and are bounded (issue 28.3)', () => {
  const script = fc.constantFrom('数据库迁移的方案校验和', 'ภาษาไทยเขียนติดกัน', 'abcdefghij', 'こんにちは世界', 'проверка');

  it('a query of one long unspaced word yields to the event loop and honours an abort inside its segmentation', async () => {
    const refs = createSessionReferences({ sessionQuery: fakeQuery(SESSIONS) });
    await refs.searchSessions(AGENT, 'warm');
    // Scripts the segmenter splits (tens of milliseconds per 40,000 code units): an ASCII word of
    // any length is one word without it, done before a timer could run.
    const segmented = fc.constantFrom('数据库迁移的方案校验和', 'ภาษาไทยเขียนติดกัน', 'こんにちは世界', 'проверка');
    await fc.assert(
      fc.asyncProperty(segmented, fc.integer({ min: 40_000, max: MAX_QUERY_LENGTH }), async (text, length) => {
        const query = text.repeat(Math.ceil(length / text.length)).slice(0, length);
        const controller = new AbortController();
        let ticked = false;
        setTimeout(() => {
          ticked = true;
          controller.abort();
        }, 0);
        await expectRejectCode(refs.searchSessions(AGENT, query, { signal: controller.signal }), 'SESSION_REFERENCE_CANCELLED');
        expect(ticked).toBe(true);
      }),
      { seed: 28_3, numRuns: 8 },
    );
  });

  it('a query longer than MAX_QUERY_LENGTH UTF-16 code units is INVALID_ARGUMENT before anything is read', async () => {
    const query = fakeQuery(SESSIONS);
    const refs = createSessionReferences({ sessionQuery: query });
    await fc.assert(
      fc.asyncProperty(script, fc.integer({ min: 1, max: 1000 }), async (text, over) => {
        const long = text.repeat(Math.ceil((MAX_QUERY_LENGTH + over) / text.length)).slice(0, MAX_QUERY_LENGTH + over);
        const error = await expectRejectCode(refs.searchSessions(AGENT, long), 'SESSION_REFERENCE_INVALID_ARGUMENT');
        expect(error.message).toContain(String(MAX_QUERY_LENGTH));
      }),
      { seed: 28_31, numRuns: 5 },
    );
    expect(query.calls.listSessions).toBe(0);
    // At the limit, a query is searched.
    expect(ids(await refs.searchSessions(AGENT, `checksum${' '.repeat(MAX_QUERY_LENGTH - 8)}`))).toEqual(['s-ledger']);
  });
});
