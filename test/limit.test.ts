/**
 * The stores' concurrency limits (src/store/limit.ts; SPEC §10.2, §11.3, §12.1), driven step by
 * step: every task is a promise the test settles itself, and between steps the test lets every
 * pending continuation run (a macrotask: all microtasks run first). Nothing here depends on how
 * fast the machine is: the same steps give the same states in every runtime.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Limiter, mapLimited } from '../src/store/limit.js';
import { expectRejectCode } from './helpers.js';

/** Lets every continuation that is ready run: a macrotask starts only once the microtask queue is empty. */
const settle = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

interface Task {
  id: number;
  started: boolean;
  finished: boolean;
  controller: AbortController;
  finish: () => void;
  outcome?: 'done' | 'cancelled';
}

/** A step: a new task arrives, a running task finishes, or a waiting task's signal aborts. */
type Step = { kind: 'arrive' } | { kind: 'finish'; pick: number } | { kind: 'abort'; pick: number };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.constant<Step>({ kind: 'arrive' }) },
  { weight: 2, arbitrary: fc.nat(40).map((pick): Step => ({ kind: 'finish', pick })) },
  { weight: 1, arbitrary: fc.nat(40).map((pick): Step => ({ kind: 'abort', pick })) },
);

describe('Limiter: reads started by independent callers', () => {
  it('property: never more than the limit in flight; a freed slot goes to the oldest waiter at once; an aborted waiter never runs and keeps no slot', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 5 }), fc.array(stepArb, { maxLength: 40 }), async (limit, steps) => {
        const limiter = new Limiter(limit);
        const tasks: Task[] = [];
        const startOrder: number[] = [];
        let running = 0;
        let most = 0;
        const arrive = () => {
          const controller = new AbortController();
          const task: Task = { id: tasks.length, started: false, finished: false, controller, finish: () => {} };
          tasks.push(task);
          limiter
            .run(
              () =>
                new Promise<void>((resolve) => {
                  task.started = true;
                  startOrder.push(task.id);
                  most = Math.max(most, ++running);
                  task.finish = () => {
                    running--;
                    task.finished = true;
                    resolve();
                  };
                }),
              controller.signal,
            )
            .then(
              () => (task.outcome = 'done'),
              (error: { code?: string }) => {
                expect(error.code).toBe('SESSION_REFERENCE_CANCELLED');
                task.outcome = 'cancelled';
              },
            );
        };
        for (const step of [...steps, ...tasks.map(() => ({ kind: 'finish', pick: 0 }) as const)]) {
          const runningTasks = tasks.filter((t) => t.started && !t.finished);
          const waitingTasks = tasks.filter((t) => !t.started && t.outcome === undefined);
          if (step.kind === 'arrive') arrive();
          else if (step.kind === 'finish' && runningTasks.length > 0) runningTasks[step.pick % runningTasks.length]!.finish();
          else if (step.kind === 'abort' && waitingTasks.length > 0) waitingTasks[step.pick % waitingTasks.length]!.controller.abort(new Error('stop'));
          await settle();
          const waiting = tasks.filter((t) => !t.started && t.outcome === undefined).length;
          const inFlight = tasks.filter((t) => t.started && !t.finished).length;
          // Full while anyone waits; nobody waits while a slot is free.
          expect(inFlight).toBeLessThanOrEqual(limit);
          expect(waiting === 0 || inFlight === limit).toBe(true);
        }
        // Drain what the steps left running or waiting.
        while (tasks.some((t) => t.outcome === undefined)) {
          tasks.find((t) => t.started && !t.finished)!.finish();
          await settle();
        }
        expect(most).toBeLessThanOrEqual(limit);
        // Tasks start in arrival order; the cancelled ones never start.
        const cancelled = tasks.filter((t) => t.outcome === 'cancelled').map((t) => t.id);
        expect(startOrder).toEqual(tasks.map((t) => t.id).filter((id) => !cancelled.includes(id)));
        for (const id of cancelled) expect(tasks[id]!.started).toBe(false);
      }),
      { numRuns: 40, seed: 22 },
    );
  });

  it('a task that throws frees its slot for the next waiter', async () => {
    const limiter = new Limiter(1);
    const failing = limiter.run(() => Promise.reject(new Error('disk')), undefined);
    const next = limiter.run(async () => 'next', undefined);
    await expect(failing).rejects.toThrow('disk');
    expect(await next).toBe('next');
  });

  it('an aborted signal is CANCELLED before a slot is taken', async () => {
    const limiter = new Limiter(1);
    let ran = false;
    await expectRejectCode(
      limiter.run(async () => (ran = true), AbortSignal.abort(new Error('stop'))),
      'SESSION_REFERENCE_CANCELLED',
    );
    expect(await limiter.run(async () => 'free', undefined)).toBe('free');
    expect(ran).toBe(false);
  });
});

describe('mapLimited: a batch of reads', () => {
  /** `fn` whose calls the test settles: each call is recorded with its resolve and reject. */
  function heldCalls() {
    const calls: Array<{ item: number; resolve: (value: string) => void; reject: (error: Error) => void }> = [];
    const fn = (item: number) => new Promise<string>((resolve, reject) => calls.push({ item, resolve, reject }));
    return { calls, fn };
  }

  it('property: at most the limit in flight and always the limit while items remain, every item once, results in input order, whatever order the calls end in', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 0, max: 25 }), fc.array(fc.nat(), { maxLength: 30 }), async (limit, count, picks) => {
        const items = Array.from({ length: count }, (_, i) => i);
        const { calls, fn } = heldCalls();
        const result = mapLimited(items, limit, undefined, fn);
        let finished = 0;
        for (let step = 0; finished < count; step++) {
          await settle();
          const open = calls.slice(finished);
          expect(open).toHaveLength(Math.min(limit, count - finished));
          // Any open call ends next: it moves to the end of the finished ones.
          const [call] = open.splice((picks[step] ?? 0) % open.length, 1);
          calls.splice(finished, open.length + 1, call!, ...open);
          call!.resolve(`r${call!.item}`);
          finished++;
        }
        expect(await result).toEqual(items.map((i) => `r${i}`));
        expect(calls.map((call) => call.item).sort((a, b) => a - b)).toEqual(items);
      }),
      { numRuns: 40, seed: 22 },
    );
  });

  it('starts no call after one fails, and rejects with that failure (a listing of 1,000 logs whose first header is bad reads no more)', async () => {
    const items = Array.from({ length: 1000 }, (_, i) => i);
    const { calls, fn } = heldCalls();
    const result = mapLimited(items, 16, undefined, fn);
    const outcome = result.catch((error: unknown) => error);
    await settle();
    expect(calls.map((call) => call.item)).toEqual(items.slice(0, 16));
    const bad = new Error('bad header');
    calls[0]!.reject(bad);
    expect(await outcome).toBe(bad);
    // The 15 in flight end; none of them starts another.
    for (const call of calls.slice(1)) call.resolve('late');
    await settle();
    await settle();
    expect(calls).toHaveLength(16);
  });

  it('starts no call once the signal aborts (SPEC §10.2)', async () => {
    const { calls, fn } = heldCalls();
    const controller = new AbortController();
    const result = mapLimited([1, 2, 3, 4, 5], 2, controller.signal, fn);
    await settle();
    expect(calls).toHaveLength(2);
    controller.abort(new Error('stop'));
    calls[0]!.resolve('one');
    await expectRejectCode(result, 'SESSION_REFERENCE_CANCELLED');
    calls[1]!.resolve('two');
    await settle();
    expect(calls).toHaveLength(2);
  });
});
