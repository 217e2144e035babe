import { describe, expect, it } from 'vitest';
import realLog from '../samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl?raw';
import { createSessionReferences, type SessionEvent } from '../src/index.js';
import { createMemorySessionQuery, parseSessionLog, type SessionLog } from '../src/store/index.js';
import { expectCode, expectRejectCode } from './helpers.js';

const REAL_ID = 'session-904b047f-eb01-493f-b98a-391ecfae5b66';
const real = parseSessionLog(realLog);

const header = (id: string, createdAt: number, cwd?: string) => ({ type: 'session', version: 3, id, createdAt, ...(cwd ? { cwd } : {}) });
const line = (value: unknown) => JSON.stringify(value);
const text = (t: string) => [{ type: 'text', text: t }];

/**
 * A compacted session written as dsh would: four messages, a compact checkpoint replacing seq 1..3
 * (positions, not a seq range), a later reply, two titles (the last one wins) and a final non-surface
 * event.
 */
const COMPACTED = [
  line(header('compacted', 1_700_000_000_500, '/w/compacted')),
  line({ type: 'user/message', seq: 1, time: 1, data: { id: 'u1', role: 'user', content: text('first question'), source: { kind: 'user' } }, surfaceOp: 'append' }),
  line({ type: 'session/title', seq: 2, time: 2, data: { title: 'Old title', source: { kind: 'fallback' } } }),
  line({ type: 'assistant/message', seq: 3, time: 3, data: { turn: 1, step: 1, message: { role: 'assistant', content: text('first answer') } }, surfaceOp: 'append' }),
  line({ type: 'user/message', seq: 4, time: 4, data: { id: 'u4', role: 'user', content: text('second question'), source: { kind: 'user' } }, surfaceOp: 'append' }),
  line({ type: 'assistant/message', seq: 5, time: 5, data: { turn: 2, step: 1, message: { role: 'assistant', content: text('second answer') } }, surfaceOp: 'append' }),
  line({
    type: 'user/message',
    seq: 6,
    time: 6,
    data: { id: 'c6', role: 'user', content: text('Summary of the conversation so far'), source: { kind: 'plugin', plugin: 'compact' } },
    surfaceOp: { op: 'replace', start: 1, end: 4 },
  }),
  line({ type: 'session/title', seq: 7, time: 7, data: { title: 'New title', source: { kind: 'llm' } } }),
  line({ type: 'session/title', seq: 8, time: 8, data: { title: 42 } }),
  line({ type: 'assistant/message', seq: 9, time: 9, data: { turn: 3, step: 1, message: { role: 'assistant', content: text('after compaction') } }, surfaceOp: 'append' }),
  line({ type: 'step/end', seq: 10, time: 10, data: {} }),
  '',
].join('\n');

const compacted = parseSessionLog(COMPACTED);
const empty: SessionLog = { header: header('empty', 1_700_000_000_000), events: [] };

const seqs = (events: SessionEvent[]) => events.map((e) => e.seq);

describe('createMemorySessionQuery over the real log (SPEC §11.3, §11.4)', () => {
  const query = createMemorySessionQuery([real]);

  it('lists the session with its header', async () => {
    expect(await query.listSessions()).toEqual([{ header: real.header, identity: expect.any(String) }]);
  });

  it('reads the folded surface and captures through the last seq', async () => {
    const surface = await query.readSurface(REAL_ID);
    expect(surface.session).toEqual(real.header);
    expect(surface.capturedThroughSeq).toBe(98);
    // Only `append` ops: the surface is every event with a surfaceOp, in log order.
    const onSurface = real.events.filter((e) => e.surfaceOp !== undefined);
    expect(surface.events).toEqual(onSurface);
    expect(surface.events).toHaveLength(37);
    expect(surface.events.some((e) => e.type === 'agent/inbox/spliced' || e.type === 'tool/call')).toBe(false);
  });

  it('reads the title from the session/title event', async () => {
    expect(await query.readTitleSnapshots([REAL_ID])).toEqual([
      { sessionId: REAL_ID, status: 'fulfilled', value: { title: { title: 'Bu projeyi gemini ile geliştiriyorduk' } } },
    ]);
  });

  it('serves the service end to end: candidates with titles, a prepared reference', async () => {
    const refs = createSessionReferences({ sessionQuery: query });
    const candidates = await refs.listCandidates({ id: 'me', cwd: '/home/user/projects/01_unicorn/77-Dumen' });
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({ sessionId: REAL_ID, label: 'Bu projeyi gemini ile geliştiriyorduk', createdAt: 1789415426008 });
    const prepared = await refs.prepare({ id: 'me' }, text('see this'), [{ sessionId: REAL_ID }]);
    const context = prepared.context!;
    expect(context.metadata.references[0]).toMatchObject({ sessionId: REAL_ID, capturedThroughSeq: 98, compacted: false });
    expect(context.content[0].text).toContain('Bu projeyi gemini ile');
    expect(context.content[0].text).not.toContain('A skill is a reusable set');
  });
});

describe('createMemorySessionQuery listing order (SPEC §11.3)', () => {
  it('lists newest first, ties by id ascending in UTF-16 code units', async () => {
    const logs = [
      { header: header('old', 1), events: [] },
      { header: header('\uFFFF', 5), events: [] },
      { header: header('a', 5), events: [] },
      { header: header('newest', 9), events: [] },
      { header: header('\u{1F600}', 5), events: [] },
      { header: header('B', 5), events: [] },
      { header: header('é', 5), events: [] },
      { header: header('negative', -3), events: [] },
    ];
    const listed = await createMemorySessionQuery(logs).listSessions();
    // Code units: 'B' (0x42) < 'a' (0x61) < 'é' (0xE9) < '\u{1F600}' (0xD83D…) < '\uFFFF'.
    expect(listed.map((r) => r.header.id)).toEqual(['newest', 'B', 'a', 'é', '\u{1F600}', '\uFFFF', 'old', 'negative']);
  });

  it('keeps every header field', async () => {
    const [row] = await createMemorySessionQuery([compacted]).listSessions();
    expect(row).toEqual({ header: { type: 'session', version: 3, id: 'compacted', createdAt: 1_700_000_000_500, cwd: '/w/compacted' }, identity: expect.any(String) });
  });

  it('lists nothing for no logs', async () => {
    const query = createMemorySessionQuery([]);
    expect(await query.listSessions()).toEqual([]);
    await expectRejectCode(query.readSurface('x'), 'SESSION_REFERENCE_NOT_FOUND');
  });
});

describe('createMemorySessionQuery surfaces (SPEC §11.3, §8.2)', () => {
  const query = createMemorySessionQuery([compacted, real, empty]);

  it('folds a compacted session: the checkpoint replaces the run it names', async () => {
    const surface = await query.readSurface('compacted');
    expect(seqs(surface.events)).toEqual([6, 5, 9]);
    expect(surface.events[0]!.surfaceOp).toEqual({ op: 'replace', start: 1, end: 4 });
    expect(surface.capturedThroughSeq).toBe(10);
    expect(surface.session).toEqual(compacted.header);
  });

  it('captures through the seq of the last event in log order, null without events', async () => {
    const unordered = createMemorySessionQuery([{ header: header('u', 1), events: [{ type: 'x', seq: 9, time: 0, data: null }, { type: 'x', seq: 4, time: 0, data: null }] }]);
    expect((await unordered.readSurface('u')).capturedThroughSeq).toBe(4);
    expect(await query.readSurface('empty')).toEqual({ session: empty.header, capturedThroughSeq: null, events: [] });
  });

  it('prepares a compacted reference from the checkpoint on', async () => {
    const refs = createSessionReferences({ sessionQuery: query });
    const prepared = await refs.prepare({ id: 'me' }, text('go'), [{ sessionId: 'compacted', label: 'C' }]);
    const block = prepared.context!.content[0].text;
    const json = JSON.parse(block.slice(block.indexOf('<referenced-sessions>\n') + 22, block.lastIndexOf('\n</referenced-sessions>')));
    expect(json[0].conversation).toEqual([
      { role: 'user', text: 'Summary of the conversation so far', checkpoint: true },
      { role: 'assistant', text: 'second answer' },
      { role: 'assistant', text: 'after compaction' },
    ]);
    expect(prepared.context!.metadata.references[0]).toMatchObject({ compacted: true, capturedThroughSeq: 10 });
  });

  it('rejects an unknown id with NOT_FOUND naming it, a non-string id with INVALID_ARGUMENT', async () => {
    const error = await expectRejectCode(query.readSurface('nope'), 'SESSION_REFERENCE_NOT_FOUND');
    expect(error.message).toContain('"nope"');
    await expectRejectCode(query.readSurface(7 as unknown as string), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    await expectRejectCode(query.readSurface('__proto__'), 'SESSION_REFERENCE_NOT_FOUND');
  });

  it('returns fresh arrays and headers: callers cannot corrupt the store', async () => {
    const listed = await query.listSessions();
    listed.reverse().pop();
    listed[0]!.header.id = 'mutated';
    const surface = await query.readSurface('compacted');
    surface.events.length = 0;
    surface.session.id = 'mutated';
    expect((await query.listSessions()).map((r) => r.header.id)).toEqual([REAL_ID, 'compacted', 'empty']);
    const again = await query.readSurface('compacted');
    expect(seqs(again.events)).toEqual([6, 5, 9]);
    expect(again.session.id).toBe('compacted');
  });

  it('is not affected by later changes to the input arrays', async () => {
    const log = parseSessionLog(COMPACTED);
    const logs = [log];
    const own = createMemorySessionQuery(logs);
    logs.push(empty);
    log.events.push({ type: 'step/end', seq: 11, time: 11, data: {} });
    expect(await own.listSessions()).toHaveLength(1);
    expect((await own.readSurface('compacted')).capturedThroughSeq).toBe(10);
  });
});

describe('createMemorySessionQuery titles (SPEC §11.3, §4.2)', () => {
  const query = createMemorySessionQuery([compacted, empty, real]);

  it('answers one row per id, in order: the last string title wins, {} without title, NOT_FOUND rejected', async () => {
    const rows = await query.readTitleSnapshots(['compacted', 'empty', 'missing', REAL_ID, 'compacted']);
    expect(rows.map((r) => r.sessionId)).toEqual(['compacted', 'empty', 'missing', REAL_ID, 'compacted']);
    expect(rows[0]).toEqual({ sessionId: 'compacted', status: 'fulfilled', value: { title: { title: 'New title' } } });
    expect(rows[1]).toEqual({ sessionId: 'empty', status: 'fulfilled', value: {} });
    expect(rows[2]).toMatchObject({ sessionId: 'missing', status: 'rejected' });
    const reason = (rows[2] as { reason: unknown }).reason;
    expect(reason).toMatchObject({ name: 'SessionReferenceError', code: 'SESSION_REFERENCE_NOT_FOUND' });
    expect(rows[4]).toEqual(rows[0]);
    expect(await query.readTitleSnapshots([])).toEqual([]);
  });

  it('reads titles from the raw log, even ones that are not on the surface', async () => {
    const titled = createMemorySessionQuery([
      { header: header('t', 1), events: [{ type: 'session/title', seq: 1, time: 0, data: { title: '' } }] },
    ]);
    expect(await titled.readTitleSnapshots(['t'])).toEqual([{ sessionId: 't', status: 'fulfilled', value: { title: { title: '' } } }]);
  });

  it('rejects a non-array or non-string ids with INVALID_ARGUMENT', async () => {
    await expectRejectCode(query.readTitleSnapshots('compacted' as unknown as string[]), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    await expectRejectCode(query.readTitleSnapshots(['compacted', 3] as unknown as string[]), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });
});

describe('createMemorySessionQuery cancellation (SPEC §7.5, §10)', () => {
  const query = createMemorySessionQuery([compacted]);

  it('rejects every method with CANCELLED for an already-aborted signal, cause signal.reason', async () => {
    const controller = new AbortController();
    const reason = new Error('stop');
    controller.abort(reason);
    const calls = [
      query.listSessions(controller.signal),
      query.readSurface('compacted', controller.signal),
      query.readTitleSnapshots(['compacted'], controller.signal),
    ];
    for (const call of calls) {
      const error = await expectRejectCode(call, 'SESSION_REFERENCE_CANCELLED');
      expect(error.cause).toBe(reason);
    }
  });

  it('answers normally with a live signal, rejects a non-signal with INVALID_ARGUMENT', async () => {
    const signal = new AbortController().signal;
    expect(await query.listSessions(signal)).toHaveLength(1);
    await expectRejectCode(query.listSessions({} as AbortSignal), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });
});

describe('createMemorySessionQuery input validation (SPEC §11.3, §10)', () => {
  it('rejects two logs with one id', () => {
    const error = expectCode(() => createMemorySessionQuery([compacted, empty, parseSessionLog(COMPACTED)]), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    expect(error.message).toContain('"compacted"');
  });

  it('rejects malformed input with INVALID_ARGUMENT', () => {
    const bad: unknown[] = [
      undefined,
      null,
      'logs',
      { length: 1, 0: compacted },
      [null],
      [realLog],
      [{ events: [] }],
      [{ header: { id: 'x' }, events: [] }],
      [{ header: { id: 1, createdAt: 1 }, events: [] }],
      [{ header: { id: 'x', createdAt: Number.NaN }, events: [] }],
      [{ header: { id: 'x', createdAt: '1' }, events: [] }],
      [{ header: header('x', 1) }],
      [{ header: header('x', 1), events: {} }],
      [{ header: header('x', 1), events: [null] }],
      [{ header: header('x', 1), events: [{ type: 'x' }] }],
      [{ header: header('x', 1), events: [{ type: 1, seq: 1 }] }],
      [{ header: header('x', 1), events: [{ type: 'x', seq: Number.POSITIVE_INFINITY }] }],
    ];
    for (const logs of bad) expectCode(() => createMemorySessionQuery(logs as SessionLog[]), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });
});
