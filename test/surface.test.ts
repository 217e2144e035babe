import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { foldSurface } from '../src/surface.js';
import type { SessionEvent } from '../src/index.js';
import { assistantMessage, checkpoint, toolResult, userMessage } from './sessions.js';

const seqs = (events: SessionEvent[]) => events.map((e) => e.seq);

describe('foldSurface (SPEC §8.2)', () => {
  it('appends message-bearing events and events with surfaceOp append, in order', () => {
    const events = [
      { type: 'turn/start', seq: 0, time: 0, data: {} },
      userMessage(1, 'hi'),
      { ...assistantMessage(2, 'hello'), surfaceOp: undefined },
      toolResult(3, 'out'),
      { type: 'tool/call', seq: 4, time: 0, data: {} },
      { type: 'custom/thing', seq: 5, time: 0, data: {}, surfaceOp: 'append' as const },
    ];
    expect(seqs(foldSurface(events))).toEqual([1, 2, 3, 5]);
  });

  it('replaces the contiguous run start..end with the replacing event in its place', () => {
    const events = [userMessage(1, 'a'), assistantMessage(2, 'b'), userMessage(3, 'c'), assistantMessage(4, 'd'), checkpoint(5, 'summary', 1, 3)];
    expect(seqs(foldSurface(events))).toEqual([5, 4]);
  });

  it('uses surface positions, not seq ranges, after an earlier replace', () => {
    const events = [
      userMessage(1, 'a'),
      userMessage(2, 'b'),
      userMessage(3, 'c'),
      checkpoint(10, 'first summary', 1, 2), // surface: 10, 3
      userMessage(4, 'd'), // surface: 10, 3, 4
      checkpoint(11, 'second summary', 10, 3), // removes 10 and 3 (positions), keeps 4
    ];
    expect(seqs(foldSurface(events))).toEqual([11, 4]);
  });

  it('appends a replace whose endpoint is not on the surface (already folded input)', () => {
    const events = [userMessage(1, 'a'), checkpoint(5, 'summary', 99, 1)];
    expect(seqs(foldSurface(events))).toEqual([1, 5]);
  });

  it('appends a replace whose end stands before its start on the surface', () => {
    const events = [userMessage(1, 'a'), userMessage(2, 'b'), checkpoint(5, 'summary', 2, 1)];
    expect(seqs(foldSurface(events))).toEqual([1, 2, 5]);
  });

  it('replaces a single node (start === end) and a run reaching the tail', () => {
    expect(seqs(foldSurface([userMessage(1, 'a'), userMessage(2, 'b'), checkpoint(3, 's', 2, 2)]))).toEqual([1, 3]);
    expect(seqs(foldSurface([userMessage(1, 'a'), userMessage(2, 'b'), checkpoint(3, 's', 1, 2), userMessage(4, 'x')]))).toEqual([3, 4]);
  });

  it('is idempotent: folding a folded surface changes nothing', () => {
    const events = [userMessage(1, 'a'), assistantMessage(2, 'b'), checkpoint(3, 's', 1, 2), userMessage(4, 'c'), checkpoint(5, 's2', 3, 4)];
    const once = foldSurface(events);
    expect(foldSurface(once)).toEqual(once);
    expect(seqs(once)).toEqual([5]);
  });

  it('skips entries that are not events and treats unknown surface ops as append', () => {
    const events = [null, 42, 'x', { seq: 1 }, userMessage(2, 'a', { surfaceOp: { op: 'weird' } as never })] as unknown[];
    expect(seqs(foldSurface(events))).toEqual([2]);
  });

  it('does not modify its input', () => {
    const events = [userMessage(1, 'a'), checkpoint(2, 's', 1, 1)];
    const before = structuredClone(events);
    foldSurface(events);
    expect(events).toEqual(before);
  });
});

/** A literal, quadratic reading of SPEC §8.2's fold over an array, sharing no code with src/surface.ts. */
function naiveFold(events: SessionEvent[]): SessionEvent[] {
  const surface: SessionEvent[] = [];
  const messageTypes = ['user/message', 'steering/message', 'assistant/message', 'tool/result'];
  for (const event of events) {
    const op = event.surfaceOp;
    if (op === undefined) {
      if (messageTypes.includes(event.type)) surface.push(event);
      continue;
    }
    if (typeof op === 'object' && op.op === 'replace') {
      const first = surface.findIndex((node) => node.seq === op.start);
      const last = surface.findIndex((node) => node.seq === op.end);
      if (first >= 0 && last >= first) {
        surface.splice(first, last - first + 1, event);
        continue;
      }
    }
    surface.push(event);
  }
  return surface;
}

describe('foldSurface agrees with a literal reading of SPEC §8.2', () => {
  it('on generated logs with appends, replaces (some stale or reversed) and off-surface events', () => {
    const step = fc.record({
      kind: fc.constantFrom('append', 'implicit', 'replace', 'other'),
      a: fc.nat(60),
      b: fc.nat(60),
    });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const events: SessionEvent[] = steps.map(({ kind, a, b }, seq) => {
          const base = { type: kind === 'other' ? 'tool/call' : 'user/message', seq, time: seq, data: {} };
          if (kind === 'append') return { ...base, surfaceOp: 'append' as const };
          if (kind === 'replace') return { ...base, surfaceOp: { op: 'replace' as const, start: a % (seq + 1), end: b % (seq + 1) } };
          return base;
        });
        expect(seqs(foldSurface(events))).toEqual(seqs(naiveFold(events)));
      }),
      { numRuns: 2000 },
    );
  });

  it('with seqs of any numeric value: large, negative, fractional, -0, past the dense range', () => {
    const seqValue = fc.oneof(fc.nat(300), fc.integer({ min: -1e6, max: 1e12 }), fc.double({ noNaN: true }), fc.constantFrom(-0, 2 ** 31, 1e21, Infinity));
    const step = fc.record({ kind: fc.constantFrom('append', 'implicit', 'replace', 'other'), a: fc.nat(80), b: fc.nat(80) });
    fc.assert(
      fc.property(fc.uniqueArray(seqValue, { maxLength: 80, comparator: 'SameValueZero' }), fc.array(step, { maxLength: 80 }), (values, steps) => {
        const count = Math.min(values.length, steps.length);
        const events: SessionEvent[] = steps.slice(0, count).map(({ kind, a, b }, i) => {
          const base = { type: kind === 'other' ? 'tool/call' : 'user/message', seq: values[i]!, time: i, data: {} };
          if (kind === 'append') return { ...base, surfaceOp: 'append' as const };
          if (kind === 'replace') return { ...base, surfaceOp: { op: 'replace' as const, start: values[a % (i + 1)]!, end: values[b % (i + 1)]! } };
          return base;
        });
        expect(seqs(foldSurface(events))).toEqual(seqs(naiveFold(events)));
      }),
      { seed: 2026, numRuns: 2000 },
    );
  });
});
