/**
 * Signals (SPEC §10.2): which objects are accepted as a `signal`; that every listener the module
 * adds is gone once its call settles — also when the call was cancelled while the host never
 * answers — so one long-lived signal shared by any number of calls ends with no listener of ours;
 * and that an accepted but hostile signal object (throwing methods or getters, odd listener
 * calls) can only make its own call fail with a `SessionReferenceError`, never crash anything
 * later (vitest reports unhandled rejections as errors). Shared suite: runs in every runtime.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSessionReferences, formatSessionReferenceMention, SessionReferenceError, type SessionQuery, type UserMessage } from '../src/index.js';
import { expectAtomicFailure } from './hardening.js';
import { userMessage } from './sessions.js';

const AGENT = { id: 'target', cwd: '/repo' };
const CONTENT = [{ type: 'text', text: 'see' }];
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));
const never = () => new Promise<never>(() => {});

/**
 * An `AbortSignal`-like wrapper around a real controller's signal that counts the listeners
 * currently added through it (SPEC §10.2 accepts such objects).
 */
function countingSignal() {
  const controller = new AbortController();
  const listeners = new Set<unknown>();
  let most = 0;
  const signal = {
    get aborted() {
      return controller.signal.aborted;
    },
    get reason() {
      return controller.signal.reason as unknown;
    },
    addEventListener(type: string, listener: () => void) {
      listeners.add(listener);
      most = Math.max(most, listeners.size);
      controller.signal.addEventListener(type, listener);
    },
    removeEventListener(type: string, listener: () => void) {
      listeners.delete(listener);
      controller.signal.removeEventListener(type, listener);
    },
  };
  return { signal: signal as unknown as AbortSignal, abort: (reason?: unknown) => controller.abort(reason), count: () => listeners.size, most: () => most };
}

type Answer = 'never' | 'now' | 'reject';

/** A host whose every call answers as `answer` says (`now`: a valid answer). */
function host(answer: Answer): SessionQuery {
  const reply = <T>(value: T) => (answer === 'never' ? never() : answer === 'reject' ? Promise.reject(new Error('host down')) : Promise.resolve(value));
  return {
    listSessions: () => reply([{ header: { id: 'a', createdAt: 1 } }, { header: { id: 'b', createdAt: 2, cwd: '/repo' } }]),
    readSurface: (sessionId: string) => reply({ session: { id: sessionId, createdAt: 1 }, capturedThroughSeq: 1, events: [userMessage(1, `from ${sessionId}`)] }) as never,
    readTitleSnapshots: (ids: string[]) => reply(ids.map((sessionId) => ({ sessionId, status: 'fulfilled' as const, value: { title: { title: `T ${sessionId}` } } }))),
  };
}

const message: UserMessage = {
  id: 'm',
  role: 'user',
  source: { kind: 'user' },
  content: [{ type: 'text', text: `see ${formatSessionReferenceMention({ sessionId: 'a' })}` }],
};

/** One of the three signal-taking service calls. */
function call(refs: ReturnType<typeof createSessionReferences>, which: number, signal: AbortSignal): Promise<unknown> {
  if (which % 3 === 0) return refs.listCandidates(AGENT, undefined, undefined, signal);
  if (which % 3 === 1) return refs.prepare(AGENT, CONTENT, [{ sessionId: 'a' }, { sessionId: 'b' }], signal);
  return refs.referenceUserMessage(AGENT, message, signal);
}

describe('signals: what is accepted (SPEC §10.2)', () => {
  const refs = createSessionReferences({ sessionQuery: host('now') });
  const fn = () => {};
  it.each<[string, unknown]>([
    ['an empty object', {}],
    ['null', null],
    ['a string', 'signal'],
    ['true', true],
    ['an object without removeEventListener', { aborted: false, addEventListener: fn }],
    ['an object without addEventListener', { aborted: false, removeEventListener: fn }],
    ['an object whose aborted is not a boolean', { aborted: 0, addEventListener: fn, removeEventListener: fn }],
    ['an object whose methods are not functions', { aborted: false, addEventListener: 'x', removeEventListener: fn }],
    ['an AbortController', new AbortController()],
  ])('%s is INVALID_ARGUMENT for every call, before the host is asked', async (_, signal) => {
    for (let which = 0; which < 3; which++) {
      await expectAtomicFailure(() => call(refs, which, signal as AbortSignal), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent: AGENT, content: CONTENT, message });
    }
  });

  it('accepts a real AbortSignal and any object with a boolean aborted and both methods', async () => {
    const plain = { aborted: false, addEventListener: fn, removeEventListener: fn } as unknown as AbortSignal;
    for (const signal of [new AbortController().signal, plain, countingSignal().signal]) {
      for (let which = 0; which < 3; which++) await expect(call(refs, which, signal)).resolves.toBeDefined();
    }
  });
});

describe('signals: no listener of ours outlives its call (SPEC §10.2)', () => {
  it('20 calls cancelled on one long-lived signal while the host never answers: back to 0 listeners', async () => {
    const refs = createSessionReferences({ sessionQuery: host('never') });
    const { signal, abort, count, most } = countingSignal();
    const calls = Array.from({ length: 20 }, (_, i) => call(refs, i, signal));
    await tick();
    expect(count(), 'one listener of ours, however many calls are pending').toBe(1);
    abort(new Error('user left'));
    const outcomes = await Promise.allSettled(calls);
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toBeInstanceOf(SessionReferenceError);
      expect(((outcome as PromiseRejectedResult).reason as SessionReferenceError).code).toBe('SESSION_REFERENCE_CANCELLED');
    }
    expect(count()).toBe(0);
    expect(most()).toBe(1);
  });

  it('any mix of calls, host answers and abort times on one signal ends with 0 listeners', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ which: fc.nat(2), answer: fc.constantFrom<Answer>('never', 'now', 'reject') }), { minLength: 1, maxLength: 12 }),
        fc.option(fc.nat(3), { nil: undefined }),
        async (plan, abortAfterTicks) => {
          const { signal, abort, count, most } = countingSignal();
          const calls = plan.map(({ which, answer }) => call(createSessionReferences({ sessionQuery: host(answer) }), which, signal));
          const settled = Promise.allSettled(calls);
          if (abortAfterTicks === undefined) {
            // Without an abort, calls on a never-answering host stay pending: only the others settle.
            await Promise.allSettled(calls.filter((_, i) => plan[i]!.answer !== 'never'));
            expect(count()).toBe(plan.some((p) => p.answer === 'never') ? 1 : 0);
            abort('cleanup');
          } else {
            for (let i = 0; i < abortAfterTicks; i++) await tick();
            abort('stop');
          }
          const outcomes = await settled;
          for (const outcome of outcomes) if (outcome.status === 'rejected') expect(outcome.reason).toBeInstanceOf(SessionReferenceError);
          expect(count()).toBe(0);
          expect(most()).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a signal that is already aborted gets no listener at all', async () => {
    const { signal, abort, most } = countingSignal();
    abort('gone');
    const refs = createSessionReferences({ sessionQuery: host('never') });
    for (let which = 0; which < 3; which++) await expectAtomicFailure(() => call(refs, which, signal), 'SESSION_REFERENCE_CANCELLED', { agent: AGENT }, 'gone');
    expect(most()).toBe(0);
  });
});

describe('signals: a hostile signal object only fails its own call (SPEC §10.2)', () => {
  const thrown = new Error('signal object broke');
  const boom = () => {
    throw thrown;
  };
  /** A signal-like object over a real controller, with some members overridden. */
  function signalWith(overrides: (real: AbortSignal) => object) {
    const controller = new AbortController();
    const real = controller.signal;
    const base = {
      get aborted() {
        return real.aborted;
      },
      get reason() {
        return real.reason as unknown;
      },
      addEventListener: (type: string, listener: () => void) => real.addEventListener(type, listener),
      removeEventListener: (type: string, listener: () => void) => real.removeEventListener(type, listener),
    };
    return { signal: Object.defineProperties(base, Object.getOwnPropertyDescriptors(overrides(real))) as unknown as AbortSignal, controller };
  }
  let reads = 0;
  const cases: Array<[string, (real: AbortSignal) => object]> = [
    ['removeEventListener throws', () => ({ removeEventListener: boom })],
    ['addEventListener throws', () => ({ addEventListener: boom })],
    ['aborted throws from its second read on', (real) => ({ get aborted() { if (reads++ > 0) throw thrown; return real.aborted; } })],
    ['reason throws', () => ({ get reason() { throw thrown; } })],
    ['addEventListener calls the listener at once, without this', (real) => ({ addEventListener: (type: string, listener: () => void) => { listener.call(undefined); real.addEventListener(type, listener); } })],
    [
      'the listener is called at odd times: before the abort, twice on it, after its removal',
      (real) => ({
        addEventListener: (type: string, listener: () => void) => {
          setTimeout(listener, 0);
          real.addEventListener(type, listener);
          real.addEventListener(type, () => listener.call(undefined));
        },
      }),
    ],
  ];

  it.each(cases)('%s: each call resolves or fails with a SessionReferenceError, nothing escapes later', async (_, overrides) => {
    for (const answer of ['now', 'reject', 'never'] as const) {
      for (let which = 0; which < 3; which++) {
        reads = 0;
        const { signal, controller } = signalWith(overrides);
        const refs = createSessionReferences({ sessionQuery: host(answer) });
        const settled = Promise.allSettled([call(refs, which, signal)]);
        await tick();
        controller.abort(new Error('stop'));
        const outcome = await settled;
        if (outcome[0]!.status === 'rejected') {
          const error = outcome[0]!.reason as SessionReferenceError;
          expect(error, String(error)).toBeInstanceOf(SessionReferenceError);
          expect(['SESSION_REFERENCE_INVALID_ARGUMENT', 'SESSION_REFERENCE_CANCELLED', 'SESSION_REFERENCE_READ_FAILED']).toContain(error.code);
          // A fault of the signal object is the caller's (INVALID_ARGUMENT), with what it threw as cause.
          if (error.code === 'SESSION_REFERENCE_INVALID_ARGUMENT') expect(error.cause).toBe(thrown);
        } else {
          expect(answer, 'only an answering host lets a call resolve').toBe('now');
        }
        // Late listener calls and late host answers must not surface anywhere.
        await tick();
        await tick();
      }
    }
  });

  it('removeEventListener throwing during cleanup is the call\'s INVALID_ARGUMENT, not an unhandled rejection', async () => {
    const { signal } = signalWith(() => ({ removeEventListener: boom }));
    const refs = createSessionReferences({ sessionQuery: host('now') });
    const error = await expectAtomicFailure(() => refs.prepare(AGENT, CONTENT, [{ sessionId: 'a' }], signal), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent: AGENT, content: CONTENT }, thrown);
    expect(error.message).toContain('signal object broke');
  });
});
