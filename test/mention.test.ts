import { describe, expect, it } from 'vitest';
import {
  encodeSessionReferenceUri as uri,
  formatSessionReferenceMention as format,
  parseSessionReferenceText as parse,
  scanSessionReferenceText as scan,
} from '../src/index.js';
import { revokedProxy, throwingGetter } from './hardening.js';
import { expectCode } from './helpers.js';

const A = uri('session-a');
const B = uri('日本 🎉');

describe('formatSessionReferenceMention (SPEC §3.1)', () => {
  it.each([
    [{ sessionId: 'session-434' }, '@[session-434](dsh-session:InNlc3Npb24tNDM0Ig)'],
    [{ sessionId: 'session-434', label: 'Schema migration' }, '@[Schema migration](dsh-session:InNlc3Npb24tNDM0Ig)'],
    [{ sessionId: 'session-434', label: 'a\\b[c]d' }, '@[a\\\\b\\[c\\]d](dsh-session:InNlc3Npb24tNDM0Ig)'],
    [{ sessionId: 'x]y', label: undefined }, `@[x\\]y](${uri('x]y')})`],
    [{ sessionId: 'session-434', label: '' }, '@[](dsh-session:InNlc3Npb24tNDM0Ig)'],
    [{ sessionId: 'session-434', label: 'two\nlines (and) @[nested]' }, '@[two\nlines (and) @\\[nested\\]](dsh-session:InNlc3Npb24tNDM0Ig)'],
  ])('formats %j', (input, expected) => {
    expect(format(input)).toBe(expected);
  });

  it.each([null, 'session-434', 42, {}, { sessionId: 42 }, { sessionId: 'a', label: 42 }, { sessionId: 'a', label: null }])(
    'rejects %j',
    (input) => {
      expectCode(() => format(input as never), 'SESSION_REFERENCE_INVALID_REFERENCE');
    },
  );

  it('turns a throwing getter or a revoked proxy into INVALID_REFERENCE with the cause kept (SPEC §10)', () => {
    const cause = new TypeError('no sessionId for you');
    expect(expectCode(() => format(throwingGetter('sessionId', cause) as never), 'SESSION_REFERENCE_INVALID_REFERENCE').cause).toBe(cause);
    expect(expectCode(() => format(revokedProxy() as never), 'SESSION_REFERENCE_INVALID_REFERENCE').cause).toBeInstanceOf(TypeError);
  });
});

describe('parseSessionReferenceText (SPEC §3.2, §3.3)', () => {
  it.each<[string, string, Array<{ sessionId: string; label: string }>]>([
    ['no mentions at all', 'no mentions at all', []],
    [`look at @[Schema migration](${A}) please`, 'look at @Schema migration please', [{ sessionId: 'session-a', label: 'Schema migration' }]],
    [`bare ${A} here`, 'bare @session-a here', [{ sessionId: 'session-a', label: 'session-a' }]],
    [`${A}`, '@session-a', [{ sessionId: 'session-a', label: 'session-a' }]],
    [`(${A})`, '(@session-a)', [{ sessionId: 'session-a', label: 'session-a' }]],
    [`@[x](${A} oops)`, '@[x](@session-a oops)', [{ sessionId: 'session-a', label: 'session-a' }]],
    [`@[a\\]b\\\\](${A})`, '@a]b\\', [{ sessionId: 'session-a', label: 'a]b\\' }]],
    [`@[line one\nline two](${B})`, '@line one\nline two', [{ sessionId: '日本 🎉', label: 'line one\nline two' }]],
    [`@[a @[b](${A})`, '@a @[b', [{ sessionId: 'session-a', label: 'a @[b' }]],
    [`@[x](${A})@[y](${B})${A}`, '@x@y@session-a', [
      { sessionId: 'session-a', label: 'x' },
      { sessionId: '日本 🎉', label: 'y' },
      { sessionId: 'session-a', label: 'session-a' },
    ]],
    [`@[dup](${A}) and @[dup again](${A})`, '@dup and @dup again', [
      { sessionId: 'session-a', label: 'dup' },
      { sessionId: 'session-a', label: 'dup again' },
    ]],
    [`@[x](${A}`, `@[x](@session-a`, [{ sessionId: 'session-a', label: 'session-a' }]],
    [`@[x]\n(${A})`, `@[x]\n(@session-a)`, [{ sessionId: 'session-a', label: 'session-a' }]],
    ['dsh-session:', 'dsh-session:', []],
    ['dsh-session:...', 'dsh-session:...', []],
    ['(dsh-session:)', '(dsh-session:)', []],
    ['see dsh-session: later', 'see dsh-session: later', []],
    [`x${A}`, `x${A}`, []],
    [`9${A}`, `9${A}`, []],
    [`+${A} -${A} .${A}`, `+${A} -${A} .${A}`, []],
    [`é${A}`, 'é@session-a', [{ sessionId: 'session-a', label: 'session-a' }]],
    [`_${A}`, '_@session-a', [{ sessionId: 'session-a', label: 'session-a' }]],
    [`/${A}`, '/@session-a', [{ sessionId: 'session-a', label: 'session-a' }]],
    [`${A}.`, '@session-a.', [{ sessionId: 'session-a', label: 'session-a' }]],
    ['@[unterminated', '@[unterminated', []],
    ['@[a](https://example.com)', '@[a](https://example.com)', []],
    ['trailing backslash @[a\\', 'trailing backslash @[a\\', []],
    // A label with no `]` ahead runs to the end whatever its backslashes (not searched for then).
    ['@[a\\\\b @[c\\', '@[a\\\\b @[c\\', []],
    // Schemes that start no bare URI (found by `indexOf`, then passed over) before one that does.
    [`xdsh-session:abc dsh-session: (dsh-session:) ${A}`, 'xdsh-session:abc dsh-session: (dsh-session:) @session-a', [{ sessionId: 'session-a', label: 'session-a' }]],
    [`@[x](${A}) xdsh-session:abc ${A}`, '@x xdsh-session:abc @session-a', [
      { sessionId: 'session-a', label: 'x' },
      { sessionId: 'session-a', label: 'session-a' },
    ]],
    // An even run of backslashes before a `]` ends the label; an odd run escapes it, so the second
    // label runs to the end and the URI inside it is bare.
    [String.raw`@[a\\] @[b\](` + `${A})`, String.raw`@[a\\] @[b\](@session-a)`, [{ sessionId: 'session-a', label: 'session-a' }]],
    // No `)` after a payload start: that attempt and every later one fail (decided by one search
    // for `)`, the payload not walked), and the bare URIs inside still count.
    [`) @[x](${A}`, ') @[x](@session-a', [{ sessionId: 'session-a', label: 'session-a' }]],
    ['@[x](dsh-session:', '@[x](dsh-session:', []],
    ['@[x](dsh-session:..', '@[x](dsh-session:..', []],
    ['@[x](dsh-session: )', '@[x](dsh-session: )', []],
    [`@[a @[b](${A}`, '@[a @[b](@session-a', [{ sessionId: 'session-a', label: 'session-a' }]],
    [`@[a](${A}@[b](${A}`, '@[a](@session-a@[b](@session-a', [
      { sessionId: 'session-a', label: 'session-a' },
      { sessionId: 'session-a', label: 'session-a' },
    ]],
    [String.raw`@[a\\](` + A, String.raw`@[a\\](@session-a`, [{ sessionId: 'session-a', label: 'session-a' }]],
    // The `)` found for one attempt serves the next: the first payload stops at whitespace first.
    [`@[a](dsh-session:.. @[b](${A})`, '@[a](dsh-session:.. @b', [{ sessionId: 'session-a', label: 'b' }]],
    // A `)` taken by a match leaves none for the next attempt.
    [`@[x](${A}) @[y](${A}`, '@x @[y](@session-a', [
      { sessionId: 'session-a', label: 'x' },
      { sessionId: 'session-a', label: 'session-a' },
    ]],
  ])('parses %j', (input, text, references) => {
    expect(parse(input)).toEqual({ text, references });
  });

  it.each([
    ['an explicit mention with an empty payload', '@[x](dsh-session:)'],
    ['an explicit mention with a non-canonical payload', '@[x](dsh-session:ImFiIh)'],
    ['an explicit mention with punctuation in the payload', '@[x](dsh-session:...)'],
    ['an explicit mention with padding', '@[x](dsh-session:ImFiIg==)'],
    ['a bare base64url-shaped candidate that is not canonical', 'see dsh-session:InNlc3Npb24tNDM0 now'],
    ['a bare candidate with trailing bits', 'dsh-session:ImFiIh'],
    ['a repeated scheme (the second one is a bare payload)', 'dsh-session:dsh-session:'],
    ['an empty payload closed by the `)` that ended the search of an earlier attempt', '@[a](dsh-session:.. @[b](dsh-session:)'],
  ])('rejects %s with SESSION_REFERENCE_INVALID_REFERENCE naming the URI', (_, input) => {
    const error = expectCode(() => parse(input), 'SESSION_REFERENCE_INVALID_REFERENCE');
    expect(error.message).toContain('dsh-session:');
  });

  it('rejects the whole parse when any mention is malformed, even after valid ones', () => {
    expectCode(() => parse(`@[ok](${A}) then @[bad](dsh-session:e30)`), 'SESSION_REFERENCE_INVALID_REFERENCE');
  });

  it.each([null, 42, ['text']])('rejects the non-string input %j', (input) => {
    expectCode(() => parse(input as never), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });
});

describe('round trip (SPEC §3.5)', () => {
  it.each([
    ['session-434', undefined],
    ['session-434', 'Schema migration'],
    ['', ''],
    ['\ud800 lone', 'label with \\ [ ] and\nnewline and @[ and ](dsh-session:x)'],
    ['id)with(parens', 'trailing backslash \\'],
    ['🎉', '\\\\\\]'],
  ])('format → parse gives @label and the exact reference for %j / %j', (sessionId, label) => {
    const L = label ?? sessionId;
    expect(parse(format({ sessionId, label }))).toEqual({ text: '@' + L, references: [{ sessionId, label: L }] });
  });
});

describe('scanSessionReferenceText (SPEC §3.6)', () => {
  it('reports every match with UTF-16 offsets, malformed ones with their error, without throwing', () => {
    const text = `🎉 @[ok](${A}) @[bad](dsh-session:e30) ${B} dsh-session:ImFiIh!`;
    const result = scan(text);
    const bad = '@[bad](dsh-session:e30)';
    expect(result.text).toBe(`🎉 @ok ${bad} @日本 🎉 dsh-session:ImFiIh!`);
    const [ok, mentionError, bare, bareError] = result.tokens;
    expect(result.tokens).toHaveLength(4);
    expect(ok).toMatchObject({ kind: 'mention', start: 3, sessionId: 'session-a', label: 'ok' });
    expect(text.slice(ok!.start, ok!.end)).toBe(`@[ok](${A})`);
    expect(mentionError).toMatchObject({ kind: 'mention', label: 'bad' });
    expect(mentionError!.sessionId).toBeUndefined();
    expect(mentionError!.error?.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
    expect(text.slice(mentionError!.start, mentionError!.end)).toBe(bad);
    expect(bare).toMatchObject({ kind: 'bare', sessionId: '日本 🎉', label: '日本 🎉' });
    expect(text.slice(bare!.start, bare!.end)).toBe(B);
    expect(bareError).toMatchObject({ kind: 'bare' });
    expect(bareError!.error?.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
    expect(text.slice(bareError!.start, bareError!.end)).toBe('dsh-session:ImFiIh');
  });

  it('parse throws exactly the first error of scan', () => {
    const text = `@[one](dsh-session:e30) @[two](dsh-session:)`;
    const first = scan(text).tokens[0]!.error!;
    expect(() => parse(text)).toThrow(first.message);
  });

  it('returns the input itself when nothing matches', () => {
    const text = 'plain @[ text dsh-session: with ( parens )';
    expect(scan(text)).toEqual({ text, tokens: [] });
  });
});

describe('linear scanning on adversarial input (SPEC §3.4)', () => {
  it.each([
    ['unterminated @[', '@['.repeat(200_000)],
    ['unterminated mentions with the scheme', '@[a](dsh-session:'.repeat(50_000)],
    ['unterminated mentions with the scheme, then whitespace and a `)`', '@[a](dsh-session:'.repeat(50_000) + ' )'],
    ['backslash runs in labels', ('@[' + '\\'.repeat(1000)).repeat(200)],
    ['scheme repetitions', 'dsh-session:'.repeat(50_000) + ' '],
    ['scheme repetitions with a space', 'dsh-session: '.repeat(50_000)],
    ['one huge label', `@[${'x'.repeat(1_000_000)}](${A})`],
  ])('%s finishes', (_, text) => {
    const result = scan(text);
    expect(result.text.length).toBeGreaterThan(0);
  });
});
