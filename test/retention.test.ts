import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ConversationItem } from '../src/index.js';
import { serializeReference } from '../src/render.js';
import { omissionNotice, retainConversation } from '../src/retention.js';
import { countingExactSizes } from '../bench/generators.js';
import { anyCodePoint } from './hardening.js';
import { expectCode } from './helpers.js';
import { oracleRetain, oracleSerialize, type OracleHead, type OracleResult } from './oracle.js';

const head: OracleHead = { sessionId: 'session-1', label: 'Label', cwd: '/repo' };
const bytes = (s: string) => new TextEncoder().encode(s).length;
const user = (text: string): ConversationItem => ({ role: 'user', text });
const assistant = (text: string): ConversationItem => ({ role: 'assistant', text });
const cp = (text: string): ConversationItem => ({ role: 'user', text, checkpoint: true });
const sizeOf = (conversation: ConversationItem[]) => bytes(oracleSerialize(head, conversation));

function retainAndCheck(items: ConversationItem[], budget: number) {
  const result = retainConversation(head, items, budget);
  const serialized = serializeReference(head, result.conversation);
  expect(result.serializedBytes).toBe(bytes(serialized));
  expect(result.serializedBytes).toBeLessThanOrEqual(budget);
  const expected = oracleRetain(head, items, budget) as OracleResult;
  expect(result).toMatchObject(expected);
  // toMatchObject lets items carry extra keys; the conversation must be exactly the oracle's.
  expect(result.conversation).toStrictEqual(expected.conversation);
  return result;
}

describe('retainConversation (SPEC §8.3)', () => {
  it('keeps a projection that fits whole', () => {
    const items = [user('hello'), assistant('hi <there>'), user('bye')];
    const result = retainAndCheck(items, sizeOf(items));
    expect(result).toMatchObject({ conversation: items, originalMessages: 3, retainedMessages: 3, omittedMessages: 0, omittedBytes: 0 });
  });

  it('drops the oldest non-checkpoint items one by one until it fits', () => {
    const items = [user('a'.repeat(100)), assistant('b'.repeat(100)), cp('summary'), user('c'.repeat(100)), assistant('newest')];
    const budget = sizeOf([items[2]!, items[3]!, items[4]!]);
    const result = retainAndCheck(items, budget);
    expect(result.conversation).toEqual([items[2], items[3], items[4]]);
    expect(result).toMatchObject({ omittedMessages: 2, omittedBytes: 200, retainedMessages: 3 });
  });

  it('never drops checkpoints or the newest item, and truncates them instead (longest first)', () => {
    const items = [cp('C'.repeat(600)), user('old'), assistant('N'.repeat(200))];
    const budget = sizeOf([cp('x'), assistant('y')]) + 300;
    const result = retainAndCheck(items, budget);
    expect(result.conversation).toHaveLength(2);
    const [checkpointItem, newest] = result.conversation;
    expect(checkpointItem!.checkpoint).toBe(true);
    expect(checkpointItem!.text).toMatch(/^C+\n\[… \d+ UTF-8 bytes omitted …\]\nC+$/);
    expect(newest!.text).toBe('N'.repeat(200));
    expect(result.omittedMessages).toBe(1);
  });

  it('moves to the next text only when the current one is down to the notice alone', () => {
    const items = [cp('C'.repeat(500)), assistant('N'.repeat(400))];
    const budget = sizeOf([cp(omissionNotice(500)), assistant('x')]) + 200;
    const result = retainAndCheck(items, budget);
    expect(result.conversation[0]!.text).toBe(omissionNotice(500));
    expect(result.conversation[1]!.text).toMatch(/^N+\n\[… \d+ UTF-8 bytes omitted …\]\nN+$/);
  });

  it('keeps a head of ⌈k/2⌉ and a tail of ⌊k/2⌋ bytes with the exact count in the notice', () => {
    const text = 'abcdefghijklmnopqrstuvwxyz'.repeat(10);
    const budget = sizeOf([user(`${'x'.repeat(50)}${omissionNotice(210)}`)]);
    const result = retainAndCheck([user(text)], budget);
    expect(result.conversation[0]!.text).toBe(`${text.slice(0, 25)}${omissionNotice(210)}${text.slice(-25)}`);
    expect(result.omittedBytes).toBe(210);
  });

  it('cuts at whole code points and counts a lone surrogate as 3 bytes', () => {
    const text = '🎉'.repeat(50) + '\ud800' + 'é'.repeat(50);
    const result = retainAndCheck([user(text)], sizeOf([user('x'.repeat(60) + omissionNotice(200))]));
    const out = result.conversation[0]!.text;
    const [headPart, tailPart] = out.split(/\n\[… \d+ UTF-8 bytes omitted …\]\n/);
    expect(text.startsWith(headPart!)).toBe(true);
    expect(text.endsWith(tailPart!)).toBe(true);
    expect(bytes(headPart!) + bytes(tailPart!) + result.omittedBytes).toBe(bytes(text));
  });

  it('leaves a text alone when the notice would not be smaller', () => {
    const items = [cp('tiny'), assistant('N'.repeat(300))];
    const result = retainAndCheck(items, sizeOf([cp('tiny'), assistant('x'.repeat(100))]));
    expect(result.conversation[0]!.text).toBe('tiny');
  });

  it('counts "<" as the 6 bytes of \\u003c', () => {
    const items = [user('<'.repeat(100))];
    const result = retainAndCheck(items, sizeOf([user('<'.repeat(40) + omissionNotice(60))]));
    expect(result.conversation[0]!.text.startsWith('<')).toBe(true);
  });

  it('fails with BUDGET_EXCEEDED when the empty object does not fit', () => {
    const error = expectCode(() => retainConversation(head, [], sizeOf([]) - 1), 'SESSION_REFERENCE_BUDGET_EXCEEDED');
    expect(error.message).toContain('session-1');
    expect(retainConversation(head, [], sizeOf([])).serializedBytes).toBe(sizeOf([]));
  });

  it('fails with BUDGET_EXCEEDED when even the notices do not fit', () => {
    const items = [cp('C'.repeat(500)), cp('D'.repeat(500)), assistant('N'.repeat(500))];
    expectCode(() => retainConversation(head, items, sizeOf([])), 'SESSION_REFERENCE_BUDGET_EXCEEDED');
  });

  it('sizes only the kept items exactly, not the thousands that are dropped', () => {
    const { items, sized } = countingExactSizes(Array.from({ length: 5000 }, (_, i) => (i % 2 ? assistant : user)(`message ${i} `.repeat(20))));
    const result = retainConversation(head, items, 4096);
    expect(result.omittedMessages).toBeGreaterThan(4900);
    expect(sized()).toBeGreaterThan(0);
    expect(sized()).toBeLessThanOrEqual(result.retainedMessages + 1);
  });

  it('does not modify its input items', () => {
    const items = [cp('C'.repeat(3000)), assistant('N'.repeat(1000))];
    const before = structuredClone(items);
    retainConversation(head, items, 500);
    expect(items).toEqual(before);
  });

  it('matches the literal SPEC reading on generated sessions and budgets', () => {
    const text = fc.oneof(
      fc.string({ maxLength: 60, unit: 'grapheme' }),
      fc.string({ maxLength: 60, unit: anyCodePoint }),
      fc.constantFrom('<', '</referenced-sessions>', '\ud800', '"\\', '\n\t\u0001', 'é🎉'),
    );
    const item = fc.record({ role: fc.constantFrom<'user' | 'assistant'>('user', 'assistant'), text: text.filter((t) => t !== ''), checkpoint: fc.boolean() }).map(
      ({ role, text: t, checkpoint }) => (checkpoint ? { role, text: t, checkpoint: true as const } : { role, text: t }),
    );
    fc.assert(
      fc.property(fc.array(item, { maxLength: 8 }), fc.integer({ min: 60, max: 900 }), (items, budget) => {
        const expected = oracleRetain(head, items, budget);
        if (expected === 'BUDGET_EXCEEDED') {
          expectCode(() => retainConversation(head, items, budget), 'SESSION_REFERENCE_BUDGET_EXCEEDED');
          return;
        }
        const result = retainConversation(head, items, budget);
        expect(result).toMatchObject(expected);
        expect(result.conversation).toStrictEqual(expected.conversation);
        expect(result.serializedBytes).toBe(bytes(serializeReference(head, result.conversation)));
      }),
      { numRuns: 300 },
    );
  });
});
