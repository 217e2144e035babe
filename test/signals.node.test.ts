/**
 * Signals in Node (SPEC §10.2): one long-lived `AbortSignal` shared by many pending calls never
 * triggers Node's `MaxListenersExceededWarning`, and a hostile signal object never causes an
 * unhandled rejection — both watched on `process` itself (Node-only: the shared suite has no
 * `process`; test/signals.test.ts covers the rest in every runtime).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createSessionReferences, SessionReferenceError, type SessionQuery } from '../src/index.js';

const AGENT = { id: 'target' };
const never = () => new Promise<never>(() => {});
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
const NEVER_ANSWERS: SessionQuery = { listSessions: never, readSurface: never, readTitleSnapshots: never };

let warnings: Error[] = [];
let unhandled: unknown[] = [];
const onWarning = (warning: Error) => warnings.push(warning);
const onUnhandled = (reason: unknown) => unhandled.push(reason);
beforeEach(() => {
  warnings = [];
  unhandled = [];
  process.on('warning', onWarning);
  process.on('unhandledRejection', onUnhandled);
});
afterEach(() => {
  process.off('warning', onWarning);
  process.off('unhandledRejection', onUnhandled);
});

describe('signals in Node (SPEC §10.2)', () => {
  it('40 pending calls on one AbortSignal, then cancelled: no MaxListenersExceededWarning, nothing unhandled', async () => {
    const refs = createSessionReferences({ sessionQuery: NEVER_ANSWERS });
    const controller = new AbortController();
    const calls = Array.from({ length: 40 }, (_, i) =>
      i % 2 ? refs.prepare(AGENT, [], [{ sessionId: `s${i}` }, { sessionId: `t${i}` }], controller.signal) : refs.listCandidates(AGENT, undefined, undefined, controller.signal),
    );
    const settled = Promise.allSettled(calls);
    await tick();
    controller.abort(new Error('user left'));
    for (const outcome of await settled) {
      expect(outcome.status).toBe('rejected');
      expect(((outcome as PromiseRejectedResult).reason as SessionReferenceError).code).toBe('SESSION_REFERENCE_CANCELLED');
    }
    await tick();
    expect(warnings.map((w) => w.name)).not.toContain('MaxListenersExceededWarning');
    expect(unhandled).toEqual([]);
  });

  it('a signal object whose removeEventListener throws: the call fails, nothing reaches the process', async () => {
    const controller = new AbortController();
    const signal = {
      get aborted() {
        return controller.signal.aborted;
      },
      addEventListener: () => {},
      removeEventListener: () => {
        throw new Error('cleanup broke');
      },
    } as unknown as AbortSignal;
    const answering: SessionQuery = { listSessions: async () => [], readSurface: async () => ({ session: { id: 'a', createdAt: 0 }, capturedThroughSeq: null, events: [] }) };
    const refs = createSessionReferences({ sessionQuery: answering });
    // One call at a time: our one listener leaves the signal when the last call on it settles.
    for (const run of [() => refs.prepare(AGENT, [], [{ sessionId: 'a' }], signal), () => refs.listCandidates(AGENT, undefined, undefined, signal)]) {
      const [outcome] = await Promise.allSettled([run()]);
      expect(outcome!.status).toBe('rejected');
      expect(((outcome as PromiseRejectedResult).reason as SessionReferenceError).code).toBe('SESSION_REFERENCE_INVALID_ARGUMENT');
    }
    await tick();
    await tick();
    expect(unhandled).toEqual([]);
  });
});
