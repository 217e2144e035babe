/**
 * searchSessions over a store of logs as dsh writes them (issue 23's acceptance, SPEC §16): the real
 * v3 log of samples/ (Turkish), a zstd log with header version 0 in dsh's frame layout (one frame
 * for the header line, one per write batch), a plain version 4 log in Chinese and English, and
 * generated sessions around them — read by `parseSessionLog` into the memory store, in every runtime.
 * Each session is found first by words its people and assistant said; words said only in its tool
 * output, reasoning or context messages find nothing; a one-letter typo of a long word still finds it.
 */
import { describe, expect, it } from 'vitest';
import realLog from '../samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl?raw';
import { createSessionReferences, type SessionEvent } from '../src/index.js';
import { createMemorySessionQuery, parseSessionLog } from '../src/store/index.js';
import { concatBytes } from './fixtures/base64.js';
import { storedFrame } from './fixtures/zstd-build.js';
import { assistantMessage, contextMessage, reasoningMessage, toolResult, userMessage } from './sessions.js';

const REAL_ID = 'session-904b047f-eb01-493f-b98a-391ecfae5b66';
const encoder = new TextEncoder();


const title = (seq: number, text: string): SessionEvent => ({ type: 'session/title', seq, time: seq, data: { title: text, source: 'fallback' } });
const lines = (header: Record<string, unknown>, events: SessionEvent[]) => [header, ...events].map((line) => `${JSON.stringify(line)}\n`);

/** A zstd log as dsh writes it: the header line in a frame of its own, then a frame per batch of two events. */
function zstdLog(header: Record<string, unknown>, events: SessionEvent[]): Uint8Array {
  const [head, ...rest] = lines(header, events);
  const frames = [storedFrame(head!)];
  for (let k = 0; k < rest.length; k += 2) frames.push(storedFrame(rest.slice(k, k + 2).join(''), { checksum: true }));
  return concatBytes(...frames);
}

const V0_ZSTD = zstdLog({ type: 'session', version: 0, id: 'v0-ledger', createdAt: 30, cwd: '/home/user/ledger' }, [
  userMessage(1, 'Which checksum should the nightly ledger export carry? The auditors want reproducibility.'),
  reasoningMessage(2, 'Thinking about the pelicanreasoning tradeoffs before answering.'),
  toolResult(3, 'grep output: quarantinedtoolword appears in vendor/hash.c'),
  assistantMessage(4, 'We decided on XXH64 for the ledger export: deterministic across platforms.'),
  contextMessage(5, 'A skill catalog mentions the contextcatalogword.'),
  title(6, 'Ledger export checksum'),
]);

const V4_CHINESE = lines({ type: 'session', version: 4, id: 'v4-migration', createdAt: 20, cwd: '/home/user/货运' }, [
  userMessage(1, '我们讨论了数据库迁移的方案，以及如何分批回填历史订单。'),
  assistantMessage(2, '建议先在影子表上演练迁移，再切换读写。The rollback plan uses a feature flag.'),
  toolResult(3, '工具输出里的秘密词：隐藏工具词 and toolonlyenglish'),
  title(4, '数据库迁移方案'),
]).join('');

/** Generated sessions around them, each with filler words and one word of its own. */
const GENERATED = Array.from({ length: 12 }, (_, i) =>
  lines({ type: 'session', version: 3, id: `gen-${i}`, createdAt: i, cwd: `/home/user/gen${i % 3}` }, [
    userMessage(1, `Please look at the build of module ${i}: the tests fail on branch feature-${i}.`),
    assistantMessage(2, `Fixed the import order; uniqueword${i} was the culprit.`),
  ]).join(''),
);

function store() {
  const logs = [parseSessionLog(realLog), parseSessionLog(V0_ZSTD), parseSessionLog(encoder.encode(V4_CHINESE)), ...GENERATED.map((log) => parseSessionLog(log))];
  return createMemorySessionQuery(logs);
}

const AGENT = { id: 'gen-0', cwd: '/home/user/gen0' };

describe('searchSessions over dsh logs of every version (issue 23 acceptance)', () => {
  const refs = createSessionReferences({ sessionQuery: store() });
  const first = async (query: string) => (await refs.searchSessions(AGENT, query))[0];

  it('finds each log first by words said in it, the matched words highlighted', async () => {
    const cases: Array<[string, string, string[]]> = [
      ['amodei altman', REAL_ID, ['amodei', 'altman']],
      ['seeds yazılmamış', REAL_ID, ['seeds', 'yazılmamış']],
      ['auditors reproducibility', 'v0-ledger', ['auditors', 'reproducibility']],
      ['deterministic platforms', 'v0-ledger', ['deterministic', 'platforms']],
      ['影子表', 'v4-migration', ['影子', '表']],
      ['回填历史订单', 'v4-migration', ['回填', '历史', '订单']],
      ['rollback flag', 'v4-migration', ['rollback', 'flag']],
      ['uniqueword7', 'gen-7', ['uniqueword7']],
    ];
    for (const [query, id, words] of cases) {
      const hit = await first(query);
      expect(hit?.sessionId, query).toBe(id);
      const highlighted = hit!.snippets.flatMap((s) => s.highlights.map(([a, b]) => s.text.slice(a, b).toLowerCase()));
      // A highlight covers the whole word matched: `seeds.py` is one word where the runtime's ICU joins it.
      for (const word of words) expect(highlighted.some((text) => text.startsWith(word)), `${query}: ${highlighted.join(' ')}`).toBe(true);
    }
  });

  it('never finds words said only in tool output, reasoning or context messages', async () => {
    for (const word of ['pelicanreasoning', 'quarantinedtoolword', 'contextcatalogword', '隐藏工具词', 'toolonlyenglish']) {
      expect(await refs.searchSessions(AGENT, word), word).toEqual([]);
    }
    // The real log's runtime-context and skill-catalog messages are plugin messages too.
    expect(await refs.searchSessions(AGENT, 'supersedes')).toEqual([]);
  });

  it('a one-letter typo in a long word still finds the session; the target is never a hit', async () => {
    expect((await first('reproducibilty'))?.sessionId).toBe('v0-ledger');
    expect((await first('deterministc'))?.sessionId).toBe('v0-ledger');
    expect((await first('altmann'))?.sessionId).toBe(REAL_ID);
    const all = await refs.searchSessions(AGENT, 'culprit', { limit: 50 });
    expect(all.map((hit) => hit.sessionId)).not.toContain(AGENT.id);
    expect(all.map((hit) => hit.sessionId).sort()).toEqual(Array.from({ length: 11 }, (_, i) => `gen-${i + 1}`).sort());
  });
});
