/**
 * The Node entry's turn (src/pace.ts `useTurn`, handed `setImmediate` by src/node/store.ts): a loop
 * that yields through it still lets a due timer run (SPEC §10.3), and opening a Node store installs it.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createDshStoreSessionQuery } from '../src/node/index.js';
import { pace, PACE_WORK, useTurn } from '../src/pace.js';

afterEach(() => {
  useTurn((callback) => setTimeout(callback, 0));
  vi.restoreAllMocks();
});

describe('turns of the event loop in Node', () => {
  it('a loop yielding through setImmediate lets a timer run', async () => {
    useTurn(setImmediate);
    let fired = false;
    setTimeout(() => (fired = true), 5);
    const started = Date.now();
    while (!fired && Date.now() - started < 5_000) await pace(PACE_WORK);
    expect(fired).toBe(true);
  });

  it('opening a Node store makes the core yield through setImmediate', async () => {
    const spy = vi.spyOn(globalThis, 'setImmediate');
    createDshStoreSessionQuery({ root: '/nonexistent-dsh-store' });
    await pace(PACE_WORK);
    expect(spy).toHaveBeenCalled();
  });
});
