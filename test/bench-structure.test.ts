/**
 * The structural facts behind `npm run bench` (bench/index.ts), asserted with counters rather
 * than timings — machines are shared and noisy, so no test here measures time:
 * - retention sizes exactly only the items it keeps (plus at most the first that does not fit),
 *   however many items a source has (SPEC §8.3: no re-serializing per dropped item);
 * - `prepare` reads each source once; `listCandidates` reads titles once, for at most `limit`
 *   sessions (SPEC §6.4);
 * - the bench's inputs are deterministic and parse to the number of references they advertise,
 *   and its naive baseline agrees with `retainConversation`.
 * Shared suite: Web APIs only, runs in every runtime.
 */
import { describe, expect, it } from 'vitest';
import {
  codecIds,
  conversationItems,
  conversationSurface,
  countingExactSizes,
  listingHost,
  PARSE_FAMILIES,
  proseBaseline,
  sessionEvents,
  sessionRecords,
  snapshotHost,
  surfaceSnapshot,
} from '../bench/generators.js';
import {
  createSessionReferences,
  decodeSessionReferenceUri,
  encodeSessionReferenceUri,
  parseSessionReferenceText,
  type ConversationItem,
} from '../src/index.js';
import { serializeReference, type ReferenceHead } from '../src/render.js';
import { retainConversation } from '../src/retention.js';

const SEED = 20240611;
const head: ReferenceHead = { sessionId: 'bench-source', label: 'Bench', cwd: '/work/repo' };
const utf8 = (text: string) => new TextEncoder().encode(text).length;

/** The drop phase of earlier dsh versions (the bench's naive baseline). */
function naiveRetain(items: readonly ConversationItem[], budget: number): ConversationItem[] {
  const conversation = [...items];
  while (utf8(serializeReference(head, conversation)) > budget) {
    const drop = conversation.findIndex((item, i) => item.checkpoint !== true && i !== conversation.length - 1);
    if (drop < 0) break;
    conversation.splice(drop, 1);
  }
  return conversation;
}

describe('bench structure: retention sizes only what it keeps (SPEC §8.3)', () => {
  it.each([2_000, 20_000])('sizes exactly at most the kept items + 1 of %i messages', (count) => {
    const { items, sized } = countingExactSizes(conversationItems(SEED, count, 100));
    const result = retainConversation(head, items, 65536);
    expect(result.omittedMessages).toBeGreaterThan(count / 2);
    expect(sized()).toBeGreaterThan(0);
    expect(sized()).toBeLessThanOrEqual(result.retainedMessages + 1);
    // Bounded by the budget, not by the number of items.
    expect(sized()).toBeLessThan(1000);
    expect(result.serializedBytes).toBe(utf8(serializeReference(head, result.conversation)));
    const dropped = items.filter((item) => !result.conversation.includes(item));
    expect(result.omittedBytes).toBe(dropped.reduce((sum, item) => sum + utf8(item.text), 0));
  });

  it('keeps exactly what the naive re-serializing baseline keeps', () => {
    const items = conversationItems(SEED, 300, 100);
    const budget = 8192;
    const result = retainConversation(head, items, budget);
    expect(result.conversation).toEqual(naiveRetain(items, budget));
    const counted = countingExactSizes(items);
    retainConversation(head, counted.items, budget);
    expect(counted.sized()).toBeLessThanOrEqual(result.retainedMessages + 1);
  });

  it('prepare reads a generated source once and holds it to the budget', async () => {
    const events = sessionEvents(SEED, { textChars: 400_000, checkpointEvery: 25 });
    const host = snapshotHost(surfaceSnapshot('bench-source', events));
    const refs = createSessionReferences({ sessionQuery: host, config: { maxReferenceBytes: 16384 } });
    const prepared = await refs.prepare({ id: 'bench-agent' }, [{ type: 'text', text: 'hi' }], [{ sessionId: 'bench-source' }]);
    expect(host.reads).toBe(1);
    const meta = prepared.context!.metadata.references[0]!;
    expect(meta.compacted).toBe(true);
    expect(meta.originalMessages).toBeGreaterThan(100);
    expect(meta.omittedMessages).toBeGreaterThan(0);
    expect(meta.serializedBytes).toBeLessThanOrEqual(16384);
  });
});

describe('bench structure: listCandidates reads titles for at most limit sessions (SPEC §6.4)', () => {
  const records = sessionRecords(SEED, 10_000);
  const agent = { id: records[5]!.header.id, cwd: '/work/repo' };

  it.each([
    ['repo', 50],
    ['a1', 50],
    ['', 50],
    ['', 1],
    ['repo', 3000],
    ['no such session', 50],
  ])('query %j, limit %i', async (query, limit) => {
    const host = listingHost(records);
    const refs = createSessionReferences({ sessionQuery: host });
    const found = await refs.listCandidates(agent, query, limit);
    const needle = query.toLowerCase();
    const matching = records.filter(
      ({ header }) =>
        header.id !== agent.id &&
        (header.id.toLowerCase().includes(needle) || (typeof header.cwd === 'string' && header.cwd.toLowerCase().includes(needle))),
    ).length;
    expect(found).toHaveLength(Math.min(limit, matching));
    expect(host.titleReads).toBe(found.length);
    expect(host.titleReads).toBeLessThanOrEqual(limit);
    expect(host.titleCalls).toBe(found.length > 0 ? 1 : 0);
  });
});

describe('bench structure: deterministic inputs', () => {
  it('generators give the same input for the same seed', () => {
    expect(proseBaseline(SEED, 4096, 3)).toBe(proseBaseline(SEED, 4096, 3));
    expect(sessionEvents(SEED, { textChars: 50_000 })).toEqual(sessionEvents(SEED, { textChars: 50_000 }));
    expect(sessionRecords(SEED, 100)).toEqual(sessionRecords(SEED, 100));
    expect(codecIds(SEED, 50)).toEqual(codecIds(SEED, 50));
    expect(proseBaseline(SEED, 4096, 3)).not.toBe(proseBaseline(SEED + 1, 4096, 3));
  });

  it.each(Object.keys(PARSE_FAMILIES))('parsing family %s parses to the references it advertises', (name) => {
    const family = PARSE_FAMILIES[name]!;
    const size = 64 * 1024;
    const input = family.make(SEED, size);
    expect(input.text).toHaveLength(size);
    expect(parseSessionReferenceText(input.text).references).toHaveLength(input.valid);
    const prose = proseBaseline(SEED, size, input.valid, name.includes('with payload'));
    expect(parseSessionReferenceText(prose).references).toHaveLength(input.valid);
  });

  it('the host-plugin retention input: 2,000 messages of 0.8–1.2 K characters, surface event types only', async () => {
    const surface = conversationSurface('bench-source', SEED, 2000, 1000);
    expect(conversationSurface('bench-source', SEED, 2000, 1000)).toEqual(surface);
    expect(surface.events).toHaveLength(2000);
    // The host's own plugin rejects any event type its surfaces do not hold.
    expect(new Set(surface.events.map((event) => event.type))).toEqual(new Set(['user/message', 'assistant/message']));
    const refs = createSessionReferences({ sessionQuery: snapshotHost(surface) });
    const prepared = await refs.prepare({ id: 'bench-agent' }, [], [{ sessionId: 'bench-source' }]);
    const meta = prepared.context!.metadata.references[0]!;
    expect(meta.originalMessages).toBe(2000);
    expect(meta.omittedMessages).toBeGreaterThan(1900);
    const texts = surface.events.map((event) => {
      const data = event.data as { content?: Array<{ text: string }>; message?: { content: Array<{ text: string }> } };
      return (data.content ?? data.message!.content)[0]!.text;
    });
    for (const text of texts) {
      expect(text.length).toBeGreaterThanOrEqual(800);
      expect(text.length).toBeLessThanOrEqual(1200);
    }
  });

  it('codec ids up to 256 UTF-8 bytes round-trip', () => {
    for (const id of codecIds(SEED, 500, 256)) {
      expect(utf8(id)).toBeLessThanOrEqual(256);
      expect(decodeSessionReferenceUri(encodeSessionReferenceUri(id))).toBe(id);
    }
  });
});
