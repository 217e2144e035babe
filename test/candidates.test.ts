import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cleanTitleLabel, createSessionReferences, formatSessionReferenceMention, type SessionHeader, type SessionQuery } from '../src/index.js';
import { expectRejectCode } from './helpers.js';
import { fakeQuery, type FakeSession } from './sessions.js';

const s = (id: string, cwd?: string | null, title?: string): FakeSession => ({
  header: { id, createdAt: 100, ...(cwd === undefined ? {} : { cwd }) } as SessionHeader,
  events: [],
  ...(title === undefined ? {} : { title }),
});

// listSessions order (newest first) is the order of this array.
const sessions = [
  s('other-1', '/elsewhere'),
  s('same-1', '/repo', 'First title'),
  s('none-1'),
  s('target', '/repo'),
  s('none-2', null, '   '),
  s('same-2', '/repo'),
  s('none-3', ''),
  s('Other-2', '/Repo/Sub'),
];

describe('listCandidates (SPEC §6)', () => {
  it('drops the agent, orders same cwd → no cwd → other cwd stably, and labels with titles', async () => {
    const query = fakeQuery(sessions);
    const refs = createSessionReferences({ sessionQuery: query });
    const result = await refs.listCandidates({ id: 'target', cwd: '/repo' });
    expect(result.map((c) => c.sessionId)).toEqual(['same-1', 'same-2', 'none-1', 'none-2', 'none-3', 'other-1', 'Other-2']);
    expect(result[0]).toEqual({
      sessionId: 'same-1',
      label: 'First title',
      cwd: '/repo',
      createdAt: 100,
      mention: formatSessionReferenceMention({ sessionId: 'same-1', label: 'First title' }),
    });
    expect(result.find((c) => c.sessionId === 'none-2')!.label).toBe('none-2');
    expect('cwd' in result.find((c) => c.sessionId === 'none-3')!).toBe(false);
    expect(query.calls.listSessions).toBe(1);
  });

  it('takes the agent cwd from agent.session.header.cwd (a real dsh Agent)', async () => {
    const refs = createSessionReferences({ sessionQuery: fakeQuery(sessions) });
    const result = await refs.listCandidates({ id: 'target', session: { header: { cwd: '/elsewhere' } } });
    expect(result.map((c) => c.sessionId).slice(0, 2)).toEqual(['other-1', 'none-1']);
  });

  it('has no same-cwd group when the agent has no cwd', async () => {
    const refs = createSessionReferences({ sessionQuery: fakeQuery([s('a', ''), s('b', '/x'), s('c')]) });
    expect((await refs.listCandidates({ id: 'z', cwd: '' })).map((c) => c.sessionId)).toEqual(['a', 'c', 'b']);
  });

  it('filters by case-insensitive substring of id or cwd only, never titles', async () => {
    const refs = createSessionReferences({ sessionQuery: fakeQuery(sessions) });
    const ids = async (q?: string) => (await refs.listCandidates({ id: 'target' }, q)).map((c) => c.sessionId);
    expect(await ids('OTHER')).toEqual(['other-1', 'Other-2']);
    expect(await ids('repo/sub')).toEqual(['Other-2']);
    expect(await ids('first title')).toEqual([]);
    expect(await ids('')).toHaveLength(7);
    expect(await ids(undefined)).toHaveLength(7);
  });

  it('uses String.prototype.toLowerCase, not the locale-dependent variant', async () => {
    const refs = createSessionReferences({ sessionQuery: fakeQuery([s('İSTANBUL'), s('istanbul')]) });
    expect((await refs.listCandidates({ id: 'x' }, 'i̇stanbul')).map((c) => c.sessionId)).toEqual(['İSTANBUL']);
  });

  it('keeps the first limit and reads titles for those only, in one call', async () => {
    const query = fakeQuery(sessions);
    const refs = createSessionReferences({ sessionQuery: query, config: { candidateLimit: 3 } });
    expect((await refs.listCandidates({ id: 'target', cwd: '/repo' })).map((c) => c.sessionId)).toEqual(['same-1', 'same-2', 'none-1']);
    expect(query.calls.readTitleSnapshots).toEqual([['same-1', 'same-2', 'none-1']]);
    expect(await refs.listCandidates({ id: 'target', cwd: '/repo' }, undefined, 1)).toHaveLength(1);
  });

  it('matches title rows by sessionId, not position, and falls back to the id', async () => {
    const query: SessionQuery = {
      listSessions: async () => [s('a').header, s('b').header, s('c').header].map((header) => ({ header })),
      readSurface: async () => { throw new Error('unused'); },
      readTitleSnapshots: async () => [
        { sessionId: 'c', status: 'fulfilled', value: { title: { title: 'Title C' } } },
        { sessionId: 'a', status: 'rejected', reason: new Error('nope') },
        { sessionId: 'zzz', status: 'fulfilled', value: { title: { title: 'Not asked' } } },
      ],
    };
    const result = await createSessionReferences({ sessionQuery: query }).listCandidates({ id: 'x' });
    expect(result.map((c) => c.label)).toEqual(['a', 'b', 'Title C']);
  });

  it('falls back to ids when titles fail or are unsupported', async () => {
    const base = fakeQuery([s('a', null, 'T')]);
    const failing: SessionQuery = { listSessions: base.listSessions, readSurface: base.readSurface, readTitleSnapshots: async () => { throw new Error('down'); } };
    const absent: SessionQuery = { listSessions: base.listSessions, readSurface: base.readSurface };
    for (const query of [failing, absent]) {
      expect((await createSessionReferences({ sessionQuery: query }).listCandidates({ id: 'x' }))[0]!.label).toBe('a');
    }
  });

  it('rejects bad arguments and wraps host failures', async () => {
    const refs = createSessionReferences({ sessionQuery: fakeQuery(sessions) });
    await expectRejectCode(refs.listCandidates({} as never), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    await expectRejectCode(refs.listCandidates({ id: 'a' }, 42 as never), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    for (const limit of [0, -1, 1.5, NaN, Infinity, '3', 2 ** 53]) {
      await expectRejectCode(refs.listCandidates({ id: 'a' }, '', limit as never), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    }
    const cause = new Error('disk on fire');
    const broken = createSessionReferences({ sessionQuery: { listSessions: () => Promise.reject(cause), readSurface: async () => { throw cause; } } });
    const error = await expectRejectCode(broken.listCandidates({ id: 'a' }), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.cause).toBe(cause);
    const garbage = createSessionReferences({ sessionQuery: { listSessions: async () => [{ nope: 1 }] as never, readSurface: async () => { throw cause; } } });
    await expectRejectCode(garbage.listCandidates({ id: 'a' }), 'SESSION_REFERENCE_READ_FAILED');
  });

  it.each<[string, unknown]>([
    ['missing', undefined],
    ['a string', '2024-01-01'],
    ['NaN', NaN],
    ['Infinity', Infinity],
    ['null', null],
  ])('rejects a record whose header.createdAt is %s with READ_FAILED naming the record (SPEC §4.1)', async (_, createdAt) => {
    const records = [{ header: { id: 'ok', createdAt: 1 } }, { header: { id: 'bad-created-at', createdAt } }];
    const query: SessionQuery = { listSessions: async () => records as never, readSurface: async () => { throw new Error('unused'); } };
    const error = await expectRejectCode(createSessionReferences({ sessionQuery: query }).listCandidates({ id: 'x' }), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.message).toContain('record 1');
    expect(error.message).toContain('bad-created-at');
  });
});

describe('listCandidates with matchTitles (SPEC §6.7)', () => {
  const AGENT = { id: 'target', cwd: '/repo' };
  const titled = (matchTitles = true, list = sessions, candidateLimit?: number) => {
    const query = fakeQuery(list);
    return { query, refs: createSessionReferences({ sessionQuery: query, config: { matchTitles, ...(candidateLimit && { candidateLimit }) } }) };
  };

  it('also matches the cleaned title label, case-insensitively, keeping the rank order', async () => {
    const list = [s('o', '/x', 'Schema work'), s('n', undefined, 'Fix\n\u200bthe SCHEMA'), s('r', '/repo', 'schema draft'), s('q', '/repo', 'unrelated')];
    const { refs } = titled(true, list);
    const result = await refs.listCandidates(AGENT, 'SCHEMA');
    expect(result.map((c) => [c.sessionId, c.label])).toEqual([['r', 'schema draft'], ['n', 'Fix the SCHEMA'], ['o', 'Schema work']]);
    // The label of SPEC §6.6 is what is matched: the raw title's line break is a space there.
    expect((await refs.listCandidates(AGENT, 'fix the')).map((c) => c.sessionId)).toEqual(['n']);
    expect((await refs.listCandidates(AGENT, 'fix\n')).map((c) => c.sessionId)).toEqual([]);
  });

  it('still matches ids and cwds, and without matchTitles never titles', async () => {
    expect((await titled(true).refs.listCandidates(AGENT, 'first TITLE')).map((c) => c.sessionId)).toEqual(['same-1']);
    expect((await titled(true).refs.listCandidates(AGENT, 'repo/sub')).map((c) => c.sessionId)).toEqual(['Other-2']);
    expect((await titled(false).refs.listCandidates(AGENT, 'first title')).map((c) => c.sessionId)).toEqual([]);
  });

  it('uses String.prototype.toLowerCase on titles too', async () => {
    const { refs } = titled(true, [s('a', null, 'İSTANBUL'), s('b', null, 'istanbul')]);
    expect((await refs.listCandidates(AGENT, 'i̇stanbul')).map((c) => c.sessionId)).toEqual(['a']);
  });

  it('an empty query reads titles once, for the kept rows only (SPEC §6.4)', async () => {
    const { refs, query } = titled(true, sessions, 3);
    expect((await refs.listCandidates(AGENT, '')).map((c) => c.sessionId)).toEqual(['same-1', 'same-2', 'none-1']);
    expect(query.calls.readTitleSnapshots).toEqual([['same-1', 'same-2', 'none-1']]);
  });

  it('reads titles in rank order, limit at a time, passing the signal, and stops once limit are found', async () => {
    // 1,000 sessions in other cwds, then 1,000 in the agent's: the same-cwd ones rank first.
    const list = [
      ...Array.from({ length: 1000 }, (_, i) => s(`other-${i}`, `/o/${i}`, i % 7 === 0 ? `needle ${i}` : `hay ${i}`)),
      ...Array.from({ length: 1000 }, (_, i) => s(`same-${i}`, '/repo', i === 11 || i === 12 || i === 40 ? `Needle ${i}` : `hay ${i}`)),
    ];
    const query = fakeQuery(list);
    const signals: unknown[] = [];
    const sessionQuery: SessionQuery = {
      listSessions: query.listSessions,
      readSurface: query.readSurface,
      readTitleSnapshots: (ids, signal) => (signals.push(signal), query.readTitleSnapshots(ids)),
    };
    const refs = createSessionReferences({ sessionQuery, config: { matchTitles: true } });
    const signal = new AbortController().signal;
    const result = await refs.listCandidates(AGENT, 'needle', 5, signal);
    expect(result.map((c) => c.sessionId)).toEqual(['same-11', 'same-12', 'same-40', 'other-0', 'other-7']);
    // Batches of 5 in rank order: the 1,000 same-cwd sessions, then other-0…other-9.
    const read = query.calls.readTitleSnapshots;
    expect(read.every((batch) => batch.length === 5)).toBe(true);
    expect(read.flat()).toEqual([...Array.from({ length: 1000 }, (_, i) => `same-${i}`), ...Array.from({ length: 10 }, (_, i) => `other-${i}`)]);
    expect(signals).toHaveLength(read.length);
    expect(signals.every((value) => value === signal)).toBe(true);
  });

  it('a failed batch only loses its labels: id and cwd matches there still count, later batches are read', async () => {
    const list = [s('a-needle'), s('b', null, 'needle b'), s('c', null, 'needle c'), s('d', null, 'needle d')];
    const query = fakeQuery(list);
    let call = 0;
    const sessionQuery: SessionQuery = {
      listSessions: query.listSessions,
      readSurface: query.readSurface,
      readTitleSnapshots: async (ids) => (call++ === 0 ? Promise.reject(new Error('title store down')) : query.readTitleSnapshots(ids)),
    };
    const refs = createSessionReferences({ sessionQuery, config: { matchTitles: true } });
    expect((await refs.listCandidates(AGENT, 'needle', 2)).map((c) => [c.sessionId, c.label])).toEqual([['a-needle', 'a-needle'], ['c', 'needle c']]);
  });

  it('an abort while a batch read is pending rejects with CANCELLED', async () => {
    const controller = new AbortController();
    const sessionQuery: SessionQuery = {
      listSessions: async () => [{ header: { id: 'a', createdAt: 1 } }],
      readSurface: async () => { throw new Error('unused'); },
      readTitleSnapshots: () => new Promise(() => {}),
    };
    const pending = createSessionReferences({ sessionQuery, config: { matchTitles: true } }).listCandidates(AGENT, 'x', 1, controller.signal);
    setTimeout(() => controller.abort(new Error('closed')), 0);
    await expectRejectCode(pending, 'SESSION_REFERENCE_CANCELLED');
  });

  it('equals the oracle (filter by id, cwd or cleaned title; rank; first limit) and reads at most limit − 1 titles past the last record examined', async () => {
    const record = fc.record({
      id: fc.constantFrom('alpha', 'Beta', 'gamma', 'delta', 'ALPHA-2', 'eps'),
      cwd: fc.constantFrom(undefined, null, '', '/repo', '/Alpha', '/x'),
      title: fc.option(fc.constantFrom('Alpha plan', 'beta\nnotes', 'gamma', ' ', '\u200bDELTA'), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(record, { maxLength: 40 }), fc.constantFrom('alpha', 'BETA', 'a', 'delta', 'notes', 'zzz'), fc.integer({ min: 1, max: 6 }), async (rows, q, limit) => {
        const list = rows.map((row, i) => s(`${row.id}-${i}`, row.cwd, row.title));
        const query = fakeQuery(list);
        const result = await createSessionReferences({ sessionQuery: query, config: { matchTitles: true } }).listCandidates(AGENT, q, limit);
        const label = (session: FakeSession) => (session.title !== undefined && cleanTitleLabel(session.title)) || session.header.id;
        const rank = (cwd: unknown) => (cwd === '/repo' ? 0 : cwd == null || cwd === '' ? 1 : 2);
        const needle = q.toLowerCase();
        const ranked = [0, 1, 2].flatMap((group) => list.filter((session) => rank(session.header.cwd) === group));
        const expected = ranked
          .filter((session) => [session.header.id, session.header.cwd ?? '', label(session)].some((text) => text.toLowerCase().includes(needle)))
          .slice(0, limit);
        expect(result.map((c) => [c.sessionId, c.label])).toEqual(expected.map((session) => [session.header.id, label(session)]));
        const read = query.calls.readTitleSnapshots.flat();
        expect(read).toEqual(ranked.slice(0, read.length).map((session) => session.header.id));
        const lastExamined = expected.length === limit ? ranked.indexOf(expected.at(-1)!) : ranked.length - 1;
        expect(read.length).toBeLessThanOrEqual(lastExamined + limit);
      }),
      { numRuns: 200 },
    );
  });
});
