/**
 * Surface reads at a reference budget (SPEC §11.2.2, §8.3), in every runtime: once the message
 * texts held pass their bound, only the newest within a window stay held, the ones retention may
 * keep whose texts were dropped are read again in a second pass, and the rest are left out and
 * counted in `withheld`. `prepare` over such reads equals `prepare` over whole surfaces, for any
 * log, budget, bound and window.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSessionReferences, type SessionQuery } from '../src/index.js';
import { createMemorySessionQuery, parseSessionLog } from '../src/store/index.js';
import { readSessionSurface, type OpenLog } from '../src/store/surface-read.js';
import { rawZstdFrame, zstdLog } from './fixtures/object-store.js';
import { anyCodePoint } from './hardening.js';
import { expectRejectCode } from './helpers.js';

const HEADER = { type: 'session', version: 3, id: 'cited', createdAt: 1, cwd: '/work' };
const TARGET = { id: 'target' };
const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const text = (value: string) => [{ type: 'text', text: value }];

type Kind = 'user' | 'assistant' | 'steering' | 'plugin' | 'tool' | 'checkpoint' | 'title' | 'empty';

/** One generated log event: what it is, its text, and for a checkpoint which earlier seqs it replaces. */
interface Step {
  kind: Kind;
  text: string;
  from: number;
  to: number;
}

function event(step: Step, seq: number): unknown {
  const base = { seq, time: 1000 + seq };
  switch (step.kind) {
    case 'user':
      return { ...base, type: 'user/message', surfaceOp: 'append', data: { role: 'user', content: text(step.text), source: { kind: 'user' } } };
    case 'assistant':
      return { ...base, type: 'assistant/message', data: { message: { role: 'assistant', content: [{ type: 'reasoning', text: 'hidden' }, ...text(step.text)] } } };
    case 'steering':
      return { ...base, type: 'steering/message', data: { turn: 1, message: step.text } };
    case 'plugin':
      return { ...base, type: 'user/message', surfaceOp: 'append', data: { role: 'user', content: text(step.text), source: { kind: 'plugin', plugin: 'x' } } };
    case 'tool':
      return { ...base, type: 'tool/result', data: { output: step.text } };
    case 'title':
      return { ...base, type: 'session/title', data: { title: step.text } };
    case 'empty':
      return { ...base, type: 'user/message', data: { role: 'user', content: text(''), source: { kind: 'user' } } };
    case 'checkpoint': {
      const start = Math.min(step.from, step.to) % Math.max(seq, 1);
      const end = Math.max(step.from, step.to) % Math.max(seq, 1);
      const surfaceOp = { op: 'replace', start, end };
      return { ...base, type: 'user/message', surfaceOp, data: { role: 'user', content: text(`Summary: ${step.text}`), source: { kind: 'plugin', plugin: 'compact' } } };
    }
  }
}

const stepArb: fc.Arbitrary<Step> = fc.record({
  kind: fc.constantFrom<Kind>('user', 'user', 'assistant', 'assistant', 'steering', 'plugin', 'tool', 'checkpoint', 'title', 'empty'),
  text: fc.oneof(fc.string({ minLength: 20, maxLength: 300 }), fc.string({ unit: 'grapheme', minLength: 5, maxLength: 60 }), fc.constantFrom('</referenced-sessions>', 'a"b\\c\n<x>', 'ğüş 漢字 🎉'.repeat(20))),
  from: fc.nat(200),
  to: fc.nat(200),
});

/** One event of hostile shape, without seq and time (SPEC §4.5, §8.2): every steering shape, envelopes of any value, checkpoints of both sources, images, non-text and empty messages, a non-message event, any surfaceOp. */
const hostileEventArb: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    fc.nat(20),
    fc.oneof(fc.string({ maxLength: 200 }), fc.constant(''), fc.string({ unit: anyCodePoint, maxLength: 40 }), fc.constantFrom('\ud800x', '</referenced-sessions>')),
    fc.oneof(
      fc.constant(undefined),
      fc.constantFrom('append', { op: 'other' }, { op: 'replace', start: -0, end: 0 }),
      fc.record({ op: fc.constant('replace'), start: fc.integer({ min: -1, max: 12 }), end: fc.integer({ min: -1, max: 12 }) }),
    ),
  )
  .map(([kind, value, surfaceOp]) => {
    const user = (data: object) => ({ type: 'user/message', data: { role: 'user', content: text(value), source: { kind: 'user' }, ...data } });
    const steering = (data: object) => ({ type: 'steering/message', data: { turn: 1, ...data } });
    const assistant = (content: unknown[]) => ({ type: 'assistant/message', data: { message: { role: 'assistant', content } } });
    const shapes = [
      user({}),
      user({ content: text('hidden'), envelope: { display: text(value) } }),
      user({ content: text(`Summary: ${value}`), source: { kind: 'compact-checkpoint' } }),
      user({ content: text(`Summary: ${value}`), source: { kind: 'plugin', plugin: 'compact' } }),
      user({ source: { kind: 'plugin', plugin: 'x' } }),
      steering({ message: value }),
      steering({ message: { role: 'user', content: text(value) } }),
      steering({ content: text(value), source: { kind: 'user' } }),
      steering({ role: 'user', content: text(value), source: { kind: 'plugin' } }),
      assistant([{ type: 'reasoning', text: 'r' }, ...text(value), { type: 'toolCall', id: 'c' }]),
      assistant([{ type: 'toolCall', id: value }]),
      { type: 'tool/result', data: { output: value } },
      { type: 'session/title', data: { title: value } },
      { type: 'user/message', data: null },
      user({ content: [{ type: 'image', data: value }, ...text(value), { type: 'text', text: 'b' }] }),
      user({ content: text('hidden'), envelope: { version: 1, display: [{ type: 'image', data: 'i' }, ...text(value)], contexts: [] } }),
      user({ content: text('hidden'), envelope: value }),
      user({ content: text('hidden'), envelope: null }),
      steering({ message: { role: 'user', content: text('hidden'), envelope: { display: text(value) } } }),
      steering({ content: [{ type: 'image' }, ...text(value)], envelope: { display: text(`${value}!`) }, source: { kind: 'user' } }),
      { type: 'turn/start', data: { turn: 1, text: value } },
    ];
    const event: Record<string, unknown> = shapes[kind]!;
    return surfaceOp === undefined ? event : { ...event, surfaceOp };
  });

/** The log of `steps`; `seqOf` gives each step's seq (increasing by default). */
function logOf(steps: readonly Step[], seqOf: (i: number) => number = (i) => i): string {
  return line(HEADER) + steps.map((step, i) => line(event(step, seqOf(i)))).join('');
}

/** A query over one log's bytes: `readSurface` reads it whole, `readRetainedSurface` (when `held` is given) at the budget with that bound and `window` (default: `held`). */
function queryOver(bytes: Uint8Array, held?: number, window = held): { query: SessionQuery; opens: () => number } {
  let opens = 0;
  const open: OpenLog = () => {
    opens++;
    return bytes;
  };
  const query: SessionQuery = {
    listSessions: async () => [{ header: HEADER }],
    readSurface: async () => surfaceOf(await readSessionSurface(open, {})),
  };
  if (held !== undefined) query.readRetainedSurface = async (_id, budget) => surfaceOf(await readSessionSurface(open, {}, budget, held, window));
  return { query, opens: () => opens };
}

function surfaceOf(read: Awaited<ReturnType<typeof readSessionSurface>>) {
  return { session: read.header, capturedThroughSeq: read.capturedThroughSeq, events: read.events, ...(read.withheld && { withheld: read.withheld }) };
}

/** `prepare` citing the log, or the code it rejects with. */
async function prepared(query: SessionQuery, budget: number): Promise<unknown> {
  const refs = createSessionReferences({ sessionQuery: query, config: { maxReferenceBytes: budget } });
  try {
    return await refs.prepare(TARGET, [{ type: 'text', text: 'see @cited' }], [{ sessionId: 'cited', label: 'Cited' }]);
  } catch (error) {
    return (error as { code?: unknown }).code;
  }
}

/** `prepare` citing the log as the memory store holds it (every event whole, SPEC §11.3): the oracle of what a store's reads project to. */
async function preparedWhole(bytes: Uint8Array, budget: number): Promise<unknown> {
  return prepared(createMemorySessionQuery([parseSessionLog(bytes)]), budget);
}

const encoder = new TextEncoder();

describe('readRetainedSurface: surface reads at a budget (SPEC §11.2.2)', () => {
  it('property: prepare over reads at a budget equals prepare over whole surfaces, for any log, budget, bound and window', async () => {
    let leftOut = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(stepArb, { minLength: 20, maxLength: 80 }), fc.integer({ min: 150, max: 2500 }), fc.nat(800), fc.nat(12_000), async (steps, budget, held, window) => {
        const bytes = encoder.encode(logOf(steps));
        const whole = queryOver(bytes);
        const retained = queryOver(bytes, held, window);
        const result = await prepared(retained.query, budget);
        expect(result).toEqual(await prepared(whole.query, budget));
        expect(retained.opens()).toBeLessThanOrEqual(2);
        if (typeof result === 'object' && (await retained.query.readRetainedSurface!('cited', budget)).withheld) leftOut++;
      }),
      { numRuns: 300 },
    );
    // Coverage: many runs prepare a reference with messages left out (about 70 of 300 in each of five runs).
    expect(leftOut).toBeGreaterThan(30);
  });

  it('property: the same with repeated and decreasing seqs', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(stepArb, fc.nat(8)), { minLength: 10, maxLength: 40 }), fc.integer({ min: 150, max: 3000 }), fc.nat(500), async (steps, budget, held) => {
        const bytes = encoder.encode(logOf(steps.map(([step]) => step), (i) => steps[i]![1]));
        expect(await prepared(queryOver(bytes, held).query, budget)).toEqual(await prepared(queryOver(bytes).query, budget));
      }),
      { numRuns: 150 },
    );
  });

  it('property: the same, and the same as over the memory store, for hostile shapes (legacy steering, envelopes, images, empty and non-text messages, any replace range, any seqs, BOM, torn line, zstd)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(hostileEventArb, fc.integer({ min: -1, max: 12 })), { minLength: 1, maxLength: 24 }),
        fc.constantFrom('increasing', 'gaps', 'any'),
        fc.integer({ min: 60, max: 3000 }),
        fc.oneof(fc.constant(0), fc.nat(600)),
        fc.oneof(fc.constant(0), fc.nat(6000)),
        fc.constantFrom('jsonl', 'bom', 'torn', 'zstd', 'zstd-one-frame'),
        async (events, seqs, budget, held, window, encoding) => {
          const seqOf = (i: number) => (seqs === 'increasing' ? i : seqs === 'gaps' ? 3 * i + 1 : events[i]![1]);
          let log = line(HEADER) + events.map(([value], i) => line({ ...value, seq: seqOf(i), time: i })).join('');
          if (encoding === 'bom') log = `\ufeff${log}`;
          if (encoding === 'torn') log = log.slice(0, -5);
          const bytes = encoding === 'zstd' ? zstdLog(log, 2) : encoding === 'zstd-one-frame' ? rawZstdFrame(log) : encoder.encode(log);
          const whole = await preparedWhole(bytes, budget);
          expect(await prepared(queryOver(bytes).query, budget)).toEqual(whole);
          expect(await prepared(queryOver(bytes, held, window).query, budget)).toEqual(whole);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('answers as prepare folds a surface that does not fold to itself (a replace naming a later seq, SPEC §8.2)', async () => {
    const user = (seq: number, value: string, surfaceOp?: unknown) => ({ type: 'user/message', seq, time: seq, ...(surfaceOp !== undefined && { surfaceOp }), data: { role: 'user', content: text(value), source: { kind: 'user' } } });
    const logs = [
      // The tool result (never projected, so left out) replaces the checkpoint when the service folds the surface again.
      [
        user(1, 'first'),
        { type: 'tool/result', seq: 2, time: 2, surfaceOp: { op: 'replace', start: 5, end: 5 }, data: { output: 'x' } },
        user(3, 'third'),
        user(4, 'fourth'),
        { type: 'user/message', seq: 5, time: 5, surfaceOp: { op: 'replace', start: 1, end: 1 }, data: { role: 'user', content: text('Summary'), source: { kind: 'plugin', plugin: 'compact' } } },
      ],
      // Fast-check's: empty texts and reversed ranges, one folding away the message a later one replaced.
      [user(0, ''), user(1, '\ud800x', { op: 'replace', start: 0, end: 1 }), user(2, '', { op: 'replace', start: 1, end: 0 }), user(3, '', { op: 'replace', start: 4, end: 1 }), user(4, '\ud800x', { op: 'replace', start: -0, end: 0 })],
    ];
    // The same followed by a long conversation: what retention drops is still left out.
    logs.push([...logs[0]!, ...Array.from({ length: 40 }, (_, i) => user(6 + i, `later ${i}`.padEnd(100, '.')))]);
    for (const events of logs) {
      const bytes = encoder.encode(line(HEADER) + events.map(line).join(''));
      for (const budget of [69, 1000, 5000]) expect(await prepared(queryOver(bytes, 0).query, budget)).toEqual(await prepared(queryOver(bytes).query, budget));
    }
    expect((await queryOver(encoder.encode(line(HEADER) + logs[2]!.map(line).join('')), 0).query.readRetainedSurface!('cited', 1000)).withheld?.messages).toBeGreaterThan(30);
  });

  it('leaves out what retention drops, counts it, and reads the log twice only once the texts held pass the bound', async () => {
    const steps: Step[] = Array.from({ length: 200 }, (_, i) => ({ kind: i % 2 ? 'assistant' : 'user', text: `message ${i} `.padEnd(100, 'x'), from: 0, to: 0 }));
    const bytes = encoder.encode(logOf(steps));
    const budget = 2000;
    const whole = queryOver(bytes);
    const retained = queryOver(bytes, 1000);
    const answer = await retained.query.readRetainedSurface!('cited', budget);
    // 200 messages of 100 bytes; at most budget / 100 can be kept: the rest is left out.
    expect(answer.events.length).toBeLessThanOrEqual(21);
    expect(answer.withheld).toEqual({ messages: 200 - answer.events.length, bytes: 100 * (200 - answer.events.length) });
    expect(answer.events.every((e) => e.data !== undefined)).toBe(true);
    expect(retained.opens()).toBe(2);
    const result = (await prepared(retained.query, budget)) as { context: { metadata: { references: Array<Record<string, unknown>> } } };
    expect(result).toEqual(await prepared(whole.query, budget));
    expect(result.context.metadata.references[0]).toMatchObject({ originalMessages: 200, truncated: true });
    // Under the bound, one pass and nothing left out.
    const roomy = queryOver(bytes, 1024 * 1024);
    expect((await roomy.query.readRetainedSurface!('cited', budget)).withheld).toBeUndefined();
    expect(roomy.opens()).toBe(1);
  });

  it('past the bound, holds the newest texts within the window: one pass when the answer is among them, two when the newest messages were replaced', async () => {
    const steps: Step[] = Array.from({ length: 200 }, (_, i) => ({ kind: i % 2 ? 'assistant' : 'user', text: `message ${i} `.padEnd(100, 'x'), from: 0, to: 0 }));
    const budget = 2000;
    // Held bound 1,000 (past it after two messages), window 20,000: the newest ~32 messages (612 each) stay held.
    const bytes = encoder.encode(logOf(steps));
    const windowed = queryOver(bytes, 1000, 20_000);
    const answer = await windowed.query.readRetainedSurface!('cited', budget);
    expect(answer.withheld?.messages).toBeGreaterThan(170);
    expect(windowed.opens()).toBe(1);
    expect(await prepared(windowed.query, budget)).toEqual(await prepared(queryOver(bytes).query, budget));
    // A last message replacing the newest 100: the answer is older than the window, and is read again.
    const replaced = encoder.encode(logOf([...steps, { kind: 'checkpoint', text: 'the last hundred', from: 100, to: 199 }]));
    const second = queryOver(replaced, 1000, 20_000);
    const reread = await second.query.readRetainedSurface!('cited', budget);
    expect(second.opens()).toBe(2);
    expect(reread.events.every((e) => e.data !== undefined)).toBe(true);
    expect(JSON.stringify(reread.events.at(-2)!.data)).toContain('message 99 ');
    expect(await prepared(queryOver(replaced, 1000, 20_000).query, budget)).toEqual(await prepared(queryOver(replaced).query, budget));
  });

  it('holds of a message only what projection reads: no images, reasoning or tool calls, nor the model-visible content of an enveloped one (SPEC §8.2, §11.2.2)', async () => {
    const image = { type: 'image', data: 'I'.repeat(20_000), mimeType: 'image/png' };
    const snapshot = text('S'.repeat(20_000));
    const events = Array.from({ length: 60 }, (_, seq) => {
      const base = { seq, time: seq };
      switch (seq % 4) {
        case 0:
          return { ...base, type: 'user/message', data: { role: 'user', content: [...text(`look ${seq}`), image], source: { kind: 'user' } } };
        case 1:
          return { ...base, type: 'user/message', data: { role: 'user', content: snapshot, source: { kind: 'user' }, envelope: { version: 1, display: text(`see @A ${seq}`), contexts: [] } } };
        case 2:
          return { ...base, type: 'assistant/message', data: { message: { role: 'assistant', content: [{ type: 'reasoning', text: 'R'.repeat(20_000) }, ...text(`reply ${seq}`), { type: 'toolCall', id: 'c', arguments: { x: 'R'.repeat(1000) } }] } } };
        default:
          return { ...base, type: 'steering/message', data: { turn: 1, message: { role: 'user', content: [image, ...snapshot], source: { kind: 'user' }, envelope: { display: [...text(`steer ${seq}`), image] } } } };
      }
    });
    const bytes = encoder.encode(line(HEADER) + events.map(line).join(''));
    expect(bytes.length).toBeGreaterThan(1_000_000);
    const reads = [readSessionSurface(() => bytes, {}), readSessionSurface(() => bytes, {}, 4000), readSessionSurface(() => bytes, {}, 4000, 0, 0)];
    for (const read of await Promise.all(reads)) {
      const held = JSON.stringify(read.events);
      expect(held).not.toMatch(/III|SSS|RRR/);
      expect(held.length).toBeLessThan(20_000);
    }
    for (const budget of [300, 4000, 100_000]) {
      const whole = await preparedWhole(bytes, budget);
      expect(await prepared(queryOver(bytes).query, budget)).toEqual(whole);
      expect(await prepared(queryOver(bytes, 0, 0).query, budget)).toEqual(whole);
    }
  });

  it('property: the same over logs long enough that the read folds as the lines go by (over 4,096 kept events)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb.filter((step) => step.kind !== 'checkpoint' && step.kind !== 'title'), { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 4200, max: 6000 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(60), fc.boolean()), { maxLength: 6 }),
        fc.integer({ min: 150, max: 20_000 }),
        fc.oneof(fc.constant(0), fc.nat(50_000)),
        fc.oneof(fc.constant(0), fc.nat(50_000)),
        async (pattern, length, replaces, budget, held, window) => {
          // Increasing seqs, and replaces naming earlier ones only: the collector folds as it goes.
          const steps = Array.from({ length }, (_, i): Step => pattern[i % pattern.length]!);
          for (const [at, span, user] of replaces) {
            const i = at % length;
            steps[i] = user ? { kind: 'user', text: `a user message at ${i}`, from: 0, to: 0 } : { kind: 'checkpoint', text: `up to ${i}`, from: Math.max(0, i - span - 1), to: Math.max(0, i - 1) };
          }
          const bytes = encoder.encode(logOf(steps));
          const whole = await preparedWhole(bytes, budget);
          expect(await prepared(queryOver(bytes).query, budget)).toEqual(whole);
          const retained = queryOver(bytes, held, window);
          expect(await prepared(retained.query, budget)).toEqual(whole);
          expect(retained.opens()).toBeLessThanOrEqual(2);
        },
      ),
      { numRuns: 8 },
    );
  });

  it('keeps every checkpoint and the newest message, whatever the budget', async () => {
    const steps: Step[] = [
      ...Array.from({ length: 50 }, (_, i): Step => ({ kind: 'user', text: `old ${i}`.padEnd(200, '.'), from: 0, to: 0 })),
      { kind: 'checkpoint', text: 'all of it', from: 0, to: 49 },
      ...Array.from({ length: 50 }, (_, i): Step => ({ kind: 'assistant', text: `new ${i}`.padEnd(200, '.'), from: 0, to: 0 })),
    ];
    const bytes = encoder.encode(logOf(steps));
    for (const budget of [300, 700, 5000]) {
      const answer = await queryOver(bytes, 0).query.readRetainedSurface!('cited', budget);
      const texts = answer.events.map((e) => JSON.stringify(e.data));
      expect(texts.some((t) => t.includes('Summary: all of it'))).toBe(true);
      expect(texts.at(-1)).toContain('new 49');
      expect(await prepared(queryOver(bytes, 0).query, budget)).toEqual(await prepared(queryOver(bytes).query, budget));
    }
  });

  it('fails with READ_FAILED when the log changed between the two passes, and with the same errors as a whole read', async () => {
    const steps: Step[] = Array.from({ length: 40 }, (_, i) => ({ kind: 'user', text: `message ${i}`.padEnd(100, '-'), from: 0, to: 0 }));
    const first = encoder.encode(logOf(steps));
    const rewritten = encoder.encode(logOf(steps, (i) => i + 1000));
    let opens = 0;
    const open: OpenLog = () => (opens++ === 0 ? first : rewritten);
    const error = await expectRejectCode(readSessionSurface(open, {}, 1000, 0), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.message).toMatch(/changed while it was being read: line \d+/);
    const otherHeader = encoder.encode(logOf(steps).replace('"id":"cited"', '"id":"other"'));
    opens = 0;
    const moved: OpenLog = () => (opens++ === 0 ? first : otherHeader);
    await expectRejectCode(readSessionSurface(moved, {}, 1000, 0), 'SESSION_REFERENCE_READ_FAILED');
    // A kept message's line with a text of another size, another surfaceOp, or now a checkpoint.
    const lastEdited = (from: string, to: string) => {
      const lines = logOf(steps).split('\n');
      lines[40] = lines[40]!.replace(from, to);
      return encoder.encode(lines.join('\n'));
    };
    const edits = [
      lastEdited('message 39', 'the 39th'),
      lastEdited('"surfaceOp":"append"', '"surfaceOp":{"op":"replace","start":0,"end":38}'),
      lastEdited('"source":{"kind":"user"}', '"source":{"kind":"compact-checkpoint"}'),
    ];
    for (const second of edits) {
      opens = 0;
      const open: OpenLog = () => (opens++ === 0 ? first : second);
      await expectRejectCode(readSessionSurface(open, {}, 1000, 0), 'SESSION_REFERENCE_READ_FAILED');
    }
    // Lines appended between the two passes are not read: the answer is the log's as first read.
    const appended = encoder.encode(logOf([...steps, { kind: 'user', text: 'appended', from: 0, to: 0 }]));
    opens = 0;
    const growing: OpenLog = () => (opens++ === 0 ? first : appended);
    expect(await readSessionSurface(growing, {}, 1000, 0)).toEqual(await readSessionSurface(() => first, {}, 1000, 0));
    const invalid = encoder.encode(`${logOf(steps)}not json\n`);
    await expectRejectCode(readSessionSurface(() => invalid, {}, 1000, 0), 'SESSION_REFERENCE_INVALID_LOG');
  });
});

describe('prepare over a host with readRetainedSurface (SPEC §10.1, §11.2.2)', () => {
  const events = [{ type: 'user/message', seq: 0, time: 0, data: { role: 'user', content: text('hello'), source: { kind: 'user' } } }];
  const hostWith = (answer: unknown): SessionQuery => ({
    listSessions: async () => [{ header: HEADER }],
    readSurface: async () => {
      throw new Error('readSurface must not be called when readRetainedSurface exists');
    },
    readRetainedSurface: async () => answer as never,
  });
  const prepareOver = (sessionQuery: SessionQuery) =>
    createSessionReferences({ sessionQuery }).prepare(TARGET, [], [{ sessionId: 'cited' }]);

  it('is called once per source with the configured budget and the signal, and its withheld counts are dropped messages', async () => {
    const calls: unknown[][] = [];
    const sessionQuery: SessionQuery = {
      ...hostWith(undefined),
      readRetainedSurface: async (...args) => {
        calls.push(args);
        return { session: HEADER, capturedThroughSeq: 9, events, withheld: { messages: 4, bytes: 1000 } };
      },
    };
    const signal = new AbortController().signal;
    const { context } = await createSessionReferences({ sessionQuery, config: { maxReferenceBytes: 5000 } }).prepare(TARGET, [], [{ sessionId: 'cited' }], signal);
    expect(calls).toEqual([['cited', 5000, signal]]);
    expect(context!.metadata.references[0]).toMatchObject({ originalMessages: 5, retainedMessages: 1, omittedMessages: 4, omittedBytes: 1000, truncated: true });
  });

  it.each([
    ['negative counts', { messages: -1, bytes: 10 }],
    ['fractional bytes', { messages: 1, bytes: 0.5 }],
    ['strings', { messages: '1', bytes: '10' }],
    ['null', null],
    ['a number', 3],
    ['a throwing getter', Object.defineProperty({ bytes: 1 }, 'messages', { get: () => { throw new Error('boom'); }, enumerable: true })],
  ])('a withheld of %s is READ_FAILED naming the host call', async (_name, withheld) => {
    const error = await expectRejectCode(prepareOver(hostWith({ session: HEADER, capturedThroughSeq: 0, events, withheld })), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.message).toContain('sessionQuery.readSurface("cited")');
  });

  it('a query whose `has` trap throws is READ_FAILED, not the caller\'s fault', async () => {
    const hostile = new Proxy(hostWith(undefined), {
      has: () => {
        throw new Error('no has');
      },
    });
    await expectRejectCode(prepareOver(hostile), 'SESSION_REFERENCE_READ_FAILED');
  });
});
