/**
 * Concurrency limits of the stores (SPEC §10.2, §11.3, §12.1): {@link mapLimited} for a batch of
 * reads, {@link Limiter} for reads started by independent callers.
 * @module
 */
import { raceAbort, throwIfAborted } from '../abort.js';

/**
 * Runs `fn` over `items` with at most `limit` calls in flight; results in input order. No call is
 * started once `signal` has aborted or once any call has failed: the returned promise rejects with
 * that first failure, and the calls already in flight finish on their own (their results unused).
 */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  signal: AbortSignal | undefined,
  fn: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      throwIfAborted(signal);
      const i = next++;
      try {
        results[i] = await fn(items[i]!);
      } catch (error) {
        next = items.length; // the others start nothing more
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * At most `limit` tasks in flight; the others wait in order. A finishing task hands its slot to
 * the next waiter, so the limit holds at every moment. A wait ends with
 * `SESSION_REFERENCE_CANCELLED` as soon as its signal aborts, and its place is given up (SPEC §10.2).
 */
export class Limiter {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly limit: number) {}

  async run<T>(task: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    await this.acquire(signal);
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  /** Takes a slot, waiting for one while all are taken. */
  private async acquire(signal: AbortSignal | undefined): Promise<void> {
    throwIfAborted(signal);
    if (this.active < this.limit) {
      this.active++;
      return;
    }
    let granted = false;
    let grant!: () => void;
    const turn = new Promise<void>((resolve) => {
      grant = () => {
        granted = true;
        resolve();
      };
    });
    this.waiting.push(grant);
    try {
      await raceAbort(turn, signal);
    } catch (error) {
      // Cancelled: a slot handed over meanwhile goes on to the next waiter; else the place goes.
      if (granted) this.release();
      else this.waiting.splice(this.waiting.indexOf(grant), 1);
      throw error;
    }
  }

  /** Hands the slot to the next waiter, or frees it. */
  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }
}
