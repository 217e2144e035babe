/**
 * The edge catalog (SPEC §17.5–§17.7) in workerd through Miniflare, real R2 and a real SQLite-backed
 * Durable Object: rows, the winner rule, candidates equal to the core's `listCandidates`,
 * freshness (indexObject, notifications in any order, resumable reconcile), and no R2 operation
 * for `/candidates`.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSessionReferences } from '../src/index.js';
import { createMemorySessionQuery, parseSessionLog } from '../src/store/index.js';
import { startCatalogWorker, type CatalogWorker } from './fixtures/catalog-worker.js';
import { sessionLogText, zstdLog, type GeneratedSession } from './fixtures/object-store.js';

const SAMPLES = join(__dirname, '../samples/store');
const SAMPLE_LOGS = [
  '77-Dumen/session-7d2f4c1a-93be-4f6e-8a05-c1e4b2d97a30/session.v3.jsonl',
  '77-Dumen/session-2b8e61d4-0f3a-4c7b-b9d2-5e7a1c3f9084/session.v3.jsonl.zstd',
  '77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl',
  'ledger-service/session-c5a09e7b-4d1f-4b28-a6e3-8f2d0b7c1e59/session.v3.jsonl',
  'ledger-service/session-4e6a2d9f-b1c8-47e0-9f35-a8d21c6b0e74/session.v3.jsonl.zstd',
  'ledger-service/session-91f4b0c6-2e7d-4a83-bd15-6c0e9a4f27d8/session.v3.jsonl',
  'ledger-service/session-91f4b0c6-2e7d-4a83-bd15-6c0e9a4f27d8/session.v2.jsonl',
];
const V2_KEY = SAMPLE_LOGS[6]!;
const V3_KEY = SAMPLE_LOGS[5]!;
const DUP_ID = 'session-91f4b0c6-2e7d-4a83-bd15-6c0e9a4f27d8';

let worker: CatalogWorker;
let tenants = 0;

/** A fresh tenant: its prefix and its own catalog. */
function tenant() {
  const name = `t${++tenants}`;
  return { name, prefix: `tenants/${name}/` };
}

async function put(prefix: string, key: string, bytes: Uint8Array | string) {
  // A copy: Miniflare's proxy takes a plain Uint8Array, not a Buffer.
  await worker.bucket.put(prefix + key, typeof bytes === 'string' ? bytes : Uint8Array.from(bytes));
}

/** The core's answer over the same logs (SPEC §6), as the oracle. */
async function coreCandidates(logs: Array<Uint8Array | string>, as: string, q: string | undefined, limit: number, titles: boolean, match: 'substring' | 'words' = 'substring') {
  const parsed = logs.map((log) => parseSessionLog(log));
  const sessionQuery = createMemorySessionQuery(parsed);
  const own = parsed.find((log) => log.header.id === as)!.header;
  const agent = typeof own.cwd === 'string' && own.cwd !== '' ? { id: as, cwd: own.cwd } : { id: as };
  return createSessionReferences({ sessionQuery, config: { matchTitles: titles, candidateMatch: match } }).listCandidates(agent, q, limit);
}

beforeAll(async () => {
  worker = await startCatalogWorker();
});

afterAll(async () => {
  await worker?.dispose();
});

describe('SessionCatalog: rows from real dsh logs (SPEC §17.5)', () => {
  it('indexes JSON Lines and zstd logs, answers candidates like the core with no R2 operation, and pages rows', async () => {
    const { name, prefix } = tenant();
    const logs = SAMPLE_LOGS.slice(0, 6).map((path) => readFileSync(join(SAMPLES, path)));
    for (const [k, path] of SAMPLE_LOGS.slice(0, 6).entries()) await put(prefix, path, logs[k]!);
    const indexed = await worker.batch(name, SAMPLE_LOGS.slice(0, 6).map((path) => ['indexObject', prefix, path]));
    expect(indexed.every((result) => result.value?.key !== undefined)).toBe(true);
    expect(indexed[1]!.value).toMatchObject({ key: SAMPLE_LOGS[1], sessionId: 'session-2b8e61d4-0f3a-4c7b-b9d2-5e7a1c3f9084', version: 3 });
    await worker.call(name, 'r2Operations');

    const texts = logs.map((bytes, k) => (SAMPLE_LOGS[k]!.endsWith('.zstd') ? bytes : bytes.toString('utf8')));
    const as = 'session-7d2f4c1a-93be-4f6e-8a05-c1e4b2d97a30';
    for (const [q, titles] of [[undefined, false], ['', false], ['LEDGER', false], ['gemini', true], ['gemini', false], ['session-9', false]] as const) {
      expect(await worker.call(name, 'candidates', { as, ...(q !== undefined && { q }), titles })).toEqual(await coreCandidates(texts, as, q, 50, titles));
    }
    expect(await worker.call(name, 'candidates', { as, limit: 2 })).toEqual(await coreCandidates(texts, as, undefined, 2, false));
    expect(await worker.call(name, 'r2Operations')).toEqual({});

    const first = await worker.call(name, 'rows', null, 4);
    expect(first.rows).toHaveLength(4);
    const second = await worker.call(name, 'rows', first.cursor, 4);
    expect(second.cursor).toBeUndefined();
    expect([...first.rows, ...second.rows].map((row: { key: string }) => row.key)).toEqual([...SAMPLE_LOGS.slice(0, 6)].sort());
    const [located, missing] = await worker.call(name, 'locate', [as, 'nope']);
    expect(located).toMatchObject({ key: SAMPLE_LOGS[0], sessionId: as, etag: expect.any(String), uploaded: expect.any(Number), capturedThroughSeq: expect.any(Number) });
    expect(missing).toBeNull();
  });

  it('answers an agent it lacks as the core does: nothing left out, the given cwd ranks; another tenant\'s session the same way (the probe\'s F9)', async () => {
    const a = tenant();
    const b = tenant();
    const logs = [sessionLogText({ id: 'in-b-1', createdAt: 2, cwd: '/w' }), sessionLogText({ id: 'in-b-2', createdAt: 3, cwd: '/x' }), sessionLogText({ id: 'in-b-3', createdAt: 1, cwd: '/w' })];
    await put(a.prefix, 'x.jsonl', sessionLogText({ id: 'only-in-a', createdAt: 1 }));
    await worker.call(a.name, 'indexObject', a.prefix, 'x.jsonl');
    for (const [k, log] of logs.entries()) await put(b.prefix, `${k}.jsonl`, log);
    await worker.batch(b.name, logs.map((_, k) => ['indexObject', b.prefix, `${k}.jsonl`]));
    const core = createSessionReferences({ sessionQuery: createMemorySessionQuery(logs.map((log) => parseSessionLog(log))) });
    const [nobody, foreign, placed] = await worker.batch(b.name, [['candidates', { as: 'nobody' }], ['candidates', { as: 'only-in-a' }], ['candidates', { as: 'nobody', cwd: '/w' }]]);
    expect(nobody).toEqual({ value: await core.listCandidates({ id: 'nobody' }) });
    expect(foreign).toEqual({ value: await core.listCandidates({ id: 'only-in-a' }) });
    expect(placed).toEqual({ value: await core.listCandidates({ id: 'nobody', cwd: '/w' }) });
    // A cwd given with an agent the catalog holds ranks instead of its row's, as the local service takes the caller's agent.
    expect(await worker.call(b.name, 'candidates', { as: 'in-b-2', cwd: '/w' })).toEqual(await core.listCandidates({ id: 'in-b-2', cwd: '/w' }));
  });

  it('rejects a log that is not a dsh log with SESSION_REFERENCE_INVALID_LOG naming the key, and leaves the catalog as it was', async () => {
    const { name, prefix } = tenant();
    await put(prefix, 'good', sessionLogText({ id: 'good', createdAt: 1 }));
    await worker.call(name, 'indexObject', prefix, 'good');
    await put(prefix, 'good', 'not a log\n');
    const [result] = await worker.batch(name, [['indexObject', prefix, 'good']]);
    expect(result!.error).toMatch(/^SESSION_REFERENCE_INVALID_LOG: object "good": dsh session log line 1/);
    expect((await worker.call(name, 'locate', ['good']))[0]).toMatchObject({ key: 'good', sessionId: 'good' });
    const [bad] = await worker.batch(name, [['candidates', { as: 'good', limit: 0 }]]);
    expect(bad!.error).toMatch(/^SESSION_REFERENCE_INVALID_ARGUMENT: limit must be a positive safe integer/);
  });

  it('indexObject is idempotent: an unchanged object costs one get whose body is not read; a gone one loses its row', async () => {
    const { name, prefix } = tenant();
    await put(prefix, 'k', sessionLogText({ id: 's', createdAt: 1, title: 'First' }));
    const row = await worker.call(name, 'indexObject', prefix, 'k');
    await worker.call(name, 'r2Operations');
    expect(await worker.call(name, 'indexObject', prefix, 'k')).toEqual(row);
    expect(await worker.call(name, 'r2Operations')).toEqual({ get: 1 });
    await put(prefix, 'k', sessionLogText({ id: 's', createdAt: 1, title: 'Second' }));
    expect(await worker.call(name, 'indexObject', prefix, 'k')).toMatchObject({ title: 'Second' });
    await worker.bucket.delete(prefix + 'k');
    expect(await worker.call(name, 'indexObject', prefix, 'k')).toBeUndefined();
    expect(await worker.call(name, 'locate', ['s'])).toEqual([null]);
  });
});

describe('SessionCatalog: two objects with one session id (SPEC §17.5)', () => {
  it('serves session.v3.jsonl over session.v2.jsonl in any indexing order, and v2 once v3 is gone', async () => {
    for (const order of [[V2_KEY, V3_KEY], [V3_KEY, V2_KEY]]) {
      const { name, prefix } = tenant();
      for (const key of order) await put(prefix, key, readFileSync(join(SAMPLES, key)));
      await worker.batch(name, order.map((key) => ['indexObject', prefix, key]));
      expect((await worker.call(name, 'locate', [DUP_ID]))[0]).toMatchObject({ key: V3_KEY, version: 3 });
      await put(prefix, 'other', sessionLogText({ id: 'other', createdAt: 1 }));
      await worker.call(name, 'indexObject', prefix, 'other');
      expect((await worker.call(name, 'candidates', { as: 'other' })).map((row: { sessionId: string }) => row.sessionId)).toEqual([DUP_ID]);
      await worker.call(name, 'removeObject', V3_KEY);
      expect((await worker.call(name, 'locate', [DUP_ID]))[0]).toMatchObject({ key: V2_KEY, version: 2 });
      expect((await worker.call(name, 'candidates', { as: 'other' })).map((row: { sessionId: string }) => row.sessionId)).toEqual([DUP_ID]);
    }
  });

  it('at one version, serves the newer upload', async () => {
    const { name, prefix } = tenant();
    await put(prefix, 'b', sessionLogText({ id: 'dup', createdAt: 1, title: 'older' }));
    await new Promise((resolve) => setTimeout(resolve, 5));
    await put(prefix, 'a', sessionLogText({ id: 'dup', createdAt: 1, title: 'newer' }));
    await worker.batch(name, [['indexObject', prefix, 'a'], ['indexObject', prefix, 'b']]);
    expect((await worker.call(name, 'locate', ['dup']))[0]).toMatchObject({ key: 'a', title: 'newer' });
  });
});

describe('SessionCatalog: freshness (SPEC §17.6)', () => {
  const note = (action: string, key: string, time: number, eTag?: string) => ({ action, object: { key, ...(eTag && { eTag }) }, eventTime: new Date(time).toISOString() });

  it('applies create and delete notifications idempotently and in any order', async () => {
    const { name, prefix } = tenant();
    await put(prefix, 'k', sessionLogText({ id: 's', createdAt: 1 }));
    const { etag, uploaded } = (await worker.bucket.head(prefix + 'k'))!;
    const created = note('PutObject', prefix + 'k', uploaded.getTime(), etag);
    const deleted = note('DeleteObject', prefix + 'k', uploaded.getTime() - 1000);
    // The delete of an earlier object arrives after the create: ignored; the create twice: one row.
    await worker.batch(name, [['applyNotification', prefix, created], ['applyNotification', prefix, deleted], ['applyNotification', prefix, created]]);
    expect((await worker.call(name, 'locate', ['s']))[0]).toMatchObject({ key: 'k', etag });
    // Another tenant's key is not this catalog's business.
    await worker.call(name, 'applyNotification', prefix, note('DeleteObject', 'tenants/other/k', uploaded.getTime() + 10_000));
    expect((await worker.call(name, 'locate', ['s']))[0]).toMatchObject({ key: 'k' });
    // A later delete drops it once a head finds the object gone (issue 27: the bound bucket decides);
    // the create it followed, delivered again, is older than the delete: ignored, no R2 read.
    await worker.bucket.delete(prefix + 'k');
    await worker.call(name, 'r2Operations');
    await worker.batch(name, [['applyNotification', prefix, note('DeleteObject', prefix + 'k', uploaded.getTime() + 10_000)], ['applyNotification', prefix, created]]);
    expect(await worker.call(name, 'locate', ['s'])).toEqual([null]);
    expect(await worker.call(name, 'r2Operations')).toEqual({ head: 1 });
    const [bad] = await worker.batch(name, [['applyNotification', prefix, { action: 'PutObject' }]]);
    expect(bad!.error).toMatch(/^SESSION_REFERENCE_INVALID_ARGUMENT/);
  });

  it('a create notification for an object that is not a dsh log drops its row instead of failing', async () => {
    const { name, prefix } = tenant();
    await put(prefix, 'k', sessionLogText({ id: 's', createdAt: 1 }));
    await worker.call(name, 'indexObject', prefix, 'k');
    await put(prefix, 'k', '\u0000garbage');
    const { etag, uploaded } = (await worker.bucket.head(prefix + 'k'))!;
    expect(await worker.batch(name, [['applyNotification', prefix, note('PutObject', prefix + 'k', uploaded.getTime(), etag)]])).toEqual([{}]);
    expect(await worker.call(name, 'locate', ['s'])).toEqual([null]);
  });

  it('reconciles in resumable pages: added, changed and removed, rejected objects not read again', async () => {
    const { name, prefix } = tenant();
    for (let k = 0; k < 5; k++) await put(prefix, `s${k}`, sessionLogText({ id: `s${k}`, createdAt: k }));
    await put(prefix, 'junk', 'junk\n');
    await put(prefix, 'gone', sessionLogText({ id: 'gone', createdAt: 9 }));
    await worker.call(name, 'indexObject', prefix, 'gone');
    await worker.bucket.delete(prefix + 'gone');
    await put(prefix, 's4', sessionLogText({ id: 's4', createdAt: 4 }));
    await worker.call(name, 'indexObject', prefix, 's4');
    await put(prefix, 's4', sessionLogText({ id: 's4', createdAt: 4, title: 'changed' }));
    const pages = [];
    for (let page = 0; page < 10; page++) {
      const result = await worker.call(name, 'reconcile', prefix, { pageSize: 2 });
      pages.push(result);
      if (result.done) break;
    }
    expect(pages.map((page) => page.done)).toEqual([false, false, true]);
    const sum = (field: 'added' | 'changed' | 'removed') => pages.reduce((total, page) => total + page[field], 0);
    expect([sum('added'), sum('changed'), sum('removed')]).toEqual([4, 1, 1]);
    expect((await worker.call(name, 'locate', ['s4']))[0]).toMatchObject({ title: 'changed' });
    expect(await worker.call(name, 'locate', ['gone'])).toEqual([null]);
    // A second pass reads nothing again: three lists, no head, no get.
    await worker.call(name, 'r2Operations');
    const again = [];
    for (let page = 0; page < 3; page++) again.push(await worker.call(name, 'reconcile', prefix, { pageSize: 2 }));
    expect(again.map(({ added, changed, removed }) => added + changed + removed)).toEqual([0, 0, 0]);
    expect(await worker.call(name, 'r2Operations')).toEqual({ list: 3 });
  });
});

describe('SessionCatalog: candidates equal the core listCandidates (SPEC §6, §17.5)', () => {
  // NUL too (the probe's F7: a query holding one reached FTS5 and was a 500).
  const unit = fc.constantFrom('a', 'b', 'A', 'B', 'é', 'É', '-', ' ', '😀', '\ud83d', 'İ', 'ß', '\u0000');
  const text = (maxLength: number) => fc.string({ unit, maxLength });
  const session = fc.record({
    id: text(6),
    createdAt: fc.integer({ min: 0, max: 4 }),
    cwd: fc.option(fc.constantFrom('', '/a', '/A/b', '/aé', '/😀b'), { nil: undefined }),
    title: fc.option(text(8), { nil: undefined }),
  });

  type Query = [string | undefined, number, boolean, 'substring' | 'words'];
  let run = 0;
  /** The catalog's candidates for `queries` against the core's over the same sessions, as the agent `pick` chooses. */
  async function sameAsCore(sessions: ReadonlyArray<Partial<GeneratedSession>>, queries: readonly Query[], pick: number): Promise<void> {
    const name = `prop${++run}`;
    const prefix = `props/${name}/`;
    const logs = sessions.map((s) => sessionLogText(s as GeneratedSession));
    for (const [k, log] of logs.entries()) await put(prefix, String(k), k % 2 ? zstdLog(log) : log);
    await worker.batch(name, logs.map((_, k) => ['indexObject', prefix, String(k)]));
    const as = sessions[pick % sessions.length]!.id!;
    const results = await worker.batch(name, queries.map(([q, limit, titles, match]) => ['candidates', { as, ...(q !== undefined && { q }), limit, titles, match }]));
    for (const [k, [q, limit, titles, match]] of queries.entries()) {
      expect(results[k]).toEqual({ value: await coreCandidates(logs, as, q, limit, titles, match) });
    }
  }

  it('property: rows, order, limit and the agent left out, substring and words, with and without titles', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(session, { selector: (s) => s.id, minLength: 1, maxLength: 12 }),
        fc.array(fc.tuple(fc.option(text(4), { nil: undefined }), fc.integer({ min: 1, max: 5 }), fc.boolean(), fc.constantFrom('substring' as const, 'words' as const)), { minLength: 1, maxLength: 6 }),
        fc.nat(),
        sameAsCore,
      ),
      { numRuns: 25 },
    );
  });

  it('finds a needle after a NUL in a field (SQLite reads a text up to its first NUL; fast-check seed 363196493)', async () => {
    await sameAsCore([{ id: '\u0000 İ', createdAt: 0 }, { id: '', createdAt: 0 }], [[' İ', 1, false, 'substring'], [' İ', 1, true, 'words'], ['i\u0307', 2, false, 'substring'], ['\ufffd', 2, false, 'substring']], 1);
  });

  it('groups larger than a walk: sparse queries found through the trigram and word indexes', async () => {
    const { name, prefix } = tenant();
    const sessions: GeneratedSession[] = [];
    for (let k = 0; k < 400; k++) {
      const cwd = k % 3 === 0 ? '/home/me' : k % 3 === 1 ? undefined : `/srv/p${k % 7}`;
      sessions.push({ id: `s-${String(k).padStart(3, '0')}${k % 97 === 0 ? '-needle' : ''}`, createdAt: k % 50, ...(cwd && { cwd }), ...(k % 89 === 0 && { title: `Rare Ümlaut ${k}` }) });
    }
    sessions.push({ id: 'me', createdAt: 1, cwd: '/home/me' });
    const logs = sessions.map((s) => sessionLogText(s));
    for (const [k, log] of logs.entries()) await put(prefix, `k${k}`, log);
    for (let start = 0; start < logs.length; start += 100) {
      await worker.batch(name, logs.slice(start, start + 100).map((_, j) => ['indexObject', prefix, `k${start + j}`]));
    }
    await worker.call(name, 'r2Operations');
    // '/srv' and 'srv/p': more matches than a walk looks at, none in the first groups: walks, then the index.
    for (const [q, limit, titles] of [['needle', 2, false], ['NEEDLE', 50, false], ['rare ü', 3, true], ['-1', 1, false], ['s-', 5, false], ['p3', 2, false], ['zzz', 5, true], ['e', 3, false], ['/srv', 50, false], ['srv/p', 5, true]] as const) {
      expect(await worker.call(name, 'candidates', { as: 'me', q, limit, titles })).toEqual(await coreCandidates(logs, 'me', q, limit, titles));
    }
    // Words (SPEC §15.10): folded prefixes of words of the id, cwd or label, found through the trigram index too.
    for (const [q, limit, titles] of [['umlaut', 50, true], ['umlaut', 50, false], ['rare 17', 50, true], ['NEEDL', 2, false], ['srv/p3', 3, false], ['s-1', 4, false]] as const) {
      expect(await worker.call(name, 'candidates', { as: 'me', q, limit, titles, match: 'words' })).toEqual(await coreCandidates(logs, 'me', q, limit, titles, 'words'));
    }
    const words = async (q: string, titles: boolean) => (await worker.call(name, 'candidates', { as: 'me', q, limit: 50, titles, match: 'words' })).map((row: { sessionId: string }) => row.sessionId);
    expect(await words('umlaut', true)).toEqual(['s-267', 's-000-needle', 's-178', 's-089', 's-356']);
    expect(await worker.call(name, 'r2Operations')).toEqual({});
  });
});

describe('SessionCatalog: rows read by /candidates stay bounded as the tenant grows (SPEC §17.7, issue 27)', () => {
  it('a rare needle, a cwd one session in seven holds, an id one in nine to four holds and an empty query read about as many rows at 4,000 sessions as at 1,000', async () => {
    const sizes = [1000, 4000];
    for (const size of sizes) for (let start = 0; start < size; start += 1000) await worker.call(`rows${size}`, 'fill', start, 1000);
    const queries = [{ as: 'bench-1', q: 'needle', limit: 10 }, { as: 'bench-1', q: '/work/site', limit: 50 }, { as: 'bench-1', q: 'bench-1', titles: true }, { as: 'bench-1' }];
    for (const query of queries) {
      const read: number[] = [];
      for (const size of sizes) {
        await worker.call(`rows${size}`, 'rowsRead');
        const rows = await worker.call(`rows${size}`, 'candidates', query);
        read.push(await worker.call(`rows${size}`, 'rowsRead'));
        // The needle is in the same four sessions at every size.
        expect(rows.length).toBe(query.q === 'needle' ? 4 : (query.limit ?? 50));
      }
      // At most 1.5 times as many at four times the sessions, and a constant times `limit` at both
      // (the index's probe of 2·limit + 16, a walk of about limit / density rows, the rows returned).
      expect({ query, read, ratio: read[1]! / read[0]! <= 1.5, bounded: Math.max(...read) <= 12 * (query.limit ?? 50) + 128 }).toEqual({ query, read, ratio: true, bounded: true });
    }
  });
});

describe('SessionCatalog: search on the Durable Object\'s SQLite (SPEC §16, §17.5)', () => {
  /** The core's searchSessions over the same logs, as the oracle. */
  async function coreSearch(logs: Array<Uint8Array | string>, as: string, q: string, limit: number) {
    const parsed = logs.map((log) => parseSessionLog(log));
    const own = parsed.find((log) => log.header.id === as)!.header;
    const agent = typeof own.cwd === 'string' && own.cwd !== '' ? { id: as, cwd: own.cwd } : { id: as };
    return createSessionReferences({ sessionQuery: createMemorySessionQuery(parsed) }).searchSessions(agent, q, { limit });
  }

  it('gives the hits of searchSessions over the same logs, with no R2 operation, and follows removals and the winner rule', async () => {
    const { name, prefix } = tenant();
    const keys = SAMPLE_LOGS.slice(0, 6);
    const logs = keys.map((path) => Uint8Array.from(readFileSync(join(SAMPLES, path))));
    const generated = [
      sessionLogText({ id: 'gen-1', createdAt: 5, cwd: '/srv/ledger', title: 'Checksum choice', turns: [['user', 'where did we decide on the XXH64 checksum?'], ['assistant', 'We chose XXH64 for the ledger.']] }),
      sessionLogText({ id: 'gen-2', createdAt: 6, turns: [['user', 'schema migration plan'], ['assistant', 'Run the migration in two steps.']] }),
    ];
    for (const [k, key] of keys.entries()) await put(prefix, key, logs[k]!);
    for (const [k, log] of generated.entries()) await put(prefix, `gen/${k}.jsonl`, log);
    await worker.batch(name, [...keys, 'gen/0.jsonl', 'gen/1.jsonl'].map((key) => ['indexObject', prefix, key]));
    await worker.call(name, 'r2Operations');
    const texts: Array<Uint8Array | string> = [...logs.map((bytes, k) => (keys[k]!.endsWith('.zstd') ? bytes : new TextDecoder().decode(bytes))), ...generated];
    const as = 'gen-2';
    for (const [q, limit] of [['xxh64', 10], ['checksum ledger', 10], ['migration', 10], ['valdiator', 10], ['gemini', 1], ['  ', 3], ['zzzz-nothing', 5], ['ledger', 50]] as const) {
      const [got, expected] = [await worker.call(name, 'search', { as, q, limit }), await coreSearch(texts, as, q, limit)];
      expect(got.map(({ score, ...hit }: { score: number }) => hit)).toEqual(expected.map(({ score, ...hit }) => hit));
      // Scores within 0.005, as the other search tests compare them (two SQLite builds).
      for (const [k, hit] of expected.entries()) expect(Math.abs(got[k].score - hit.score)).toBeLessThan(0.005);
    }
    expect(await worker.call(name, 'r2Operations')).toEqual({});
    expect((await worker.call(name, 'search', { as, q: 'xxh64' })).map((hit: { sessionId: string }) => hit.sessionId)).toEqual(['gen-1']);
    await worker.call(name, 'removeObject', 'gen/0.jsonl');
    expect(await worker.call(name, 'search', { as, q: 'xxh64' })).toEqual([]);

    // Two logs of one session: the v3 log is what search finds; once it is gone, the v2 log.
    await put(prefix, V2_KEY, Uint8Array.from(readFileSync(join(SAMPLES, V2_KEY))));
    await put(prefix, 'v3-copy', sessionLogText({ id: DUP_ID, createdAt: 1, header: { version: 4 }, turns: [['user', 'quasarmuffin only here']] }));
    await worker.batch(name, [['indexObject', prefix, V2_KEY], ['indexObject', prefix, 'v3-copy']]);
    expect((await worker.call(name, 'search', { as, q: 'quasarmuffin' })).map((hit: { sessionId: string }) => hit.sessionId)).toEqual([DUP_ID]);
    // An agent the catalog lacks searches everything (the probe's F9).
    expect((await worker.call(name, 'search', { as: 'nobody', q: 'quasarmuffin' })).map((hit: { sessionId: string }) => hit.sessionId)).toEqual([DUP_ID]);
    await worker.call(name, 'removeObject', 'v3-copy');
    expect(await worker.call(name, 'search', { as, q: 'quasarmuffin' })).toEqual([]);
  });
});
