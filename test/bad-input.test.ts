/**
 * Bad input, table-driven, one table (or more) per public function of the package root
 * (SPEC §2–§7, §9, §10): non-string ids and labels, null/number/object references, content that is
 * not an array, agents without an id, invalid config values and unknown keys, 10 MB labels and ids,
 * and malformed URIs of every kind in SPEC §2.4 and §3.3. Every failure is checked for its code,
 * a short message, and untouched inputs (expectAtomicFailure). Shared suite: runs in every runtime.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  composePromptMessage,
  createSessionReferences,
  decodeSessionReferenceUri,
  encodeSessionReferenceUri,
  formatSessionReferenceMention,
  isCompactCheckpointSource,
  isSessionReferenceError,
  parseSessionReferenceText,
  scanSessionReferenceText,
  type SessionReferenceErrorCode,
  type UserMessage,
} from '../src/index.js';
import { describeValue } from '../src/errors.js';
import { base64url, expectAtomicFailure, uriOfText } from './hardening.js';
import { assistantMessage, fakeQuery, textContext, userMessage, type FakeSession } from './sessions.js';

const AGENT = { id: 'target', cwd: '/repo' };
const ALPHA: FakeSession = { header: { id: 'alpha', createdAt: 2, cwd: '/repo' }, events: [userMessage(1, 'hello'), assistantMessage(2, 'hi')] };
const BETA: FakeSession = { header: { id: 'beta', createdAt: 1 }, events: [userMessage(1, 'beta')] };
const message = (text: string): UserMessage => ({ id: 'm1', role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } });

/** About 10 MB (10 Mi UTF-16 code units) of `pattern`, repeated. */
const huge = (pattern: string): string => pattern.repeat(Math.ceil((10 * 2 ** 20) / pattern.length));
const HUGE_ID = huge(`id-é🎉<\\][${'x'.repeat(54)}`);
const HUGE_LABEL = huge(`label \\ [ ] @[ ](dsh-session: \n${'y'.repeat(32)}`);

const bytes = (...values: number[]) => Uint8Array.from(values);
const uriOfBytes = (...values: number[]) => `dsh-session:${base64url(bytes(...values))}`;
const Q = 0x22; // '"'

/** Values that are not strings, for every id/label/text slot. */
const NON_STRINGS: Array<[string, unknown]> = [
  ['undefined', undefined],
  ['null', null],
  ['a number', 42],
  ['NaN', NaN],
  ['a boolean', true],
  ['a bigint', 10n],
  ['a symbol', Symbol('id')],
  ['a function', () => 'id'],
  ['an object', { id: 'a' }],
  ['an array', ['a']],
  ['a String object', new String('a')],
];

/** Service methods are async: they must reject, never throw synchronously. */
function asyncCall<T>(call: () => Promise<T>): () => Promise<T> {
  return () => {
    let promise: Promise<T> | undefined;
    expect(() => {
      promise = call();
    }, 'never throws synchronously').not.toThrow();
    expect(promise).toBeInstanceOf(Promise);
    return promise!;
  };
}

// ---------------------------------------------------------------------------------------------
// URIs (SPEC §2)

describe('bad input: encodeSessionReferenceUri (SPEC §2.2)', () => {
  it.each(NON_STRINGS)('rejects %s as the id with INVALID_REFERENCE', async (_, id) => {
    await expectAtomicFailure(() => encodeSessionReferenceUri(id as string), 'SESSION_REFERENCE_INVALID_REFERENCE', { id });
  });

  it('round-trips a 10 MB id', () => {
    const uri = encodeSessionReferenceUri(HUGE_ID);
    expect(decodeSessionReferenceUri(uri) === HUGE_ID).toBe(true);
  });
});

/** Every kind of malformed URI in SPEC §2.4, each named after what is wrong with it. */
const MALFORMED_URIS: Array<[string, unknown]> = [
  // the scheme
  ['an uppercase scheme', 'DSH-SESSION:IiI'],
  ['a mixed-case scheme', 'Dsh-session:IiI'],
  ['another scheme', 'dsh-sessions:IiI'],
  ['a scheme without its colon', 'dsh-sessionIiI'],
  ['a scheme with a fullwidth colon', 'dsh-session：IiI'],
  ['a prefixed scheme', 'urn:dsh-session:IiI'],
  ['a leading space', ' dsh-session:IiI'],
  ['a scheme twice', 'dsh-session:dsh-session:IiI'],
  ['no scheme at all', 'IiI'],
  ['the empty string', ''],
  // the payload alphabet
  ['an empty payload', 'dsh-session:'],
  ['padding "="', 'dsh-session:ImEiIg='],
  ['padding "=="', 'dsh-session:ImFiIg=='],
  ['the standard-base64 "+"', 'dsh-session:IuaXpeacrOiqnuOBruOCu+ODg+OCt+ODp+ODsyI'],
  ['the standard-base64 "/"', 'dsh-session:Ij8/Ig'],
  ['a "." in the payload', 'dsh-session:Im.iIg'],
  ['a space in the payload', 'dsh-session:ImF iIg'],
  ['a trailing newline', 'dsh-session:ImFiIg\n'],
  ['a trailing space', 'dsh-session:ImFiIg '],
  ['percent-encoding', 'dsh-session:%22a%22'],
  ['a non-ASCII letter', 'dsh-session:ImFéIg'],
  ['a fullwidth letter', 'dsh-session:ＩｍＥｉ'],
  ['a NUL character', 'dsh-session:ImE\u0000i'],
  ['a lone surrogate', 'dsh-session:ImE\ud800i'],
  // base64url canonical form
  ['a length of 1 mod 4 (one character)', 'dsh-session:I'],
  ['a length of 1 mod 4', 'dsh-session:ImFiI'],
  ['non-zero trailing bits (2 bytes)', 'dsh-session:ImFiIh'],
  ['non-zero trailing bits (1 byte)', 'dsh-session:IiJ'],
  // UTF-8
  ['a lone continuation byte', uriOfBytes(Q, 0x80, Q)],
  ['a truncated multi-byte sequence', uriOfBytes(Q, 0xe6, 0x97, Q)],
  ['an overlong encoding of "/"', uriOfBytes(Q, 0xc0, 0xaf, Q)],
  ['a UTF-8-encoded surrogate (CESU-8)', uriOfBytes(Q, 0xed, 0xa0, 0x80, Q)],
  ['a code point above U+10FFFF', uriOfBytes(Q, 0xf4, 0x90, 0x80, 0x80, Q)],
  ['a 0xFF byte', uriOfBytes(Q, 0xff, Q)],
  ['a UTF-8 BOM before the JSON', uriOfText('\ufeff"a"')],
  // JSON
  ['an unterminated JSON string', uriOfText('"a')],
  ['a raw tab inside the JSON string', uriOfText('"\t"')],
  ['trailing garbage after the JSON', uriOfText('"a"x')],
  ['two JSON strings', uriOfText('"a""b"')],
  ['single quotes', uriOfText("'a'")],
  ['the JSON number 42', uriOfText('42')],
  ['JSON null', uriOfText('null')],
  ['JSON true', uriOfText('true')],
  ['a JSON object', uriOfText('{"id":"a"}')],
  ['a JSON array', uriOfText('["a"]')],
  // canonical JSON
  ['the non-canonical escape "\\u0041"', uriOfText('"\\u0041"')],
  ['an escaped slash "\\/"', uriOfText('"\\/"')],
  ['an escaped quote written "\\u0022"', uriOfText('"\\u0022"')],
  ['an escaped é "\\u00e9"', uriOfText('"\\u00e9"')],
  ['an escaped U+2028', uriOfText('"\\u2028"')],
  ['an uppercase surrogate escape "\\uD800"', uriOfText('"\\uD800"')],
  ['an escaped surrogate pair of an emoji', uriOfText('"\\ud83c\\udf89"')],
  ['a tab escaped as "\\u0009"', uriOfText('"\\u0009"')],
  ['a leading space before the JSON', uriOfText(' "a"')],
  ['a trailing newline after the JSON', uriOfText('"a"\n')],
  // not a string at all
  ['a number instead of a URI', 42],
  ['null instead of a URI', null],
  ['undefined instead of a URI', undefined],
  ['an object instead of a URI', { uri: 'dsh-session:IiI' }],
  ['an array holding a URI', ['dsh-session:IiI']],
  ['a String object holding a URI', new String('dsh-session:IiI')],
  // huge
  ['a 10 MB payload of "A"s', `dsh-session:${'A'.repeat(10 * 2 ** 20)}`],
  ['a 10 MB payload ending in "="', `dsh-session:${'A'.repeat(10 * 2 ** 20 - 1)}=`],
  ['10 MB of text without the scheme', HUGE_LABEL],
];

describe('bad input: decodeSessionReferenceUri (SPEC §2.4)', () => {
  it.each(MALFORMED_URIS)('rejects %s with INVALID_REFERENCE naming the URI', async (_, uri) => {
    const error = await expectAtomicFailure(() => decodeSessionReferenceUri(uri as string), 'SESSION_REFERENCE_INVALID_REFERENCE', { uri });
    if (typeof uri === 'string') expect(error.message).toContain(JSON.stringify(uri).slice(0, 60));
  });

  it.each([
    ['the canonical empty id', 'dsh-session:IiI', ''],
    ['a canonical escaped lone surrogate', uriOfText('"\\ud800"'), '\ud800'],
    ['a canonical raw U+2028', uriOfText('"\u2028"'), '\u2028'],
    ['a canonical control escape', uriOfText('"\\u0001"'), '\u0001'],
  ])('accepts %s (the canonical neighbours of the cases above)', (_, uri, id) => {
    expect(decodeSessionReferenceUri(uri)).toBe(id);
  });
});

// ---------------------------------------------------------------------------------------------
// Mentions (SPEC §3)

describe('bad input: formatSessionReferenceMention (SPEC §3.1)', () => {
  const cases: Array<[string, unknown]> = [
    ...NON_STRINGS.filter(([, v]) => typeof v !== 'object' || v === null).map(([name, value]): [string, unknown] => [`${name} as the reference`, value]),
    ['an empty object', {}],
    ['an array', ['alpha']],
    ...NON_STRINGS.map(([name, value]): [string, unknown] => [`${name} as sessionId`, { sessionId: value }]),
    ...NON_STRINGS.filter(([, v]) => v !== undefined).map(([name, value]): [string, unknown] => [`${name} as label`, { sessionId: 'alpha', label: value }]),
  ];
  it.each(cases)('rejects %s with INVALID_REFERENCE', async (_, reference) => {
    await expectAtomicFailure(() => formatSessionReferenceMention(reference as never), 'SESSION_REFERENCE_INVALID_REFERENCE', { reference });
  });

  it('formats and parses back a 10 MB label', () => {
    const mention = formatSessionReferenceMention({ sessionId: 'alpha', label: HUGE_LABEL });
    const parsed = parseSessionReferenceText(mention);
    expect(parsed.text === `@${HUGE_LABEL}`).toBe(true);
    expect(parsed.references).toHaveLength(1);
    expect(parsed.references[0]!.sessionId === 'alpha' && parsed.references[0]!.label === HUGE_LABEL).toBe(true);
  });
});

/** SPEC §3.3: explicit mentions whose URI does not decode, and bare non-canonical candidates, reject the parse. */
const REJECTED_TEXTS: Array<[string, string]> = [
  ['an explicit mention with an empty payload', '@[x](dsh-session:)'],
  ['an explicit mention with padding', '@[x](dsh-session:ImFiIg==)'],
  ['an explicit mention with non-zero trailing bits', '@[x](dsh-session:ImFiIh)'],
  ['an explicit mention with a length of 1 mod 4', '@[x](dsh-session:I)'],
  ['an explicit mention with punctuation in the payload', '@[x](dsh-session:...)'],
  ['an explicit mention with a "(" in the payload', '@[x](dsh-session:Im(iIg)'],
  ['an explicit mention with a JSON object', '@[x](dsh-session:e30)'],
  ['an explicit mention with invalid UTF-8', `@[x](${uriOfBytes(Q, 0xff, Q)})`],
  ['an explicit mention with non-canonical JSON', `@[x](${uriOfText('"\\u0041"')})`],
  ['an explicit mention with a 10 MB bad payload', `@[x](dsh-session:${'A'.repeat(10 * 2 ** 20)})`],
  ['a bare candidate with non-zero trailing bits', 'see dsh-session:ImFiIh now'],
  ['a bare candidate of length 1 mod 4', 'dsh-session:I'],
  ['a bare candidate that is not JSON', 'dsh-session:AAAA'],
  ['a bare candidate with a JSON number', uriOfText('42')],
  ['a bare non-canonical candidate inside an unclosed mention', '@[x](dsh-session:ImFiIh'],
  ['a repeated scheme (the second is a bare candidate)', 'dsh-session:dsh-session:'],
  ['a malformed mention after a valid one', `@[ok](${encodeSessionReferenceUri('a')}) @[bad](dsh-session:e30)`],
];

/** SPEC §3.3: the scheme followed by nothing or by non-base64url characters is ordinary text. */
const ORDINARY_TEXTS: Array<[string, string]> = [
  ['the scheme alone', 'dsh-session:'],
  ['the scheme and dots', 'dsh-session:...'],
  ['the scheme in parentheses', '(dsh-session:)'],
  ['the scheme and a space', 'see dsh-session: later'],
  ['the scheme and "="', 'dsh-session:='],
  ['the scheme and "+/"', 'dsh-session:+/'],
  ['the scheme and a non-ASCII letter', 'dsh-session:é'],
  ['an uppercase scheme with a payload', 'DSH-SESSION:IiI'],
  ['a scheme glued to a letter', 'xdsh-session:ImFiIh'],
  ['a scheme glued to a digit', '1dsh-session:ImFiIh'],
  ['a scheme glued to "+", "-" or "."', '+dsh-session:I -dsh-session:I .dsh-session:I'],
  ['a mention with another scheme', '@[x](https://example.com)'],
  ['a mention with an uppercase scheme', '@[x](DSH-SESSION:IiI)'],
  ['an unterminated mention', '@[x'],
  ['a mention without its URI', '@[x]()'],
  ['10 MB of unterminated mentions', huge('@[')],
];

describe('bad input: parseSessionReferenceText (SPEC §3.2, §3.3)', () => {
  it.each(NON_STRINGS)('rejects %s as the text with INVALID_ARGUMENT', async (_, text) => {
    await expectAtomicFailure(() => parseSessionReferenceText(text as string), 'SESSION_REFERENCE_INVALID_ARGUMENT', { text });
  });

  it.each(REJECTED_TEXTS)('rejects %s with INVALID_REFERENCE naming the URI', async (_, text) => {
    const error = await expectAtomicFailure(() => parseSessionReferenceText(text), 'SESSION_REFERENCE_INVALID_REFERENCE', { text });
    expect(error.message).toContain('dsh-session:');
  });

  it.each(ORDINARY_TEXTS)('leaves %s unchanged as ordinary text', (_, text) => {
    const parsed = parseSessionReferenceText(text);
    expect(parsed.text === text).toBe(true);
    expect(parsed.references).toEqual([]);
  });

  it('keeps a bare URI followed by padding: the padding is ordinary text after the longest base64url run', () => {
    expect(parseSessionReferenceText('dsh-session:ImFiIg==')).toEqual({ text: '@ab==', references: [{ sessionId: 'ab', label: 'ab' }] });
  });
});

describe('bad input: scanSessionReferenceText (SPEC §3.6)', () => {
  it.each(NON_STRINGS)('rejects %s as the text with INVALID_ARGUMENT', async (_, text) => {
    await expectAtomicFailure(() => scanSessionReferenceText(text as string), 'SESSION_REFERENCE_INVALID_ARGUMENT', { text });
  });

  it.each(REJECTED_TEXTS)('never throws on %s: it reports the malformed match as a token', (_, text) => {
    const scan = scanSessionReferenceText(text);
    const bad = scan.tokens.filter((token) => token.error !== undefined);
    expect(bad.length).toBeGreaterThan(0);
    for (const token of bad) {
      expect(token.error!.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
      expect(token.sessionId).toBeUndefined();
      expect(token.error!.message.length).toBeLessThan(600);
    }
    expect(() => parseSessionReferenceText(text)).toThrow(bad[0]!.error!.message);
  });

  it.each(ORDINARY_TEXTS)('finds no token in %s', (_, text) => {
    const scan = scanSessionReferenceText(text);
    expect(scan.tokens).toEqual([]);
    expect(scan.text === text).toBe(true);
  });
});

// ---------------------------------------------------------------------------------------------
// Predicates: never throw (SPEC §4.5, §10)

const ODD_VALUES: Array<[string, unknown]> = [
  ...NON_STRINGS,
  ['a string', 'SessionReferenceError'],
  ['a null-prototype object', Object.create(null)],
  ['an Error', new Error('x')],
  ['an error-shaped object with an unknown code', { name: 'SessionReferenceError', code: 'NOPE', message: 'x' }],
  ['an error-shaped object with a numeric message', { name: 'SessionReferenceError', code: 'SESSION_REFERENCE_TOO_MANY', message: 5 }],
  ['a frozen object', Object.freeze({ kind: 'plugin' })],
  ['a source with a non-string plugin', { kind: 'plugin', plugin: { name: 'compact' } }],
  ['a 10 MB string', HUGE_LABEL],
];

describe('bad input: isSessionReferenceError (SPEC §10)', () => {
  it.each(ODD_VALUES)('answers false for %s without throwing', (_, value) => {
    expect(isSessionReferenceError(value)).toBe(false);
  });
});

describe('bad input: isCompactCheckpointSource (SPEC §4.5)', () => {
  it.each(ODD_VALUES)('answers false for %s without throwing', (_, value) => {
    expect(isCompactCheckpointSource(value)).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// Configuration (SPEC §5)

const BAD_CONFIG_VALUES: Array<[string, unknown]> = [
  ['0', 0],
  ['-0', -0],
  ['-1', -1],
  ['1.5', 1.5],
  ['NaN', NaN],
  ['Infinity', Infinity],
  ['-Infinity', -Infinity],
  ['2^53', 2 ** 53],
  ['1e300', 1e300],
  ['the string "3"', '3'],
  ['null', null],
  ['true', true],
  ['an object', {}],
  ['an array', [3]],
  ['a bigint', 3n],
];

describe('bad input: createSessionReferences (SPEC §5)', () => {
  const sessionQuery = fakeQuery([ALPHA]);

  const configCases: Array<[string, unknown, string]> = [
    ...(['maxReferences', 'candidateLimit', 'maxReferenceBytes'] as const).flatMap((key) =>
      BAD_CONFIG_VALUES.map(([name, value]): [string, unknown, string] => [`${key} = ${name}`, { [key]: value }, key]),
    ),
    ['matchTitles = "yes"', { matchTitles: 'yes' }, 'matchTitles'],
    ['matchTitles = 0', { matchTitles: 0 }, 'matchTitles'],
    ['maxReferences = 4', { maxReferences: 4 }, 'maxReferences'],
    ['maxReferences = 100', { maxReferences: 100 }, 'maxReferences'],
    ['the unknown key "maxBytes"', { maxBytes: 5 }, 'maxBytes'],
    ['the unknown key "MaxReferences" (case matters)', { MaxReferences: 2 }, 'MaxReferences'],
    ['an unknown key set to undefined', { extra: undefined }, 'extra'],
    ['an own "__proto__" key', JSON.parse('{"__proto__": 3}'), '__proto__'],
    ['an unknown key next to valid ones', { maxReferences: 2, toString: 1 }, 'toString'],
    ['a 10 MB unknown key', { [HUGE_LABEL]: 1 }, 'unknown config key'],
    ['config = null', null, 'config'],
    ['config = "big"', 'big', 'config'],
    ['config = 42', 42, 'config'],
    ['config = true', true, 'config'],
    ['config = []', [], 'config'],
  ];
  it.each(configCases)('rejects %s with INVALID_CONFIG naming the key', async (_, config, key) => {
    const error = await expectAtomicFailure(() => createSessionReferences({ sessionQuery, config: config as never }), 'SESSION_REFERENCE_INVALID_CONFIG', { config });
    expect(error.message).toContain(key);
  });

  const noop = () => Promise.resolve([]);
  const optionCases: Array<[string, unknown]> = [
    ['no options', undefined],
    ['null options', null],
    ['a number as options', 42],
    ['a string as options', 'query'],
    ['options without sessionQuery', {}],
    ['options with only a config', { config: {} }],
    ['a null sessionQuery', { sessionQuery: null }],
    ['a number as sessionQuery', { sessionQuery: 42 }],
    ['an empty sessionQuery', { sessionQuery: {} }],
    ['a sessionQuery without readSurface', { sessionQuery: { listSessions: noop } }],
    ['a sessionQuery without listSessions', { sessionQuery: { readSurface: noop } }],
    ['a sessionQuery whose listSessions is not a function', { sessionQuery: { listSessions: [], readSurface: noop } }],
    ['a sessionQuery whose readTitleSnapshots is not a function', { sessionQuery: { listSessions: noop, readSurface: noop, readTitleSnapshots: 'titles' } }],
    ['an unknown option', { sessionQuery, signal: AbortSignal.abort() }],
  ];
  it.each(optionCases)('rejects %s with INVALID_CONFIG', async (_, options) => {
    const error = await expectAtomicFailure(() => createSessionReferences(options as never), 'SESSION_REFERENCE_INVALID_CONFIG', {});
    expect(error.message).toMatch(/sessionQuery|option/);
  });

  it('accepts every key set to undefined (defaults) and a readTitleSnapshots set to undefined', () => {
    expect(createSessionReferences({ sessionQuery, config: { maxReferences: undefined, candidateLimit: undefined, maxReferenceBytes: undefined, matchTitles: undefined, candidateMatch: undefined, maxIndexBytes: undefined, searchIndex: undefined } }).config).toEqual({
      maxReferences: 3,
      candidateLimit: 50,
      maxReferenceBytes: 65536,
      matchTitles: false,
      candidateMatch: 'substring',
      maxIndexBytes: 262144,
    });
    expect(() => createSessionReferences({ sessionQuery: { listSessions: noop, readSurface: noop as never, readTitleSnapshots: undefined } })).not.toThrow();
  });
});

// ---------------------------------------------------------------------------------------------
// The service (SPEC §6, §7, §9.5)

const BAD_AGENTS: Array<[string, unknown]> = [
  ['undefined', undefined],
  ['null', null],
  ['a number', 42],
  ['a string id', 'target'],
  ['an array', ['target']],
  ['an agent without id', { cwd: '/repo' }],
  ['an agent with a numeric id', { id: 42 }],
  ['an agent with a null id', { id: null }],
  ['an agent with an object id', { id: { id: 'target' } }],
  ['an agent with a String object id', { id: new String('target') }],
];

const BAD_SIGNALS: Array<[string, unknown]> = [
  ['null', null],
  ['a string', 'abort'],
  ['a plain object', {}],
  ['an object with a string aborted', { aborted: 'no', addEventListener() {} }],
  ['an AbortController instead of its signal', new AbortController()],
];

describe('bad input: listCandidates (SPEC §6)', () => {
  const setup = () => {
    const query = fakeQuery([ALPHA, BETA]);
    return { query, refs: createSessionReferences({ sessionQuery: query }) };
  };

  it.each(BAD_AGENTS)('rejects %s as the agent with INVALID_ARGUMENT, before calling the host', async (_, agent) => {
    const { query, refs } = setup();
    await expectAtomicFailure(asyncCall(() => refs.listCandidates(agent as never)), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent });
    expect(query.calls.listSessions).toBe(0);
  });

  it.each<[string, unknown]>([
    ['a number', 42],
    ['an object', { q: 'a' }],
    ['an array', ['a']],
    ['a boolean', true],
  ])('rejects %s as the query with INVALID_ARGUMENT', async (_, query) => {
    const { query: host, refs } = setup();
    await expectAtomicFailure(asyncCall(() => refs.listCandidates(AGENT, query as never)), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent: AGENT, query });
    expect(host.calls.listSessions).toBe(0);
  });

  it.each(BAD_CONFIG_VALUES.filter(([, v]) => v !== null))('rejects %s as the limit with INVALID_ARGUMENT', async (_, limit) => {
    const { query, refs } = setup();
    await expectAtomicFailure(asyncCall(() => refs.listCandidates(AGENT, '', limit as never)), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent: AGENT, limit });
    expect(query.calls.listSessions).toBe(0);
  });

  it.each(BAD_SIGNALS)('rejects %s as the signal with INVALID_ARGUMENT', async (_, signal) => {
    const { query, refs } = setup();
    await expectAtomicFailure(asyncCall(() => refs.listCandidates(AGENT, '', 5, signal as never)), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent: AGENT });
    expect(query.calls.listSessions).toBe(0);
  });

  it('handles a 10 MB agent id and a 10 MB query', async () => {
    const { refs } = setup();
    expect((await refs.listCandidates({ id: HUGE_ID, cwd: '/repo' })).map((c) => c.sessionId)).toEqual(['alpha', 'beta']);
    expect(await refs.listCandidates(AGENT, HUGE_LABEL)).toEqual([]);
  });
});

describe('bad input: prepare (SPEC §7.1)', () => {
  const setup = (config?: object) => {
    const query = fakeQuery([ALPHA, BETA]);
    return { query, refs: createSessionReferences({ sessionQuery: query, ...(config ? { config } : {}) }) };
  };
  const content = [{ type: 'text', text: 'question' }];

  it.each(BAD_AGENTS)('rejects %s as the agent with INVALID_ARGUMENT, before reading', async (_, agent) => {
    const { query, refs } = setup();
    const references = [{ sessionId: 'alpha' }];
    await expectAtomicFailure(asyncCall(() => refs.prepare(agent as never, content, references)), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent, content, references });
    expect(query.calls.readSurface).toEqual([]);
  });

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'question'],
    ['a number', 42],
    ['a content block', { type: 'text', text: 'question' }],
    ['an array-like object', { length: 1, 0: { type: 'text', text: 'question' } }],
  ])('rejects %s as the content with INVALID_ARGUMENT, before reading', async (_, badContent) => {
    const { query, refs } = setup();
    const references = [{ sessionId: 'alpha' }];
    await expectAtomicFailure(asyncCall(() => refs.prepare(AGENT, badContent as never, references)), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent: AGENT, content: badContent, references });
    expect(query.calls.readSurface).toEqual([]);
  });

  it.each<[string, unknown, string]>([
    ['a function inside a block', [{ type: 'text', text: 'q', onClick: () => 1 }], 'content[0].onClick is a function'],
    ['a symbol block', [Symbol('block')], 'content[0] is a symbol'],
    ['a Map inside a block', [{ type: 'text', text: 'q', meta: new Map([[1, 2]]) }], 'content[0].meta is a Map'],
    ['a Date inside a block', [{ type: 'text', text: 'q', at: new Date(0) }], 'content[0].at is a Date'],
  ])('rejects content that cannot be copied as data (%s) with INVALID_ARGUMENT naming the path (SPEC §10.4)', async (_, badContent, named) => {
    const { query, refs } = setup();
    const references = [{ sessionId: 'alpha' }];
    const error = await expectAtomicFailure(asyncCall(() => refs.prepare(AGENT, badContent as never, references)), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent: AGENT, content: badContent, references });
    expect(error.message).toContain(named);
    expect(query.calls.readSurface).toEqual([]);
  });

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'alpha'],
    ['a single reference object', { sessionId: 'alpha' }],
  ])('rejects %s as the references with INVALID_ARGUMENT', async (_, references) => {
    const { query, refs } = setup();
    await expectAtomicFailure(asyncCall(() => refs.prepare(AGENT, content, references as never)), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent: AGENT, content, references });
    expect(query.calls.readSurface).toEqual([]);
  });

  const badReferences: Array<[string, unknown]> = [
    ['null', null],
    ['undefined', undefined],
    ['a number', 42],
    ['a bare id string', 'alpha'],
    ['a boolean', true],
    ['an empty object', {}],
    ['an array', ['alpha']],
    ...NON_STRINGS.map(([name, value]): [string, unknown] => [`a reference with ${name} as sessionId`, { sessionId: value }]),
    ...NON_STRINGS.filter(([, v]) => v !== undefined).map(([name, value]): [string, unknown] => [`a reference with ${name} as label`, { sessionId: 'alpha', label: value }]),
  ];
  it.each(badReferences)('rejects %s among valid references with INVALID_REFERENCE, before reading', async (_, bad) => {
    const { query, refs } = setup();
    const references = [{ sessionId: 'alpha' }, bad];
    await expectAtomicFailure(asyncCall(() => refs.prepare(AGENT, content, references as never)), 'SESSION_REFERENCE_INVALID_REFERENCE', { agent: AGENT, content, references });
    expect(query.calls.readSurface).toEqual([]);
  });

  it.each<[string, () => unknown[], string[]]>([
    ['a hole before a valid reference', () => [, { sessionId: 'alpha' }], ['alpha']],
    ['an array of one hole', () => new Array(1), []],
    ['length 2^32-1 holding two references', () => Object.assign(new Array(2 ** 32 - 1), { 7: { sessionId: 'beta' }, 4_000_000_000: { sessionId: 'alpha' } }), ['beta', 'alpha']],
  ])('reads a sparse references array (%s) as the entries it holds, in index order (SPEC §10.3, §10.4)', async (_, make, ids) => {
    const { query, refs } = setup();
    const prepared = await refs.prepare(AGENT, content, make() as never);
    expect(prepared.context?.metadata.references.map((reference) => reference.sessionId) ?? []).toEqual(ids);
    expect(query.calls.readSurface).toEqual(ids);
  });

  it.each<[string, unknown[], SessionReferenceErrorCode]>([
    ['an invalid reference before the self-reference check', [{ sessionId: 'target' }, { sessionId: 1 }], 'SESSION_REFERENCE_INVALID_REFERENCE'],
    ['a self-reference, even as a duplicate', [{ sessionId: 'alpha' }, { sessionId: 'target', label: 'me' }], 'SESSION_REFERENCE_SELF_REFERENCE'],
    ['a self-reference before the maxReferences check', [{ sessionId: 'alpha' }, { sessionId: 'beta' }, { sessionId: 'target' }], 'SESSION_REFERENCE_SELF_REFERENCE'],
    ['more distinct ids than maxReferences', [{ sessionId: 'alpha' }, { sessionId: 'beta' }], 'SESSION_REFERENCE_TOO_MANY'],
  ])('rejects %s in SPEC §7.1 order', async (_, references, code) => {
    const { query, refs } = setup({ maxReferences: 1 });
    await expectAtomicFailure(asyncCall(() => refs.prepare(AGENT, content, references as never)), code, { agent: AGENT, content, references });
    expect(query.calls.readSurface).toEqual([]);
  });

  it.each(BAD_SIGNALS)('rejects %s as the signal with INVALID_ARGUMENT', async (_, signal) => {
    const { query, refs } = setup();
    const references = [{ sessionId: 'alpha' }];
    await expectAtomicFailure(asyncCall(() => refs.prepare(AGENT, content, references, signal as never)), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent: AGENT, content, references });
    expect(query.calls.readSurface).toEqual([]);
  });

  it.each<[string, string, string | undefined]>([
    ['a 10 MB id', HUGE_ID, undefined],
    ['a 10 MB label', 'alpha', HUGE_LABEL],
  ])('rejects a reference with %s with BUDGET_EXCEEDED and a short message', async (_, sessionId, label) => {
    const query = fakeQuery([ALPHA, { header: { id: HUGE_ID, createdAt: 1 }, events: [userMessage(1, 'x')] }]);
    const refs = createSessionReferences({ sessionQuery: query });
    const references = [label === undefined ? { sessionId } : { sessionId, label }];
    await expectAtomicFailure(asyncCall(() => refs.prepare(AGENT, content, references)), 'SESSION_REFERENCE_BUDGET_EXCEEDED', { agent: AGENT, content, references });
    expect(query.calls.readSurface).toHaveLength(1);
  });

  it('rejects a 10 MB self-reference with SELF_REFERENCE and a short message', async () => {
    const { refs } = setup();
    const agent = { id: HUGE_ID };
    const references = [{ sessionId: HUGE_ID }];
    await expectAtomicFailure(asyncCall(() => refs.prepare(agent, content, references)), 'SESSION_REFERENCE_SELF_REFERENCE', { agent, content, references });
  });

  it('accepts content blocks of any shape (permissive, SPEC §4) and copies them', async () => {
    const { refs } = setup();
    const odd = [null, 42, 'text', { type: 'text', text: 7 }, { type: 'image', data: 'x' }] as never;
    const result = await refs.prepare(AGENT, odd, [{ sessionId: 'alpha' }]);
    expect(result.content).toEqual(odd);
    expect(result.context!.metadata.references).toHaveLength(1);
  });
});

describe('bad input: referenceUserMessage (SPEC §9.5)', () => {
  const setup = () => {
    const query = fakeQuery([ALPHA, BETA]);
    return { query, refs: createSessionReferences({ sessionQuery: query }) };
  };
  const mention = formatSessionReferenceMention({ sessionId: 'alpha', label: 'A' });

  it.each(BAD_AGENTS)('rejects %s as the agent with INVALID_ARGUMENT, before reading', async (_, agent) => {
    const { query, refs } = setup();
    const input = message(`see ${mention}`);
    await expectAtomicFailure(asyncCall(() => refs.referenceUserMessage(agent as never, input)), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent, message: input });
    expect(query.calls.readSurface).toEqual([]);
  });

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'see @alpha'],
    ['a number', 42],
    ['a message without content', { id: 'm', role: 'user', source: { kind: 'user' } }],
    ['a message whose content is a string', { ...message('x'), content: `see ${mention}` }],
    ['a message whose content is null', { ...message('x'), content: null }],
    ['a message whose content is an object', { ...message('x'), content: { 0: { type: 'text', text: 'x' } } }],
    ['a message that already carries an envelope', { ...message(`see ${mention}`), envelope: { version: 1, display: [], contexts: [] } }],
  ])('rejects %s as the message with INVALID_ARGUMENT, before reading', async (_, input) => {
    const { query, refs } = setup();
    await expectAtomicFailure(asyncCall(() => refs.referenceUserMessage(AGENT, input as never)), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent: AGENT, message: input });
    expect(query.calls.readSurface).toEqual([]);
  });

  it('rejects a message that cannot be copied (a function inside) with INVALID_ARGUMENT naming it, before reading', async () => {
    // The message is read into a private copy first (SPEC §10.4), so nothing is read from the host.
    const { query, refs } = setup();
    const input = { ...message(`see ${mention}`), onSend: () => 1 };
    const error = await expectAtomicFailure(asyncCall(() => refs.referenceUserMessage(AGENT, input as never)), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent: AGENT, message: input });
    expect(error.message).toContain('message.onSend is a function');
    expect(query.calls.readSurface).toEqual([]);
  });

  it.each(REJECTED_TEXTS.filter(([name]) => !name.includes('10 MB')))('rejects a text block with %s with INVALID_REFERENCE, before reading', async (_, text) => {
    const { query, refs } = setup();
    const input: UserMessage = { ...message(`see ${mention}`), content: [{ type: 'text', text: `see ${mention}` }, { type: 'text', text }] };
    await expectAtomicFailure(asyncCall(() => refs.referenceUserMessage(AGENT, input)), 'SESSION_REFERENCE_INVALID_REFERENCE', { agent: AGENT, message: input });
    expect(query.calls.readSurface).toEqual([]);
  });

  it.each(BAD_SIGNALS)('rejects %s as the signal with INVALID_ARGUMENT', async (_, signal) => {
    const { refs } = setup();
    const input = message(`see ${mention}`);
    await expectAtomicFailure(asyncCall(() => refs.referenceUserMessage(AGENT, input, signal as never)), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent: AGENT, message: input });
  });

  it('skips content blocks that are not text blocks, whatever their shape (permissive, SPEC §4)', async () => {
    const { refs } = setup();
    const input = { ...message('x'), content: [null, 42, 'dsh-session:ImFiIh', { type: 'text', text: 7 }, { type: 'text', text: `see ${mention}` }] } as never as UserMessage;
    const before = structuredClone(input);
    const composed = await refs.referenceUserMessage(AGENT, input);
    expect(input).toEqual(before);
    expect(composed.envelope!.display).toEqual([null, 42, 'dsh-session:ImFiIh', { type: 'text', text: 7 }, { type: 'text', text: 'see @A' }]);
    expect(composed.content.slice(1)).toEqual(composed.envelope!.display);
  });

  it('handles a 10 MB text block around a mention', async () => {
    const { refs } = setup();
    const input = message(`${HUGE_LABEL}${mention}${HUGE_LABEL}`);
    const composed = await refs.referenceUserMessage(AGENT, input);
    expect((composed.envelope!.display[0] as { text: string }).text === `${HUGE_LABEL}@A${HUGE_LABEL}`).toBe(true);
  });
});

describe('bad input: composePromptMessage (SPEC §9.4)', () => {
  const context = textContext('## Referenced sessions\n\nCTX');

  it.each<[string, unknown]>([
    ['undefined', undefined],
    ['null', null],
    ['a string', 'hello'],
    ['a number', 42],
    ['an array of blocks', [{ type: 'text', text: 'x' }]],
    ['a message without content', { id: 'm', role: 'user', source: { kind: 'user' } }],
    ['a message whose content is a string', { ...message('x'), content: 'x' }],
    ['a message whose content is null', { ...message('x'), content: null }],
    ['a message that already carries an envelope', { ...message('x'), envelope: { version: 1, display: [], contexts: [] } }],
    ['a message with a function inside', { ...message('x'), onSend: () => 1 }],
  ])('rejects %s as the message with INVALID_ARGUMENT', async (_, input) => {
    await expectAtomicFailure(() => composePromptMessage(input as never, context), 'SESSION_REFERENCE_INVALID_ARGUMENT', { message: input, context });
  });

  it.each<[string, unknown]>([
    ['null', null],
    ['a number', 42],
    ['a string', 'context'],
    ['an empty object', {}],
    ['a context with empty content', { ...context, content: [] }],
    ['a context whose content is a string', { ...context, content: 'CTX' }],
    ['a context without text blocks', { ...context, content: [{ type: 'image', data: 'x' }] }],
    ['a context whose text is empty', { ...context, content: [{ type: 'text', text: '' }] }],
    ['a context whose text is not a string', { ...context, content: [{ type: 'text', text: 42 }] }],
    ['a context whose metadata cannot be copied', { ...context, metadata: { version: 1, references: [], hook: () => 1 } }],
  ])('rejects %s as the context with INVALID_ARGUMENT', async (_, badContext) => {
    const input = message('x');
    await expectAtomicFailure(() => composePromptMessage(input, badContext as never), 'SESSION_REFERENCE_INVALID_ARGUMENT', { message: input, context: badContext });
  });
});

describe('bad input: only user messages are composed (SPEC §9.4, §9.5)', () => {
  const context = textContext('## Referenced sessions\n\nCTX');
  const mention = formatSessionReferenceMention({ sessionId: 'alpha', label: 'A' });
  /** Any role but `'user'`: assistant, system, tool, look-alikes, and any other value or none. */
  const notUser = fc.oneof(
    fc.constantFrom<unknown>('assistant', 'system', 'tool', 'developer', 'User', 'USER', ' user', 'user\n', undefined, null, 0, true, ['user'], { role: 'user' }),
    fc.anything().filter((role) => role !== 'user'),
  );

  it('composePromptMessage and referenceUserMessage reject any other role with INVALID_ARGUMENT naming it, before reading', async () => {
    await fc.assert(
      fc.asyncProperty(notUser, async (role) => {
        const input = { ...message(`see ${mention}`), role } as never as UserMessage;
        const rendered = describeValue(role);
        for (const withContext of [context, undefined]) {
          const error = await expectAtomicFailure(() => composePromptMessage(input, withContext), 'SESSION_REFERENCE_INVALID_ARGUMENT', { message: input, context });
          expect(error.message).toContain("role must be 'user'");
          expect(error.message).toContain(rendered);
        }
        const query = fakeQuery([ALPHA, BETA]);
        const refs = createSessionReferences({ sessionQuery: query });
        const error = await expectAtomicFailure(() => refs.referenceUserMessage(AGENT, input), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent: AGENT, message: input });
        expect(error.message).toContain(rendered);
        expect(query.calls.readSurface).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it('an assistant message is never composed into a referenced prompt', async () => {
    const assistant = { id: 'a1', role: 'assistant', content: [{ type: 'text', text: `see ${mention}` }] };
    const error = await expectAtomicFailure(() => composePromptMessage(assistant as never, context), 'SESSION_REFERENCE_INVALID_ARGUMENT', { message: assistant });
    expect(error.message).toBe(`message role must be 'user' (only user messages are composed), got "assistant"`);
    const refs = createSessionReferences({ sessionQuery: fakeQuery([ALPHA, BETA]) });
    await expectAtomicFailure(() => refs.referenceUserMessage(AGENT, assistant as never), 'SESSION_REFERENCE_INVALID_ARGUMENT', { agent: AGENT, message: assistant });
    expect(composePromptMessage(message('x'), context).role).toBe('user');
  });
});

describe('describeValue of a long string (only its start is shown)', () => {
  it('shows what the JSON of the whole string starts with, for any string (fast-check prints its seed)', () => {
    const whole = (value: string) => {
      const text = JSON.stringify(value);
      return text.length > 80 ? `${text.slice(0, 80)}…` : text;
    };
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', '"', '\\', '\n', '\u0000', '😀', '\ud83d', '\ude00', 'é'), maxLength: 200 }), (value) => {
        expect(describeValue(value)).toBe(whole(value));
      }),
      { numRuns: 3000 },
    );
  });
});
