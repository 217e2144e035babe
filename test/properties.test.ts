/**
 * Property tests of the wire formats and the model-visible output (SPEC §2, §3, §8, §9), with
 * fast-check. Shared suite: runs unchanged in Node, Chromium, workerd, Deno and Bun, so numRuns
 * stay modest.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  composePromptMessage,
  createSessionReferences,
  decodeSessionReferenceUri,
  encodeSessionReferenceUri,
  formatSessionReferenceMention,
  MY_REQUEST_SEPARATOR,
  parseSessionReferenceText,
  scanSessionReferenceText,
  SessionReferenceError,
  type ContentBlock,
  type ConversationItem,
  type HookContext,
  type SessionEvent,
  type UserMessage,
} from '../src/index.js';
import {
  anyChar,
  anyString,
  base64url,
  BASE64URL_ALPHABET,
  blockInside,
  count,
  tagSafe,
  uriOfText,
  utf8Bytes,
} from './hardening.js';
import { CITED_IDS, promptText } from './prompt-texts.js';
import { assistantMessage, fakeQuery, toolResult, userMessage, type FakeSession } from './sessions.js';

const SCHEME = 'dsh-session:';
const AGENT = { id: '\u0000target-agent', cwd: '/repo' };

/** Decodes, returning the id or the error (which must be INVALID_REFERENCE). */
function tryDecode(uri: string): { ok: true; id: string } | { ok: false } {
  try {
    return { ok: true, id: decodeSessionReferenceUri(uri) };
  } catch (error) {
    expect(error).toBeInstanceOf(SessionReferenceError);
    expect((error as SessionReferenceError).code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
    return { ok: false };
  }
}

/** JSON-ish payload texts around a string: canonical, hand-escaped, padded, non-string. */
const jsonishText = fc.tuple(anyString(), fc.constantFrom('canonical', 'escape-first', 'raw-quotes', 'slash', 'upper', 'spaced', 'number', 'object', 'twice')).map(
  ([s, style]) => {
    const json = JSON.stringify(s);
    switch (style) {
      case 'canonical':
        return json;
      case 'escape-first':
        return s === '' ? json : `"\\u${s.charCodeAt(0).toString(16).padStart(4, '0')}${JSON.stringify(s.slice(1)).slice(1)}`;
      case 'raw-quotes':
        return `"${s}"`;
      case 'slash':
        return json.replace(/\//g, '\\/');
      case 'upper':
        return json.replace(/\\u([0-9a-f]{4})/g, (_, hex: string) => `\\u${hex.toUpperCase()}`);
      case 'spaced':
        return ` ${json}\n`;
      case 'number':
        return String(s.length);
      case 'object':
        return JSON.stringify({ id: s });
      default:
        return json + json;
    }
  },
);

const base64urlChar = fc.constantFrom(...BASE64URL_ALPHABET.split(''));
const mutationChar = fc.oneof(base64urlChar, fc.constantFrom('=', '+', '/', ' ', '.', ':', ')', 'é', '\ud800', 'D', 'S'));

/** A URI candidate of every kind: arbitrary text, arbitrary payloads, JSON-ish payloads, prefixes. */
const uriCandidate = fc.oneof(
  anyString(),
  fc.string({ unit: base64urlChar, maxLength: 40 }).map((payload) => SCHEME + payload),
  jsonishText.map(uriOfText),
  fc.uint8Array({ maxLength: 24 }).map((bytes) => SCHEME + base64url(bytes)),
  fc.tuple(anyString(), fc.constantFrom('', ' ', '=', '==', '\n', 'A')).map(([s, suffix]) => encodeSessionReferenceUri(s) + suffix),
  fc.tuple(anyString(), fc.constantFrom('DSH-SESSION:', 'dsh-session:dsh-session:', ' dsh-session:', 'dsh-session', 'dsh-sessions:')).map(
    ([s, scheme]) => scheme + encodeSessionReferenceUri(s).slice(SCHEME.length),
  ),
);

describe('property: session-reference URI (SPEC §2)', () => {
  it('decode(encode(s)) === s for every string, lone surrogates included', () => {
    fc.assert(
      fc.property(anyString(64), (s) => {
        const uri = encodeSessionReferenceUri(s);
        expect(uri.startsWith(SCHEME)).toBe(true);
        expect(uri.slice(SCHEME.length)).toMatch(/^[A-Za-z0-9_-]+$/);
        expect(decodeSessionReferenceUri(uri)).toBe(s);
      }),
      { numRuns: 400 },
    );
  });

  it('for every string u, a successful decode(u) re-encodes to exactly u', () => {
    let decoded = 0;
    fc.assert(
      fc.property(uriCandidate, (u) => {
        const result = tryDecode(u);
        if (result.ok) {
          decoded++;
          expect(encodeSessionReferenceUri(result.id)).toBe(u);
        }
      }),
      { numRuns: 600 },
    );
    expect(decoded, 'the generator must also produce canonical URIs').toBeGreaterThan(20);
  });

  it('a single-character mutation of a canonical URI never decodes to a different id unless it is itself canonical', () => {
    const mutation = fc.tuple(anyString(), fc.nat(), fc.constantFrom('replace', 'delete', 'insert'), mutationChar);
    let decodedMutants = 0;
    fc.assert(
      fc.property(mutation, ([id, at, kind, char]) => {
        const uri = encodeSessionReferenceUri(id);
        const i = at % (uri.length + (kind === 'insert' ? 1 : 0));
        const mutant =
          kind === 'replace' ? uri.slice(0, i) + char + uri.slice(i + 1) : kind === 'delete' ? uri.slice(0, i) + uri.slice(i + 1) : uri.slice(0, i) + char + uri.slice(i);
        const result = tryDecode(mutant);
        if (!result.ok) return;
        // It decoded: then it is canonical (re-encodes to itself), and it names `id` only if it is `uri`.
        expect(encodeSessionReferenceUri(result.id)).toBe(mutant);
        expect(result.id === id).toBe(mutant === uri);
        if (mutant !== uri) decodedMutants++;
      }),
      { numRuns: 800 },
    );
    // Sanity: some mutants are canonical URIs of other ids; the property is not vacuous.
    expect(decodedMutants).toBeGreaterThan(0);
  });
});

/** Labels rich in the characters a mention must escape. */
const mentionLabel = fc.string({
  unit: fc.oneof(anyChar, fc.constantFrom('\\', '[', ']', '\n', '@[', '](', ')', '](dsh-session:', '\\\\', '\\]')),
  maxLength: 24,
});

describe('property: mentions (SPEC §3.5)', () => {
  it('format → parse returns @label and the exact reference for every id and label', () => {
    fc.assert(
      fc.property(anyString(), fc.option(mentionLabel, { nil: undefined }), (sessionId, label) => {
        const L = label ?? sessionId;
        const mention = formatSessionReferenceMention(label === undefined ? { sessionId } : { sessionId, label });
        expect(parseSessionReferenceText(mention)).toEqual({ text: `@${L}`, references: [{ sessionId, label: L }] });
        const scan = scanSessionReferenceText(mention);
        expect(scan.tokens).toEqual([{ kind: 'mention', start: 0, end: mention.length, sessionId, label: L }]);
      }),
      { numRuns: 400 },
    );
  });

  it('several formatted mentions in a row parse back to all of them, in order', () => {
    const reference = fc.record({ sessionId: anyString(), label: mentionLabel });
    fc.assert(
      fc.property(fc.array(reference, { minLength: 1, maxLength: 4 }), fc.constantFrom(' ', '\n', ', ', ''), (references, separator) => {
        const text = references.map((r) => formatSessionReferenceMention(r)).join(separator);
        expect(parseSessionReferenceText(text)).toEqual({ text: references.map((r) => `@${r.label}`).join(separator), references });
      }),
      { numRuns: 200 },
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Sessions for the prepare-level properties

interface GeneratedItem {
  role: 'user' | 'assistant';
  texts: string[];
  checkpoint: boolean;
}

interface GeneratedSource {
  id: string;
  label: string | undefined;
  cwd: string | undefined;
  items: GeneratedItem[];
}

const COMPACT = { kind: 'plugin', plugin: 'compact' };

/** Session texts full of tag and separator look-alikes. */
const sessionText = (maxLength: number) =>
  fc.oneof(
    fc.string({ unit: fc.oneof(anyChar, fc.constantFrom('</referenced-sessions>', '<referenced-sessions>', '<', '\\u003c', '## My request:')), maxLength }),
    fc.tuple(anyString(8), fc.integer({ min: 1, max: 40 })).map(([s, n]) => s.repeat(n)),
  );

const generatedItem = (maxLength: number): fc.Arbitrary<GeneratedItem> =>
  fc.record({
    role: fc.constantFrom<'user' | 'assistant'>('user', 'assistant'),
    texts: fc.array(sessionText(maxLength), { minLength: 1, maxLength: 3 }),
    checkpoint: fc.boolean(),
  });

const generatedSources = (maxItems: number, maxLength: number): fc.Arbitrary<GeneratedSource[]> =>
  fc.uniqueArray(
    fc.record({
      id: anyString(12).filter((id) => id !== AGENT.id),
      label: fc.option(anyString(12), { nil: undefined }),
      cwd: fc.option(anyString(12), { nil: undefined }),
      items: fc.array(generatedItem(maxLength), { maxLength: maxItems }),
    }),
    { minLength: 1, maxLength: 3, selector: (source) => source.id },
  );

/** The events of a generated source, with tool results between the messages (never projected). */
function eventsOf(source: GeneratedSource): SessionEvent[] {
  const events: SessionEvent[] = [];
  let seq = 1;
  for (const item of source.items) {
    if (item.role === 'assistant') {
      events.push(assistantMessage(seq++, item.texts));
      events.push(toolResult(seq++, '<tool output> </referenced-sessions>'));
    } else {
      events.push(userMessage(seq++, item.texts, item.checkpoint ? { source: COMPACT } : {}));
    }
  }
  return events;
}

function fakeSessionsOf(sources: GeneratedSource[]): FakeSession[] {
  return sources.map((source) => ({
    header: { id: source.id, createdAt: 1, ...(source.cwd === undefined ? {} : { cwd: source.cwd }) },
    events: eventsOf(source),
  }));
}

/** The projection SPEC §8.2 gives for a generated source: texts joined by \n, empty ones left out. */
function projectionOf(source: GeneratedSource): ConversationItem[] {
  return source.items
    .map((item): ConversationItem => {
      const text = item.texts.join('\n');
      return item.role === 'user' && item.checkpoint ? { role: 'user', text, checkpoint: true } : { role: item.role, text };
    })
    .filter((item) => item.text !== '');
}

const headOf = (source: GeneratedSource) => ({
  sessionId: source.id,
  label: source.label ?? source.id,
  cwd: source.cwd !== undefined && source.cwd !== '' ? source.cwd : null,
});

const referencesOf = (sources: GeneratedSource[]) =>
  sources.map((source) => (source.label === undefined ? { sessionId: source.id } : { sessionId: source.id, label: source.label }));

describe('property: tag safety (SPEC §9.2, §9.3)', () => {
  it('one opening and one closing tag, no other < between them, and JSON.parse returns the texts exactly', async () => {
    await fc.assert(
      fc.asyncProperty(generatedSources(6, 30), async (sources) => {
        const refs = createSessionReferences({ sessionQuery: fakeQuery(fakeSessionsOf(sources)) });
        const { context } = await refs.prepare(AGENT, [], referencesOf(sources));
        const text = context!.content[0].text;
        expect(count(text, '<referenced-sessions>')).toBe(1);
        expect(count(text, '</referenced-sessions>')).toBe(1);
        expect(count(text, '<'), 'the two tags are the only < of the whole text').toBe(2);
        const inside = blockInside(text);
        expect(inside).not.toContain('<');
        expect(JSON.parse(inside)).toEqual(sources.map((source) => ({ ...headOf(source), conversation: projectionOf(source) })));

        const composed = composePromptMessage({ id: 'm', role: 'user', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }, context);
        const prefix = (composed.content[0] as { text: string }).text;
        expect(prefix.indexOf(MY_REQUEST_SEPARATOR), 'the request separator appears once, at the end').toBe(prefix.length - MY_REQUEST_SEPARATOR.length);
      }),
      { numRuns: 80 },
    );
  });
});

const NOTICE = /\n\[… (\d+) UTF-8 bytes omitted …\]\n/g;

/**
 * The kept text `kept` as a head/tail truncation of `original`: the omitted byte count when it is
 * one (a prefix, the notice with the exact count, a suffix, cut at whole code points), else undefined.
 */
function truncationOf(original: string, kept: string): number | undefined {
  for (const match of kept.matchAll(NOTICE)) {
    const head = kept.slice(0, match.index);
    const tail = kept.slice(match.index + match[0].length);
    const omitted = Number(match[1]);
    if (!original.startsWith(head) || !original.endsWith(tail) || head.length + tail.length > original.length) continue;
    if (utf8Bytes(head) + utf8Bytes(tail) + omitted !== utf8Bytes(original)) continue;
    const splitsPair = (at: number) => /[\ud800-\udbff]/.test(original[at - 1] ?? '') && /[\udc00-\udfff]/.test(original[at] ?? '');
    if (splitsPair(head.length) || splitsPair(original.length - tail.length)) continue;
    return omitted;
  }
  return undefined;
}

/**
 * The smallest a source's reference can get under SPEC §8.3: every droppable item dropped and
 * every kept text (checkpoints, newest) down to its notice alone, unless the notice is not smaller.
 */
function minimalBytes(source: GeneratedSource): number {
  const original = projectionOf(source);
  const kept = original
    .filter((item, i) => item.checkpoint === true || i === original.length - 1)
    .map((item) => {
      const notice = `\n[… ${utf8Bytes(item.text)} UTF-8 bytes omitted …]\n`;
      return utf8Bytes(tagSafe(notice)) < utf8Bytes(tagSafe(item.text)) ? { ...item, text: notice } : item;
    });
  return utf8Bytes(tagSafe({ ...headOf(source), conversation: kept }));
}

describe('property: budget (SPEC §8.3, §8.4)', () => {
  it('every reference fits maxReferenceBytes or the call fails with BUDGET_EXCEEDED; omissions are exact', async () => {
    const outcomes = { fitted: 0, truncated: 0, exceeded: 0 };
    await fc.assert(
      fc.asyncProperty(generatedSources(8, 60), fc.integer({ min: 40, max: 1200 }), async (sources, budget) => {
        const refs = createSessionReferences({ sessionQuery: fakeQuery(fakeSessionsOf(sources)), config: { maxReferenceBytes: budget } });
        const fits = sources.map((source) => minimalBytes(source) <= budget);
        let prepared;
        try {
          prepared = await refs.prepare(AGENT, [], referencesOf(sources));
        } catch (error) {
          expect(error).toBeInstanceOf(SessionReferenceError);
          expect((error as SessionReferenceError).code).toBe('SESSION_REFERENCE_BUDGET_EXCEEDED');
          expect(fits, 'fails only when a source cannot fit even with every kept text down to its notice').toContain(false);
          outcomes.exceeded++;
          return;
        }
        expect(fits).not.toContain(false);
        const inside = blockInside(prepared.context!.content[0].text);
        const parsed = JSON.parse(inside) as Array<{ conversation: ConversationItem[] }>;
        const serialized = parsed.map(tagSafe);
        expect(`[${serialized.join(',')}]`, 'references are serialized compactly, in key order').toBe(inside);
        sources.forEach((source, s) => {
          const meta = prepared.context!.metadata.references[s]!;
          const original = projectionOf(source);
          const kept = parsed[s]!.conversation;
          expect(utf8Bytes(serialized[s]!)).toBeLessThanOrEqual(budget);
          expect(meta.serializedBytes).toBe(utf8Bytes(serialized[s]!));
          expect(meta.budgetBytes).toBe(budget);

          // The dropped items are the oldest that are neither checkpoints nor the newest item.
          const mandatory = (i: number) => original[i]!.checkpoint === true || i === original.length - 1;
          let droppable = meta.omittedMessages;
          const keptIndices = original.map((_, i) => i).filter((i) => mandatory(i) || droppable-- <= 0);
          expect(kept).toHaveLength(keptIndices.length);
          expect(meta).toMatchObject({ originalMessages: original.length, retainedMessages: kept.length });
          let omittedBytes = original.reduce((sum, item, i) => (keptIndices.includes(i) ? sum : sum + utf8Bytes(item.text)), 0);
          keptIndices.forEach((i, k) => {
            const before = original[i]!;
            const after = kept[k]!;
            expect({ role: after.role, checkpoint: after.checkpoint }).toEqual({ role: before.role, checkpoint: before.checkpoint });
            if (after.text === before.text) return;
            const omitted = truncationOf(before.text, after.text);
            expect(omitted, `kept text ${JSON.stringify(after.text)} is a head + notice + tail of the original`).toBeDefined();
            omittedBytes += omitted!;
          });
          expect(meta.omittedBytes, 'omittedBytes is the exact number of UTF-8 bytes removed').toBe(omittedBytes);
          expect(meta.truncated).toBe(meta.omittedMessages > 0 || meta.omittedBytes > 0);
          expect(meta.compacted).toBe(original.some((item) => item.checkpoint === true));
          if (kept.some((item, k) => item.text !== original[keptIndices[k]!]!.text)) outcomes.truncated++;
        });
        outcomes.fitted++;
      }),
      { numRuns: 120 },
    );
    // Sanity: the generator reaches every branch (fits, truncates, cannot fit).
    expect(outcomes.fitted).toBeGreaterThan(10);
    expect(outcomes.truncated).toBeGreaterThan(5);
    expect(outcomes.exceeded).toBeGreaterThan(5);
  });
});

const contentBlock: fc.Arbitrary<ContentBlock> = fc.oneof(
  anyString().map((text) => ({ type: 'text', text })),
  fc.record({ type: fc.constantFrom('image', 'file', 'tool-call'), data: anyString(), meta: fc.jsonValue({ maxDepth: 2 }) }),
);

describe('property: determinism and append-only output (SPEC §9.2, §9.4)', () => {
  it('the same inputs give byte-identical contexts, from separate services over separate copies', async () => {
    await fc.assert(
      fc.asyncProperty(generatedSources(5, 40), fc.integer({ min: 200, max: 3000 }), async (sources, budget) => {
        const run = async () => {
          const refs = createSessionReferences({ sessionQuery: fakeQuery(fakeSessionsOf(sources)), config: { maxReferenceBytes: budget } });
          try {
            return JSON.stringify(await refs.prepare({ ...AGENT }, [{ type: 'text', text: 'q' }], referencesOf(sources)));
          } catch (error) {
            return JSON.stringify(error);
          }
        };
        const first = await run();
        expect(await run()).toBe(first);
      }),
      { numRuns: 60 },
    );
  });

  it('composing never changes earlier content blocks: the context is one new first block', async () => {
    const refs = createSessionReferences({ sessionQuery: fakeQuery(fakeSessionsOf([{ id: 's', label: undefined, cwd: '/r', items: [{ role: 'user', texts: ['<x>'], checkpoint: false }] }])) });
    const { context } = await refs.prepare(AGENT, [], [{ sessionId: 's' }]);
    await fc.assert(
      fc.asyncProperty(fc.array(contentBlock, { maxLength: 5 }), anyString(), async (content, id) => {
        const message: UserMessage = { id, role: 'user', content, source: { kind: 'user', extra: id } };
        const before = structuredClone(message);
        const prepared = await refs.prepare(AGENT, message.content, []);
        expect(prepared.content).toEqual(before.content);
        const composed = composePromptMessage(message, context as HookContext);
        expect(message).toEqual(before);
        expect(composed.content.slice(1), 'the original blocks follow, unchanged').toEqual(before.content);
        expect(composed.content[0]).toEqual({ type: 'text', text: context!.content[0].text + MY_REQUEST_SEPARATOR });
        expect(composed.envelope!.display).toEqual(before.content);
        expect({ ...composed, content: undefined, envelope: undefined }).toEqual({ ...before, content: undefined });
        // A later composition (another message sharing the same blocks) leaves this one as it was.
        const frozen = structuredClone(composed);
        const later = composePromptMessage({ ...message, id: `${id}-2` }, context as HookContext);
        later.content.push({ type: 'text', text: 'mutated later' });
        later.envelope!.display.push({ type: 'text', text: 'mutated later' });
        expect(composed).toEqual(frozen);
        expect(message).toEqual(before);
      }),
      { numRuns: 150 },
    );
  });
});

describe('property: mention positions (SPEC §9.4 envelope.mentions)', () => {
  const refs = createSessionReferences({
    sessionQuery: fakeQuery(CITED_IDS.map((id) => ({ header: { id, createdAt: 1 }, events: [userMessage(1, `in ${id}`)] }))),
  });

  it('every recorded position holds exactly `@` + the label typed there, in the order typed', async () => {
    let withMentions = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(promptText(false), { minLength: 1, maxLength: 3 }), async (texts) => {
        const parsed = texts.map((text) => {
          try {
            return parseSessionReferenceText(text);
          } catch {
            return undefined; // a look-alike made a malformed bare URI: referenceUserMessage rejects too
          }
        });
        const content: ContentBlock[] = texts.flatMap((text) => [{ type: 'image' }, { type: 'text', text }]);
        const call = refs.referenceUserMessage(AGENT, { id: 'm', role: 'user', source: { kind: 'user' }, content });
        if (parsed.includes(undefined)) {
          await expect(call).rejects.toMatchObject({ code: 'SESSION_REFERENCE_INVALID_REFERENCE' });
          return;
        }
        const composed = await call;
        const expected = parsed.flatMap((p, i) => p!.references.map((r) => ({ block: 2 * i + 1, ...r })));
        if (expected.length === 0) {
          expect(composed.envelope).toBeUndefined();
          return;
        }
        withMentions++;
        const { display, mentions } = composed.envelope!;
        expect(mentions!.map(({ block, sessionId }) => ({ block, sessionId }))).toEqual(expected.map(({ block, sessionId }) => ({ block, sessionId })));
        mentions!.forEach(({ block, start, end }, i) => {
          expect((display[block] as { text: string }).text.slice(start, end)).toBe(`@${expected[i]!.label}`);
        });
      }),
      { numRuns: 200 },
    );
    expect(withMentions).toBeGreaterThan(50);
  });
});
