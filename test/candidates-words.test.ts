/**
 * Word matching for front ends (SPEC §15.10): config `candidateMatch: 'words'` — every folded query
 * word a prefix of a word of the id, cwd or (with `matchTitles`) label. Table vectors through
 * `listCandidates`, the matcher's own vectors, and fast-check properties: folding, every word
 * required, a prefix of some word (against an independent oracle), the substring rule unchanged.
 * Shared suite: runs in Node, Chromium, workerd, Deno and Bun.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { candidateMatcher } from '../src/candidate-match.js';
import { foldWord } from '../src/fold.js';
import { createSessionReferences, type SessionHeader } from '../src/index.js';
import { fakeQuery, type FakeSession } from './sessions.js';

const s = (id: string, cwd?: string | null, title?: string): FakeSession => ({
  header: { id, createdAt: 100, ...(cwd === undefined ? {} : { cwd }) } as SessionHeader,
  events: [],
  ...(title === undefined ? {} : { title }),
});

// listSessions order is the order of this array; the agent is `target` in /repo.
const SESSIONS = [
  s('session-904b', '/srv/ledger-app', 'Ledger reconciler'),
  s('session-2b8e', '/home/ayşe/Dümen', 'Dümen: seeds.py done, Annex XI dossier'),
  s('target', '/repo'),
  s('session-77aa', '/repo', 'Schema migration'),
  s('session-e001', null, 'Crème brûlée recipe'),
  s('Session-LEDGERS', '/tmp', 'ledgers'),
  s('session-cafe', '/srv/CAFÉ', 'Kahve'),
];
const AGENT = { id: 'target', cwd: '/repo' };

async function ids(query: string | undefined, config: Record<string, unknown>, limit?: number) {
  const sessionQuery = fakeQuery(SESSIONS);
  const refs = createSessionReferences({ sessionQuery, config: { candidateMatch: 'words', ...config } });
  const rows = await refs.listCandidates(AGENT, query, limit);
  return { ids: rows.map((row) => row.sessionId), rows, titleReads: sessionQuery.calls.readTitleSnapshots };
}

describe("listCandidates with candidateMatch: 'words' (SPEC §15.10)", () => {
  it.each<[string, string, boolean, string[]]>([
    // The examples: diacritics folded, a query of two words.
    ['dumen', 'a title with diacritics', true, ['session-2b8e']],
    ['DÜMEN', 'the query folded too', true, ['session-2b8e']],
    ['dumen', 'a cwd with diacritics, no titles', false, ['session-2b8e']],
    ['ayse', 'a cwd word with ş', false, ['session-2b8e']],
    ['ledger rec', 'two words, both in the title', true, ['session-904b']],
    ['rec ledger', 'word order does not matter', true, ['session-904b']],
    ['ledger srv', 'one word in the title, one in the cwd', true, ['session-904b']],
    ['ledger', 'a prefix of several words', true, ['session-904b', 'Session-LEDGERS']],
    ['ledger', 'cwd and id words only without matchTitles', false, ['session-904b', 'Session-LEDGERS']],
    ['ledger rec', 'without matchTitles the title is not read for matching', false, []],
    ['edger', 'not a prefix of any word', true, []],
    ['ledger-ap', 'a query word spanning words that stand together', false, ['session-904b']],
    ['/srv/ledger', 'a path: words with their separators', false, ['session-904b']],
    ['904', 'a word of the id', false, ['session-904b']],
    ['cafe', 'É folded in a cwd', false, ['session-cafe']],
    ['creme brulee', 'two folded title words', true, ['session-e001']],
    ['seeds.py', 'a word with a dot (one word by UAX #29)', true, ['session-2b8e']],
    ['ledger zzz', 'every word required', true, []],
    ['target', 'the agent never', false, []],
  ])('%j finds %s (matchTitles %s)', async (query, _, matchTitles, expected) => {
    expect((await ids(query, { matchTitles })).ids).toEqual(expected);
  });

  it('an empty or blank query keeps every record in §6.3 order, reading titles once for the kept rows', async () => {
    const all = ['session-77aa', 'session-e001', 'session-904b', 'session-2b8e', 'Session-LEDGERS', 'session-cafe'];
    for (const query of [undefined, '', '   ', '\t\n']) {
      const { ids: found, titleReads } = await ids(query, { matchTitles: true });
      expect(found).toEqual(all);
      expect(titleReads).toEqual([all]);
    }
  });

  it('keeps §6.3 order and §6.4 limit: same cwd, no cwd, other cwd', async () => {
    expect((await ids('session', { matchTitles: false })).ids).toEqual(['session-77aa', 'session-e001', 'session-904b', 'session-2b8e', 'Session-LEDGERS', 'session-cafe']);
    expect((await ids('session', { matchTitles: false }, 2)).ids).toEqual(['session-77aa', 'session-e001']);
  });

  it('reads titles as §6.7 does: in rank order, limit at a time, stopping once limit are found', async () => {
    const { ids: found, titleReads } = await ids('ledger', { matchTitles: true }, 1);
    expect(found).toEqual(['session-904b']);
    // Rank order: session-77aa (same cwd), session-e001 (no cwd), then session-904b.
    expect(titleReads).toEqual([['session-77aa'], ['session-e001'], ['session-904b']]);
  });

  it('without matchTitles, titles are read once, for the kept rows only (§6.4)', async () => {
    const { ids: found, titleReads, rows } = await ids('ledger', { matchTitles: false });
    expect(found).toEqual(['session-904b', 'Session-LEDGERS']);
    expect(titleReads).toEqual([['session-904b', 'Session-LEDGERS']]);
    expect(rows[0]!.label).toBe('Ledger reconciler');
  });

  it("the default stays dsh's substring rule (SPEC §6.2)", async () => {
    const refs = createSessionReferences({ sessionQuery: fakeQuery(SESSIONS) });
    expect(refs.config.candidateMatch).toBe('substring');
    expect((await refs.listCandidates(AGENT, 'edger')).map((row) => row.sessionId)).toEqual(['session-904b', 'Session-LEDGERS']);
    expect(await refs.listCandidates(AGENT, 'dumen')).toEqual([]);
    expect(await refs.listCandidates(AGENT, 'ledger srv')).toEqual([]);
  });
});

describe('candidateMatcher (SPEC §6.2, §15.10)', () => {
  it.each<[string, unknown[], boolean]>([
    ['dumen', ['x', null, 'Dümen'], true],
    ['dü', ['Du\u0308men'], true], // decomposed in the field
    ['du\u0308', ['Dümen'], true], // decomposed in the query
    ['ﬁle', ['FILE'], true], // compatibility ligature
    ['istanbul', ['İSTANBUL'], true], // dotted capital I, no locale
    ['数据库', ['数据库迁移'], true], // Chinese: the segmenter's first word
    ['迁移', ['数据库迁移'], true], // ... and its second
    ['据库', ['数据库迁移'], false], // not at a word start
    ['a', [42, undefined, {}], false], // fields that are not text
    ['\u0301', ['anything'], true], // a query word folding to nothing is dropped: no word left
    ['x \u0301', ['x'], true],
    ['led led', ['ledger'], true], // a repeated word asks nothing more
    ['seeds', ['x', null, 'Dümen: seeds.py done'], true],
    ['py', ['x', null, 'Dümen: seeds.py done'], false], // `seeds.py` is one word by UAX #29, in every runtime
    ['e.g', ['see e.g. this'], true],
    ['g', ['see e.g. this'], false],
    ['ledger-ap', ['ledger-ap'], true], // a query word spanning words, where they stand together
  ])('%j against %j is %s', (query, fields, expected) => {
    expect(candidateMatcher('words', query).matches(fields)).toBe(expected);
  });

  it('keepsAll exactly for a query without words (words) or an empty query (substring)', () => {
    expect(['', ' ', '\n\t', '\u0301'].map((q) => candidateMatcher('words', q).keepsAll)).toEqual([true, true, true, true]);
    expect(['a', ' a '].map((q) => candidateMatcher('words', q).keepsAll)).toEqual([false, false]);
    expect(['', ' '].map((q) => candidateMatcher('substring', q).keepsAll)).toEqual([true, false]);
  });
});

describe('properties of word matching (SPEC §15.10)', () => {
  /** Letters with case and diacritics variants, digits and separators. */
  const letter = fc.constantFrom('a', 'b', 'c', 'e', 'é', 'E', 'É', 'u', 'ü', 'Ü', 'ı', 'İ', 'ß', 'ç', '1', '2');
  const word = fc.string({ unit: letter, minLength: 1, maxLength: 6 });
  const separator = fc.constantFrom(' ', '-', '/', ' - ', '  ');
  const field = fc.array(fc.tuple(word, separator), { minLength: 1, maxLength: 5 }).map((parts) => parts.map(([w, sep]) => w + sep).join('').trimEnd());
  const fields = fc.array(fc.option(field, { nil: null }), { minLength: 1, maxLength: 3 });
  const query = fc.array(word, { minLength: 1, maxLength: 3 }).map((words) => words.join(' '));

  /**
   * An independent oracle for these alphabets: a folded field's word boundaries are the starts of
   * its runs of non-separators and every separator character (UAX #29 splits at `-`, `/` and
   * spaces; none of these letters join across them).
   */
  function oracle(q: string, list: ReadonlyArray<string | null>): boolean {
    const words = q.split(/\s+/).map(foldWord).filter((w) => w !== '');
    return words.every((w) =>
      list.some((f) => {
        if (f === null) return false;
        const folded = foldWord(f);
        for (let i = 0; i < folded.length; i++) {
          const boundary = i === 0 || /[\s/-]/.test(folded[i - 1]!) || /[\s/-]/.test(folded[i]!);
          if (boundary && folded.startsWith(w, i)) return true;
        }
        return false;
      }),
    );
  }

  it('matches exactly where every query word, folded, begins at a word of some field (oracle)', () => {
    fc.assert(
      fc.property(query, fields, (q, list) => {
        expect(candidateMatcher('words', q).matches(list)).toBe(oracle(q, list));
      }),
      { numRuns: 500 },
    );
  });

  it('a prefix of any word of any field matches, whatever its case, composition or diacritics', () => {
    const caseAndForm = fc.constantFrom(
      (t: string) => t,
      // Upper case where it round-trips through folding (`ı` and `ß` do not: `I`, `SS`).
      (t: string) => (foldWord(t.toUpperCase()) === foldWord(t) ? t.toUpperCase() : t),
      (t: string) => t.normalize('NFD'),
      (t: string) => t.normalize('NFKD').replace(/\p{M}/gu, ''),
    );
    fc.assert(
      fc.property(fields, fc.nat(), fc.nat(), fc.nat(), caseAndForm, caseAndForm, (list, fieldAt, wordAt, length, formQuery, formField) => {
        const texts = list.filter((f): f is string => f !== null);
        fc.pre(texts.length > 0);
        const text = texts[fieldAt % texts.length]!;
        const words = text.split(/[\s/-]+/).filter((w) => w !== '');
        const chosen = words[wordAt % words.length]!;
        const prefix = [...chosen].slice(0, 1 + (length % [...chosen].length)).join('');
        fc.pre(foldWord(prefix) !== '');
        expect(candidateMatcher('words', formQuery(prefix)).matches(list.map((f) => (f === null ? f : formField(f))))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });

  it('every word is required: a query of two parts matches exactly when each part does', () => {
    fc.assert(
      fc.property(query, query, fields, (a, b, list) => {
        const both = candidateMatcher('words', `${a} ${b}`).matches(list);
        expect(both).toBe(candidateMatcher('words', a).matches(list) && candidateMatcher('words', b).matches(list));
      }),
      { numRuns: 500 },
    );
  });

  it('folding: the answer is the same for the folded query and the folded fields', () => {
    fc.assert(
      fc.property(query, fields, (q, list) => {
        const folded = list.map((f) => (f === null ? f : foldWord(f)));
        expect(candidateMatcher('words', foldWord(q)).matches(folded)).toBe(candidateMatcher('words', q).matches(list));
      }),
      { numRuns: 500 },
    );
  });

  it("the substring rule is dsh's: the whole query lowercased, inside some field lowercased", () => {
    fc.assert(
      fc.property(fc.string({ unit: letter, maxLength: 3 }), fields, (q, list) => {
        const expected = list.some((f) => f !== null && f.toLowerCase().includes(q.toLowerCase()));
        expect(candidateMatcher('substring', q).matches(list)).toBe(expected);
      }),
      { numRuns: 300 },
    );
  });
});
