/**
 * The top hits chosen inside SQLite (issue 27): `findHits` walks the engine's ranking a window at
 * a time (`SessionSearchIndex.ranked`), and answers exactly as sorting every match did — the same
 * scores (the old per-part sums, recomputed here in JavaScript as the engine computed them before)
 * and the same order (score, §6.3's groups, listing order: SPEC §16.2), ties included; and, with
 * more matches than a tier holds (`tierSize` lowered), in tiers of the most recently indexed
 * matches, each ranked as a full sort of it.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeWord, TIER_SIZE, type SessionSearchIndex } from '../src/search/engine.js';
import { findHits, type ListedSession } from '../src/search/hits.js';
import { createIndex } from '../src/search/index-bytes.js';
import * as kit from '../src/search/kit.js';
import { useRoot } from '../src/search/root.js';
import type { IndexedSession } from '../src/search/stored.js';
import { fuzzyDistance, queryWords } from '../src/search/words.js';

useRoot(kit);

// Few words, so scores tie often; `gamma`/`gamme`/`gammas` are one edit apart (fuzzy matches).
const VOCABULARY = ['alpha', 'alphabet', 'beta', 'gamma', 'gamme', 'gammas', 'delta', 'deltas', 'zeta'];
const CWDS = ['', '/srv/a', '/srv/b'];
// The last has 20 distinct parts: more than one statement ranks (16), the rest carried into it.
const LONG = 'a al alp alph alpha alphab b be bet beta g ga gam gamm gamme d de del delt delta';
const QUERIES = ['alpha', 'alp', 'gamma', 'gamme', 'delta beta', 'beta gamma alpha', 'gammas', 'zet', 'alpha beta', 'srv', LONG];

/** The scores as the engine computed them before the ranking moved into SQLite: one FTS5 query per part, summed in JavaScript. */
function oldScores(index: SessionSearchIndex, parts: string[], exclude: string): Map<string, number> {
  const json = (sql: string, ...bindings: string[]) => JSON.parse(String(index.sql.all(sql, ...bindings)[0]![0])) as Array<[number, number]>;
  const quote = (word: string) => `"${word.replaceAll('"', '""')}"`;
  const partScores = (part: string) => {
    const scores = new Map<number, number>();
    const add = (expression: string, weight: number) => {
      const sql = 'WITH ranked AS MATERIALIZED (SELECT rowid, bm25(search_words, 3, 1, 1) AS rank FROM search_words WHERE search_words MATCH ?) SELECT json_group_array(json_array(rowid, rank)) FROM ranked';
      for (const [row, rank] of json(sql, expression)) {
        scores.set(row, (scores.get(row) ?? 0) - weight * rank);
      }
    };
    add(`${quote(part)}*`, 1);
    const near = fuzzyDistance(part) === 1 ? (index as unknown as { oneEditWords(part: string): string[] }).oneEditWords(part) : [];
    if (near.length > 0) add(near.map(quote).join(' OR '), 0.45);
    return scores;
  };
  let scores: Map<number, number> | undefined;
  for (const part of new Set(parts)) {
    const found = partScores(encodeWord(part));
    for (const [row, score] of scores === undefined ? [] : found) {
      const before = scores!.get(row);
      if (before === undefined) found.delete(row);
      else found.set(row, before + score);
    }
    scores = found;
  }
  const byId = new Map<string, number>();
  for (const [row, id] of index.sql.all('SELECT row, id FROM search_sessions')) {
    const score = scores?.get(row as number);
    const sessionId = JSON.parse(id as string) as string;
    if (score !== undefined && sessionId !== exclude) byId.set(sessionId, score);
  }
  return byId;
}

const sessionArb = fc.record({
  words: fc.array(fc.constantFrom(...VOCABULARY), { minLength: 1, maxLength: 6 }),
  title: fc.option(fc.array(fc.constantFrom(...VOCABULARY), { maxLength: 2 }), { nil: undefined }),
  cwd: fc.constantFrom(...CWDS),
  createdAt: fc.integer({ min: 0, max: 5 }),
});

describe('the top hits chosen inside SQLite (issue 27)', () => {
  let index: SessionSearchIndex;
  beforeAll(async () => {
    index = await createIndex(256 * 1024);
  });
  afterAll(() => index.close());

  it('scores as the per-part sums did, and the first `limit` hits in the order of sorting every match, ties included', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(sessionArb, { maxLength: 30 }),
        fc.constantFrom(...QUERIES),
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom(...CWDS, undefined),
        fc.boolean(),
        async (generated, query, limit, ownCwd, asFunction) => {
          index.remove([...index.known().keys()]);
          const sessions: IndexedSession[] = generated.map((g, k) => ({
            id: `s${k}`,
            identity: `e${k}`,
            seq: 1,
            title: g.title?.join(' ') ?? '',
            cwd: g.cwd,
            // Duplicated sessions tie exactly: the window must take every tie of its last row.
            items: [{ role: 'user', text: g.words.join(' ') }],
          }));
          await index.put(sessions);
          // Listing order: newest first, then id (as the catalog lists), every session (one is the agent's).
          const listing: ListedSession[] = generated
            .map((g, k) => ({ id: `s${k}`, createdAt: g.createdAt, cwd: g.cwd, order: 0 }))
            .sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? -1 : 1))
            .map((session, order) => ({ ...session, order }));
          const listedOf = (ids: readonly string[]) => listing.filter((session) => ids.includes(session.id)).map((session, order) => ({ ...session, order }));
          const words = await queryWords(query, async () => {});
          const agent = 's0';
          const all = await findHits(index, listing, words, agent, ownCwd, 1_000_000, undefined);
          const top = await findHits(index, asFunction ? listedOf : listing, words, agent, ownCwd, limit, undefined);
          expect(top).toEqual(all.slice(0, limit));
          const expected = oldScores(index, [...new Set(words.flat())], agent);
          const engine = new Map((await index.search([...new Set(words.flat())], agent)).map((r) => [r.id, r.score]));
          expect(engine).toEqual(expected);
          if (words.every((word) => word.length === 1)) {
            // Without phrases every match is a hit: the old order, sorting every match in JavaScript.
            const order = [...expected].map(([id, score]) => ({ id, score, listed: listing.find((session) => session.id === id)! }));
            order.sort((a, b) => b.score - a.score || kit.cwdGroup(ownCwd, a.listed.cwd) - kit.cwdGroup(ownCwd, b.listed.cwd) || a.listed.order - b.listed.order);
            expect(all.map((hit) => [hit.sessionId, hit.score])).toEqual(order.map(({ id, score }) => [id, score]));
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('ranks a query of more parts than one statement takes as the per-part sums did', async () => {
    index.remove([...index.known().keys()]);
    const sessions: IndexedSession[] = Array.from({ length: 12 }, (_, k) => ({
      id: `long-${k}`,
      identity: undefined,
      seq: null,
      title: k % 3 === 0 ? 'gamma' : '',
      cwd: '',
      items: [{ role: 'user' as const, text: `alphabet beta ${'delta '.repeat(k % 4 + 1)}${k % 2 ? 'gamma' : 'gammas'}` }],
    }));
    await index.put(sessions);
    const parts = [...new Set((await queryWords(LONG, async () => {})).flat())];
    expect(parts.length).toBe(20);
    const found = await index.search(parts, 'long-0');
    // `gamme` is one edit from `gamma`, two from `gammas`: the odd ones and those titled `gamma`, but not long-0 (the agent).
    expect(found.map((r) => r.id).sort()).toEqual(['long-1', 'long-11', 'long-3', 'long-5', 'long-6', 'long-7', 'long-9']);
    expect(new Map(found.map((r) => [r.id, r.score]))).toEqual(oldScores(index, parts, 'long-0'));
  });

  it('walks on, window after window, past matches the host does not list (the first windows hold none of the hits)', async () => {
    index.remove([...index.known().keys()]);
    // 20 sessions rank first for "beta" (in their titles) but are not listed; 3 further down are.
    const sessions: IndexedSession[] = [
      ...Array.from({ length: 20 }, (_, k) => ({ id: `gone-${k}`, identity: undefined, seq: null, title: 'beta', cwd: '', items: [{ role: 'user' as const, text: `alpha ${'zeta '.repeat(k)}` }] })),
      ...Array.from({ length: 3 }, (_, k) => ({ id: `kept-${k}`, identity: undefined, seq: null, title: '', cwd: '', items: [{ role: 'user' as const, text: `alpha ${'delta '.repeat(k * 5)} beta` }] })),
    ];
    await index.put(sessions);
    const listing = sessions.filter((session) => session.id.startsWith('kept-')).map((session, order) => ({ id: session.id, createdAt: 0, cwd: '', order }));
    const words = await queryWords('beta', async () => {});
    const windows: number[] = [];
    const ranked = index.ranked.bind(index);
    index.ranked = (...args) => {
      const walk = ranked(...args);
      return (async function* () {
        for await (const window of walk) {
          windows.push(window.length);
          yield window;
        }
      })();
    };
    try {
      const hits = await findHits(index, listing, words, 'agent', undefined, 2, undefined);
      expect(hits.map((hit) => hit.sessionId)).toEqual(['kept-0', 'kept-1']);
      // 2, then twice as many each time below the last score: 2 + 4 + 8 = 14 of the 20 unlisted, then the rest.
      expect(windows).toEqual([2, 4, 8, 9]);
    } finally {
      delete (index as Partial<SessionSearchIndex>).ranked;
    }
  });
  it('ranks in tiers of the most recently indexed matches: each tier as a full sort of it, tiers newest first, none missed or repeated', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(sessionArb, { maxLength: 30 }),
        fc.array(fc.nat({ max: 29 }), { maxLength: 8 }),
        fc.constantFrom(...QUERIES),
        fc.integer({ min: 1, max: 7 }),
        fc.integer({ min: 1, max: 6 }),
        fc.constantFrom(...CWDS, undefined),
        async (generated, replaced, query, tierSize, limit, ownCwd) => {
          index.remove([...index.known().keys()]);
          const sessionOf = (k: number, again: boolean): IndexedSession => ({
            id: `s${k}`,
            identity: `e${k}`,
            seq: again ? 2 : 1,
            title: generated[k]!.title?.join(' ') ?? '',
            cwd: generated[k]!.cwd,
            items: [{ role: 'user', text: generated[k]!.words.join(again ? ' zeta ' : ' ') }],
          });
          await index.put(generated.map((_, k) => sessionOf(k, false)));
          // Sessions replaced later, one write each: each takes a row above every row held.
          const order = generated.map((_, k) => `s${k}`);
          for (const k of replaced.filter((k) => k < generated.length)) {
            await index.put([sessionOf(k, true)]);
            order.splice(order.indexOf(`s${k}`), 1);
            order.push(`s${k}`);
          }
          const rows = new Map(index.sql.all('SELECT id, row FROM search_sessions').map(([id, row]) => [JSON.parse(id as string) as string, row as number]));
          // Rowids grow with indexing order: "most recently indexed" is "added or replaced most recently".
          expect([...rows.keys()].sort((a, b) => rows.get(a)! - rows.get(b)!)).toEqual(order);
          const parts = [...new Set((await queryWords(query, async () => {})).flat())];
          const agent = 's0';
          // Every match of the whole query (the agent's too: tiers count it), newest first, cut into tiers.
          const matches = (await index.search(parts, '')).map((r) => ({ ...r, row: rows.get(r.id)! })).sort((a, b) => b.row - a.row);
          const tiers: Array<Array<{ id: string; score: number }>> = [];
          for (let at = 0; at < matches.length; at += tierSize) tiers.push(matches.slice(at, at + tierSize).filter((r) => r.id !== agent));
          index.tierSize = tierSize;
          try {
            const walked = [];
            for await (const window of index.ranked(parts, agent, limit)) walked.push(...window);
            // Each tier as a full sort of it (scores best first, the same sessions), the tiers in order.
            let at = 0;
            for (const tier of tiers) {
              const got = walked.slice(at, at + tier.length);
              at += tier.length;
              expect(got.map((r) => r.id).sort()).toEqual(tier.map((r) => r.id).sort());
              expect(got.map((r) => r.score)).toEqual(tier.map((r) => r.score).sort((a, b) => b - a));
            }
            expect(walked.length).toBe(at);
            // The hits: each tier's in the order of sorting that tier (score, §6.3's groups, listing order), tiers in order.
            const listing: ListedSession[] = generated.map((g, k) => ({ id: `s${k}`, createdAt: g.createdAt, cwd: g.cwd, order: k }));
            const words = await queryWords(query, async () => {});
            const all = await findHits(index, listing, words, agent, ownCwd, 1_000_000, undefined);
            expect(await findHits(index, listing, words, agent, ownCwd, limit, undefined)).toEqual(all.slice(0, limit));
            if (words.every((word) => word.length === 1)) {
              const expected = tiers.flatMap((tier) =>
                tier
                  .map((r) => ({ ...r, listed: listing.find((session) => session.id === r.id)! }))
                  .sort((a, b) => b.score - a.score || kit.cwdGroup(ownCwd, a.listed.cwd) - kit.cwdGroup(ownCwd, b.listed.cwd) || a.listed.order - b.listed.order),
              );
              expect(all.map((hit) => [hit.sessionId, hit.score])).toEqual(expected.map((r) => [r.id, r.score]));
            }
          } finally {
            index.tierSize = TIER_SIZE;
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
