import { describe, expect, it } from 'vitest';
import realLog from '../samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl?raw';
import { composePromptMessage, createSessionReferences, formatSessionReferenceMention, type UserMessage } from '../src/index.js';
import { createMemorySessionQuery, createObjectStoreSessionQuery, parseSessionLog, type ObjectStoreBucket } from '../src/store/index.js';
import { concatBytes } from './fixtures/base64.js';
import { fakeBucket, keptForSnapshot, rawZstdFrame, realLogZstd, sessionLogText, zstdLog } from './fixtures/object-store.js';
import { eventually, expectCode, expectRejectCode } from './helpers.js';

const REAL_ID = 'session-904b047f-eb01-493f-b98a-391ecfae5b66';
const REAL_CREATED_AT = 1789415426008;
const REAL_CWD = '/home/user/projects/01_unicorn/77-Dumen';
const REAL_TITLE = 'Bu projeyi gemini ile geliştiriyorduk';
const encoder = new TextEncoder();
const realJsonl = encoder.encode(realLog);
const realZstd = realLogZstd();

const alpha = sessionLogText({
  id: 'alpha',
  createdAt: 2_000,
  cwd: '/work/a',
  title: 'Alpha schema',
  turns: [
    ['user', 'design the schema'],
    ['assistant', 'here is the schema'],
  ],
});
const beta = sessionLogText({ id: 'beta', createdAt: 3_000, turns: [['user', 'beta question']] });
const gamma = sessionLogText({ id: 'gamma', createdAt: 2_000, cwd: '/work/g', turns: [['assistant', 'gamma answer']] });

/** The in-memory store's surface, as a streaming store keeps it (SPEC §8, §11.2.2: placeholders). */
async function memorySurface(text: string | Uint8Array, id: string) {
  return keptForSnapshot(await createMemorySessionQuery([parseSessionLog(text)]).readSurface(id));
}

describe('createObjectStoreSessionQuery: listing reads headers only (SPEC §4.2, §11)', () => {
  it('lists the real log (JSON Lines and zstd) and generated logs by header id, newest first, under arbitrary keys', async () => {
    for (const real of [realJsonl, realZstd]) {
      const { bucket } = fakeBucket({
        'z/real-log': real,
        'a.txt': alpha,
        'beta.jsonl.zstd': zstdLog(beta),
        'nested/deeper/gamma': gamma,
      });
      const query = createObjectStoreSessionQuery(bucket);
      const records = await query.listSessions();
      expect(records.map((r) => r.header.id)).toEqual([REAL_ID, 'beta', 'alpha', 'gamma']);
      expect(records[0]!.header).toEqual({
        type: 'session',
        version: 3,
        id: REAL_ID,
        createdAt: REAL_CREATED_AT,
        cwd: REAL_CWD,
        isSeeded: false,
        delegationDepth: 0,
        agentPreset: 'code',
      });
    }
  });

  it('with ranges, reads a few KiB of each log, not whole logs', async () => {
    const big = sessionLogText({ id: 'big', createdAt: 1, turns: Array.from({ length: 400 }, (_, i) => ['user', `turn ${i} ${'x'.repeat(200)}`] as ['user', string]) });
    const { bucket, stats } = fakeBucket({ jsonl: realJsonl, zstd: concatBytes(realZstd), big: zstdLog(big, 50) }, { ranges: true });
    // Two ids collide (the real log twice, one version, no upload times): the key that sorts first wins, both headers are read.
    const records = await createObjectStoreSessionQuery(bucket).listSessions();
    expect(records.map((r) => r.header.id)).toEqual([REAL_ID, 'big']);
    expect(stats.bytesByKey.get('jsonl')).toBeLessThanOrEqual(4096);
    expect(stats.bytesByKey.get('zstd')).toBeLessThanOrEqual(4096);
    expect(stats.bytesByKey.get('big')).toBeLessThanOrEqual(4096);
    expect(stats.bytes).toBeLessThan((realJsonl.length + realZstd.length) / 20);
    expect(stats.gets.every((get) => get.range !== undefined)).toBe(true);
  });

  it('grows ranged reads for a header line longer than one read, reading it only once', async () => {
    const cwd = `/${'long/'.repeat(3000)}`;
    const text = sessionLogText({ id: 'long', createdAt: 1, cwd, turns: [['user', 'y'.repeat(100_000)]] });
    const headerLength = text.indexOf('\n') + 1;
    for (const bytes of [encoder.encode(text), zstdLog(text)]) {
      const { bucket, stats } = fakeBucket({ k: bytes });
      const [record] = await createObjectStoreSessionQuery(bucket).listSessions();
      expect(record!.header.cwd).toBe(cwd);
      expect(stats.gets.length).toBeGreaterThan(1);
      // Contiguous ranges: no byte is read twice, and the reads stop soon after the header.
      let next = 0;
      for (const get of stats.gets) {
        expect(get.range!.offset).toBe(next);
        next += get.range!.length;
      }
      expect(stats.bytes).toBeLessThan(headerLength * 2 + 4096);
    }
  });

  it('reads a zstd header split over several frames, after skippable frames', async () => {
    const text = sessionLogText({ id: 'split', createdAt: 1, cwd: '/s' });
    const skippable = Uint8Array.of(0x50, 0x2a, 0x4d, 0x18, 3, 0, 0, 0, 1, 2, 3);
    const bytes = concatBytes(skippable, rawZstdFrame(text.slice(0, 20)), rawZstdFrame(text.slice(20, 40)), rawZstdFrame(text.slice(40)));
    const { bucket } = fakeBucket({ k: bytes });
    expect((await createObjectStoreSessionQuery(bucket).listSessions()).map((r) => r.header)).toEqual([
      { type: 'session', version: 3, id: 'split', createdAt: 1, cwd: '/s' },
    ]);
  });

  it('without range support, fetches each object once and reuses it for readSurface', async () => {
    for (const sizes of [true, false]) {
      const { bucket, stats } = fakeBucket({ r: realZstd, a: alpha }, { ranges: false, sizes });
      const query = createObjectStoreSessionQuery(bucket);
      expect((await query.listSessions()).map((r) => r.header.id)).toEqual([REAL_ID, 'alpha']);
      expect(stats.gets).toHaveLength(2);
      const surface = await query.readSurface(REAL_ID);
      expect(surface).toEqual(await memorySurface(realLog, REAL_ID));
      expect(stats.gets).toHaveLength(2);
      expect(stats.bytes).toBe(realZstd.length + encoder.encode(alpha).length);
    }
  });

  it('with rangeReads: false, gets whole objects without a range', async () => {
    const { bucket, stats } = fakeBucket({ r: realJsonl });
    const query = createObjectStoreSessionQuery(bucket, { rangeReads: false });
    await query.listSessions();
    await query.readSurface(REAL_ID);
    expect(stats.gets).toEqual([{ key: 'r' }]);
  });

  it('follows list cursors and passes the prefix', async () => {
    const objects: Record<string, string> = { 'other/x': alpha };
    for (let i = 0; i < 7; i++) objects[`logs/${i}`] = sessionLogText({ id: `s${i}`, createdAt: i });
    const { bucket, stats } = fakeBucket(objects, { pageSize: 3 });
    const records = await createObjectStoreSessionQuery(bucket, { prefix: 'logs/' }).listSessions();
    expect(records.map((r) => r.header.id)).toEqual(['s6', 's5', 's4', 's3', 's2', 's1', 's0']);
    expect(stats.lists).toEqual([{ prefix: 'logs/' }, { prefix: 'logs/', cursor: 'c3' }, { prefix: 'logs/', cursor: 'c6' }]);
  });

  it('lists the store once per instance', async () => {
    const { bucket, stats } = fakeBucket({ a: alpha, b: beta });
    const query = createObjectStoreSessionQuery(bucket);
    const [first, second] = await Promise.all([query.listSessions(), query.listSessions()]);
    expect(second).toEqual(first);
    await query.listSessions();
    await query.readHeader('alpha');
    expect(stats.lists).toHaveLength(1);
    expect(stats.gets).toHaveLength(2);
    // Fresh objects every call.
    expect(second[0]!.header).not.toBe(first[0]!.header);
  });

  it('skips logs without a complete header yet: empty, torn first line, truncated first frame', async () => {
    const header = sessionLogText({ id: 'h', createdAt: 1 }).trimEnd();
    const frame = rawZstdFrame(`${header}\n`);
    for (const sizes of [true, false]) {
      const { bucket } = fakeBucket(
        {
          empty: '',
          torn: header.slice(0, 30),
          truncated: frame.subarray(0, frame.length - 5),
          magicOnly: Uint8Array.of(0x28, 0xb5),
          complete: header, // the header line without its final newline, but whole
          ok: alpha,
        },
        { sizes },
      );
      const records = await createObjectStoreSessionQuery(bucket).listSessions();
      expect(records.map((r) => r.header.id)).toEqual(['alpha', 'h']);
    }
  });

  it('ignores the key: the id is the header id, duplicates resolve to the first key', async () => {
    const other = alpha.replace('design the schema', 'the other copy');
    const { bucket, stats } = fakeBucket({ 'b-key': other, 'a-key': alpha });
    const query = createObjectStoreSessionQuery(bucket);
    expect((await query.listSessions()).map((r) => r.header.id)).toEqual(['alpha']);
    const surface = await query.readSurface('alpha');
    expect(JSON.stringify(surface.events)).toContain('design the schema');
    expect(JSON.stringify(surface.events)).not.toContain('the other copy');
    expect(stats.gets.map((get) => get.key).sort()).toEqual(['a-key', 'b-key']);
  });
});

describe('createObjectStoreSessionQuery: two objects with one session id (SPEC §17.5)', () => {
  const v2 = sessionLogText({ id: 'dup', createdAt: 5, header: { version: 2 }, turns: [['user', 'STALE v2 LOG — must not be read']] });
  const v3 = sessionLogText({ id: 'dup', createdAt: 5, turns: [['user', 'the v3 log']] });
  const text = async (query: ReturnType<typeof createObjectStoreSessionQuery>) =>
    JSON.stringify((await query.readSurface('dup')).events.map((event) => event.data));

  it('serves the higher header version, whichever key sorts first (session.v2.jsonl beside session.v3.jsonl)', async () => {
    for (const [older, newer] of [['s/session.v2.jsonl', 's/session.v3.jsonl'], ['z/v2', 'a/v3']]) {
      const { bucket } = fakeBucket({ [older!]: v2, [newer!]: zstdLog(v3) });
      const query = createObjectStoreSessionQuery(bucket);
      expect((await query.listSessions()).map((record) => record.header.version)).toEqual([3]);
      expect(await text(query)).toContain('the v3 log');
      expect(await text(query)).not.toContain('STALE');
    }
  });

  it('at one version, serves the newer upload (R2 lists `uploaded` as a Date), then the key that sorts first', async () => {
    const first = sessionLogText({ id: 'dup', createdAt: 5, turns: [['user', 'uploaded first']] });
    const second = sessionLogText({ id: 'dup', createdAt: 5, turns: [['user', 'uploaded second']] });
    const uploadedAt: Record<string, Date | number | undefined> = { a: new Date(2_000), b: 1_000 };
    const { bucket: plain } = fakeBucket({ a: second, b: first });
    const bucket: ObjectStoreBucket = {
      get: (key, options) => plain.get(key, options),
      async list(options) {
        const page = await plain.list(options);
        return { ...page, objects: page.objects.map((object) => ({ ...object, uploaded: uploadedAt[object.key] })) };
      },
    };
    expect(await text(createObjectStoreSessionQuery(bucket))).toContain('uploaded second');
    uploadedAt.a = new Date(500);
    expect(await text(createObjectStoreSessionQuery(bucket))).toContain('uploaded first');
    uploadedAt.a = uploadedAt.b = undefined;
    expect(await text(createObjectStoreSessionQuery(bucket))).toContain('uploaded second');
    uploadedAt.a = 'yesterday' as unknown as number;
    const error = await expectRejectCode(createObjectStoreSessionQuery(bucket).listSessions(), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.message).toMatch(/uploaded/);
  });
});

describe('createObjectStoreSessionQuery: surfaces, titles, headers', () => {
  it('readSurface of the real log (JSON Lines and zstd) equals the in-memory store', async () => {
    const expected = await memorySurface(realLog, REAL_ID);
    expect(expected.capturedThroughSeq).toBe(98);
    for (const real of [realJsonl, realZstd]) {
      const { bucket, stats } = fakeBucket({ 'some/key': real, a: alpha });
      const query = createObjectStoreSessionQuery(bucket);
      expect(await query.readSurface(REAL_ID)).toEqual(expected);
      const wholeReads = stats.gets.filter((get) => get.range === undefined).length;
      expect(await query.readSurface(REAL_ID)).toEqual(expected);
      expect(stats.gets.filter((get) => get.range === undefined).length).toBe(wholeReads);
    }
  });

  it('readTitleSnapshots: the last session/title, {} without one, rejected rows for unknown ids', async () => {
    const { bucket } = fakeBucket({ r: realZstd, a: alpha, b: zstdLog(beta) });
    const rows = await createObjectStoreSessionQuery(bucket).readTitleSnapshots([REAL_ID, 'beta', 'nope', 'alpha']);
    expect(rows.slice(0, 2)).toEqual([
      { sessionId: REAL_ID, status: 'fulfilled', value: { title: { title: REAL_TITLE } } },
      { sessionId: 'beta', status: 'fulfilled', value: {} },
    ]);
    expect(rows[2]).toMatchObject({ sessionId: 'nope', status: 'rejected', reason: { code: 'SESSION_REFERENCE_NOT_FOUND' } });
    expect(rows[3]).toEqual({ sessionId: 'alpha', status: 'fulfilled', value: { title: { title: 'Alpha schema' } } });
  });

  it('readTitleSnapshots reports a broken log as a rejected row', async () => {
    const broken = `${sessionLogText({ id: 'broken', createdAt: 1 })}not json\n{}\n`;
    const { bucket } = fakeBucket({ a: alpha, b: broken });
    const rows = await createObjectStoreSessionQuery(bucket).readTitleSnapshots(['broken', 'alpha']);
    expect(rows[0]).toMatchObject({ sessionId: 'broken', status: 'rejected', reason: { code: 'SESSION_REFERENCE_INVALID_LOG' } });
    expect(rows[1]!.status).toBe('fulfilled');
  });

  it('readHeader reads one header through the listing', async () => {
    const { bucket } = fakeBucket({ r: realZstd, a: alpha });
    const query = createObjectStoreSessionQuery(bucket);
    expect(await query.readHeader('alpha')).toEqual({ type: 'session', version: 3, id: 'alpha', createdAt: 2_000, cwd: '/work/a' });
    expect((await query.readHeader(REAL_ID)).cwd).toBe(REAL_CWD);
    await expectRejectCode(query.readHeader('missing'), 'SESSION_REFERENCE_NOT_FOUND');
  });
});

describe('createObjectStoreSessionQuery: errors (SPEC §10)', () => {
  it('unknown ids are SESSION_REFERENCE_NOT_FOUND; bad ids and id lists INVALID_ARGUMENT', async () => {
    const query = createObjectStoreSessionQuery(fakeBucket({ a: alpha }).bucket);
    const error = await expectRejectCode(query.readSurface('nope'), 'SESSION_REFERENCE_NOT_FOUND');
    expect(error.message).toContain('"nope"');
    await expectRejectCode(query.readSurface(42 as unknown as string), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    await expectRejectCode(query.readTitleSnapshots('alpha' as unknown as string[]), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    await expectRejectCode(query.listSessions('signal' as unknown as AbortSignal), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });

  it('an object that is not a dsh log is SESSION_REFERENCE_INVALID_LOG naming its key', async () => {
    for (const bad of ['hello world\n', '{"type":"note"}\n', concatBytes(Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x08), new Uint8Array(20))]) {
      const query = createObjectStoreSessionQuery(fakeBucket({ a: alpha, 'README.md': bad }).bucket);
      const error = await expectRejectCode(query.listSessions(), 'SESSION_REFERENCE_INVALID_LOG');
      expect(error.message).toContain('"README.md"');
    }
    const broken = `${sessionLogText({ id: 'broken', createdAt: 1 })}not json\n{}\n`;
    const query = createObjectStoreSessionQuery(fakeBucket({ 'logs/b': broken }).bucket);
    const error = await expectRejectCode(query.readSurface('broken'), 'SESSION_REFERENCE_INVALID_LOG');
    expect(error.message).toContain('"logs/b"');
    expect(error.message).toContain('line 2');
  });

  it('store failures are SESSION_REFERENCE_READ_FAILED with the cause kept, and are retried on the next call', async () => {
    const boom = new Error('R2 is down');
    const { bucket } = fakeBucket({ a: alpha });
    let failList = true;
    const flaky: ObjectStoreBucket = {
      list: async (options) => {
        if (failList) throw boom;
        return bucket.list(options);
      },
      get: bucket.get,
    };
    const query = createObjectStoreSessionQuery(flaky);
    const error = await expectRejectCode(query.listSessions(), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.cause).toBe(boom);
    expect(error.message).toContain('R2 is down');
    failList = false;
    expect((await query.listSessions()).map((r) => r.header.id)).toEqual(['alpha']);

    const failingGet = createObjectStoreSessionQuery({ list: bucket.list, get: async () => Promise.reject(boom) });
    expect((await expectRejectCode(failingGet.listSessions(), 'SESSION_REFERENCE_READ_FAILED')).cause).toBe(boom);
  });

  it('malformed store answers are SESSION_REFERENCE_READ_FAILED', async () => {
    const { bucket } = fakeBucket({ a: alpha });
    const answers: unknown[] = [null, { objects: 'x' }, { objects: [{ key: 1 }], truncated: false }, { objects: [], truncated: true }];
    for (const answer of answers) {
      const query = createObjectStoreSessionQuery({ list: async () => answer as never, get: bucket.get });
      await expectRejectCode(query.listSessions(), 'SESSION_REFERENCE_READ_FAILED');
    }
    const endless = createObjectStoreSessionQuery({ list: async () => ({ objects: [], truncated: true, cursor: 'same' }), get: bucket.get });
    await expectRejectCode(endless.listSessions(), 'SESSION_REFERENCE_READ_FAILED');
    const noBody = createObjectStoreSessionQuery({ list: bucket.list, get: async () => ({}) as never });
    await expectRejectCode(noBody.listSessions(), 'SESSION_REFERENCE_READ_FAILED');
  });

  it('an object gone after listing is NOT_FOUND; one replaced by another session READ_FAILED', async () => {
    const { bucket, store } = fakeBucket({ a: realJsonl, b: beta });
    const query = createObjectStoreSessionQuery(bucket);
    await query.listSessions();
    store.delete('a');
    await expectRejectCode(query.readSurface(REAL_ID), 'SESSION_REFERENCE_NOT_FOUND');
    const replaced = fakeBucket({ a: realJsonl });
    const query2 = createObjectStoreSessionQuery(replaced.bucket);
    await query2.listSessions();
    replaced.store.set('a', encoder.encode(alpha));
    await expectRejectCode(query2.readSurface(REAL_ID), 'SESSION_REFERENCE_READ_FAILED');
  });

  it('a store that refuses the first range (an empty object of unknown size) falls back to a whole read', async () => {
    const { bucket, stats } = fakeBucket({ empty: '', a: alpha }, { sizes: false });
    expect((await createObjectStoreSessionQuery(bucket).listSessions()).map((r) => r.header.id)).toEqual(['alpha']);
    expect(stats.gets.filter((get) => get.key === 'empty')).toEqual([{ key: 'empty', range: { offset: 0, length: 4096 } }, { key: 'empty' }]);
  });

  it('rejects a bucket without list/get and bad options with SESSION_REFERENCE_INVALID_CONFIG', () => {
    const { bucket } = fakeBucket({});
    for (const bad of [null, {}, { list() {} }, 'bucket']) {
      expectCode(() => createObjectStoreSessionQuery(bad as unknown as ObjectStoreBucket), 'SESSION_REFERENCE_INVALID_CONFIG');
    }
    for (const options of [null, { prefx: 'a' }, { prefix: 1 }, { rangeReads: 'yes' }, { concurrency: 0 }, { concurrency: 1.5 }]) {
      const error = expectCode(() => createObjectStoreSessionQuery(bucket, options as never), 'SESSION_REFERENCE_INVALID_CONFIG');
      expect(error.message.length).toBeGreaterThan(0);
    }
  });
});

describe('createObjectStoreSessionQuery: cancellation', () => {
  it('an aborted signal rejects with SESSION_REFERENCE_CANCELLED before any read', async () => {
    const { bucket, stats } = fakeBucket({ a: alpha });
    const query = createObjectStoreSessionQuery(bucket);
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    const error = await expectRejectCode(query.listSessions(controller.signal), 'SESSION_REFERENCE_CANCELLED');
    expect((error.cause as Error).message).toBe('gone');
    await expectRejectCode(query.readSurface('alpha', controller.signal), 'SESSION_REFERENCE_CANCELLED');
    await expectRejectCode(query.readTitleSnapshots(['alpha'], controller.signal), 'SESSION_REFERENCE_CANCELLED');
    expect(stats.lists).toHaveLength(0);
    expect(stats.gets).toHaveLength(0);
  });

  it('aborting while reads are held rejects without waiting for them and starts no further read; the next call lists again', async () => {
    const objects: Record<string, string> = {};
    for (let i = 0; i < 12; i++) objects[`k${i}`] = sessionLogText({ id: `s${i}`, createdAt: i });
    let answer!: (how: 'answer') => void;
    const { bucket, stats } = fakeBucket(objects, { hold: new Promise((resolve) => (answer = resolve)) });
    const query = createObjectStoreSessionQuery(bucket, { concurrency: 2 });
    const controller = new AbortController();
    const pending = query.listSessions(controller.signal);
    await eventually(() => expect(stats.gets.length).toBeGreaterThanOrEqual(2));
    controller.abort();
    // Rejected while both reads are still held: the call did not wait for them.
    await expectRejectCode(pending, 'SESSION_REFERENCE_CANCELLED');
    expect(stats.gets).toHaveLength(2);
    // The held reads answer now; what they lead to runs, and starts no other read.
    answer('answer');
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(stats.gets).toHaveLength(2);
    // Another caller is not affected by the cancelled listing.
    expect(await query.listSessions()).toHaveLength(12);
  });

  it("one caller's abort does not fail another caller waiting on the same listing", async () => {
    const { bucket } = fakeBucket({ a: alpha, b: beta }, { getDelayMs: 20 });
    const query = createObjectStoreSessionQuery(bucket);
    const controller = new AbortController();
    const first = query.listSessions(controller.signal);
    const second = query.listSessions();
    controller.abort();
    await expectRejectCode(first, 'SESSION_REFERENCE_CANCELLED');
    expect((await second).map((r) => r.header.id)).toEqual(['beta', 'alpha']);
  });

  it("one caller's abort does not fail another caller reading the same log", async () => {
    const { bucket, stats } = fakeBucket({ r: realJsonl }, { getDelayMs: 20 });
    const query = createObjectStoreSessionQuery(bucket);
    await query.listSessions();
    const controller = new AbortController();
    const first = query.readSurface(REAL_ID, controller.signal);
    const second = query.readSurface(REAL_ID);
    controller.abort();
    await expectRejectCode(first, 'SESSION_REFERENCE_CANCELLED');
    expect((await second).capturedThroughSeq).toBe(98);
    expect(await query.readSurface(REAL_ID)).toEqual(await second);
    expect(stats.gets.filter((get) => get.range === undefined).length).toBeLessThanOrEqual(2);
  });
});

describe('createObjectStoreSessionQuery with the service (SPEC §6, §7, §9.4)', () => {
  it('prepares the same referenced prompt as the in-memory store, from the real zstd log', async () => {
    const { bucket, stats } = fakeBucket({ 'x/1': realZstd, 'x/2': alpha, 'x/3': zstdLog(beta) });
    const query = createObjectStoreSessionQuery(bucket);
    const memory = createMemorySessionQuery([parseSessionLog(realLog), parseSessionLog(alpha), parseSessionLog(beta)]);
    const agent = { id: 'beta', cwd: '/work/a' };
    const mention = formatSessionReferenceMention({ sessionId: REAL_ID, label: 'dumen' });
    const message: UserMessage = { id: 'm1', role: 'user', content: [{ type: 'text', text: `Continue ${mention} please` }], source: { kind: 'user' } };
    const config = { maxReferenceBytes: 16384 };
    const fromBucket = await createSessionReferences({ sessionQuery: query, config }).referenceUserMessage(agent, message);
    const fromMemory = await createSessionReferences({ sessionQuery: memory, config }).referenceUserMessage(agent, message);
    expect(fromBucket).toEqual(fromMemory);
    expect(fromBucket.envelope!.display).toEqual([{ type: 'text', text: 'Continue @dumen please' }]);
    const [reference] = fromBucket.envelope!.contexts[0]!.metadata.references;
    expect(reference).toMatchObject({ sessionId: REAL_ID, label: 'dumen', capturedThroughSeq: 98, budgetBytes: 16384 });
    expect(reference!.serializedBytes).toBeLessThanOrEqual(16384);
    const text = (fromBucket.content[0] as { text: string }).text;
    expect(text).toContain('Bu projeyi gemini ile');
    expect(text).toContain('Proje bağlamı net');
    expect(text.endsWith('\n\n## My request:\n\n')).toBe(true);
    expect(composePromptMessage(message)).toEqual(message);
    // Only the cited log was read whole: the others fit in their first (header) read.
    expect(stats.gets.filter((get) => get.range === undefined).map((get) => get.key)).toEqual(['x/1']);
  });

  it('lists candidates with titles and cwd ranking', async () => {
    const { bucket } = fakeBucket({ r: realJsonl, a: alpha, b: beta, g: gamma });
    const refs = createSessionReferences({ sessionQuery: createObjectStoreSessionQuery(bucket) });
    const rows = await refs.listCandidates({ id: 'beta', cwd: '/work/g' });
    expect(rows.map((r) => [r.sessionId, r.label])).toEqual([
      ['gamma', 'gamma'],
      [REAL_ID, REAL_TITLE],
      ['alpha', 'Alpha schema'],
    ]);
    expect(await refs.listCandidates({ id: 'beta' }, 'WORK/A')).toMatchObject([{ sessionId: 'alpha', cwd: '/work/a' }]);
  });
});
