import { describe, expect, it } from 'vitest';
import { createSessionReferences, type SessionQuery } from '../src/index.js';
import { expectRejectCode } from './helpers.js';
import { fakeQuery, userMessage } from './sessions.js';

const agent = { id: 'target' };

describe('cancellation (SPEC §6.5, §7.5)', () => {
  it('rejects promptly with CANCELLED (cause = signal.reason) while a read never resolves', async () => {
    const query: SessionQuery = { listSessions: async () => [], readSurface: () => new Promise(() => {}) };
    const refs = createSessionReferences({ sessionQuery: query });
    const controller = new AbortController();
    const pending = refs.prepare(agent, [], [{ sessionId: 'a' }], controller.signal);
    const reason = new Error('user left');
    controller.abort(reason);
    const error = await expectRejectCode(pending, 'SESSION_REFERENCE_CANCELLED');
    expect(error.cause).toBe(reason);
  });

  it('ignores a read that resolves after the abort', async () => {
    let resolve!: (value: unknown) => void;
    const query: SessionQuery = { listSessions: async () => [], readSurface: () => new Promise((r) => { resolve = r; }) as never };
    const controller = new AbortController();
    const pending = createSessionReferences({ sessionQuery: query }).prepare(agent, [], [{ sessionId: 'a' }], controller.signal);
    controller.abort();
    resolve({ session: { id: 'a', createdAt: 0 }, capturedThroughSeq: 1, events: [userMessage(1, 'late')] });
    await expectRejectCode(pending, 'SESSION_REFERENCE_CANCELLED');
  });

  it('rejects at once for an already aborted signal, before reading', async () => {
    const query = fakeQuery([]);
    const refs = createSessionReferences({ sessionQuery: query });
    const signal = AbortSignal.abort('gone');
    const error = await expectRejectCode(refs.prepare(agent, [], [{ sessionId: 'a' }], signal), 'SESSION_REFERENCE_CANCELLED');
    expect(error.cause).toBe('gone');
    await expectRejectCode(refs.listCandidates(agent, '', 5, signal), 'SESSION_REFERENCE_CANCELLED');
    expect(query.calls.readSurface).toEqual([]);
    expect(query.calls.listSessions).toBe(0);
  });

  it('cancels listCandidates while listSessions is pending', async () => {
    const query: SessionQuery = { listSessions: () => new Promise(() => {}), readSurface: async () => { throw new Error(); } };
    const controller = new AbortController();
    const pending = createSessionReferences({ sessionQuery: query }).listCandidates(agent, undefined, undefined, controller.signal);
    controller.abort();
    await expectRejectCode(pending, 'SESSION_REFERENCE_CANCELLED');
  });

  it('rejects a signal that is not an AbortSignal', async () => {
    const refs = createSessionReferences({ sessionQuery: fakeQuery([]) });
    await expectRejectCode(refs.prepare(agent, [], [], {} as never), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });
});
