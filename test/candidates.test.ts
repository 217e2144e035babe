import { describe, expect, it } from 'vitest';
import { createSessionReferences, formatSessionReferenceMention, type SessionHeader, type SessionQuery } from '../src/index.js';
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
