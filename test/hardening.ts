/**
 * Shared pieces of the hardening suites (properties.test.ts, bad-input.test.ts,
 * faulty-host.test.ts): generators of hostile strings, an independent base64url encoder, and the
 * atomic-failure check every failing call goes through. Web APIs only: runs in every runtime.
 */
import fc from 'fast-check';
import { expect } from 'vitest';
import { SessionReferenceError, type SessionReferenceErrorCode } from '../src/index.js';

const encoder = new TextEncoder();

/** Raw UTF-8 bytes of `text` (a lone surrogate counts 3, as U+FFFD). */
export const utf8Bytes = (text: string): number => encoder.encode(text).length;

/** Fragments that stress the wire formats: mention syntax, tags, escapes, surrogates, controls. */
export const HOSTILE_FRAGMENTS = [
  '\\',
  '[',
  ']',
  '(',
  ')',
  '@[',
  '](',
  '](dsh-session:',
  'dsh-session:',
  '\n',
  '\r\n',
  '<',
  '>',
  '</referenced-sessions>',
  '<referenced-sessions>',
  '\\u003c',
  '\u003c',
  '## My request:',
  '\n\n## My request:\n\n',
  '"',
  '\u2028',
  '\u2029',
  '\ud800',
  '\udfff',
  '\udc00\ud83c',
  '🎉',
  'é',
  '日本',
  '\u0000',
  '\u001f',
  '\t',
  ' ',
  '\ufeff',
] as const;

/**
 * One code point of the full Unicode range but a surrogate: what `fc.string({ unit: 'binary' })`
 * draws, without the table of all 1.1 million code points fast-check builds for that unit the
 * first time in each process (17 s on a busy 2-core machine, in every test file that used it).
 */
export const anyCodePoint: fc.Arbitrary<string> = fc
  .integer({ min: 0, max: 0x10ffff - 0x800 })
  .map((n) => String.fromCodePoint(n < 0xd800 ? n : n + 0x800));

/**
 * One "character" of a generated string: any UTF-16 code unit (so lone surrogates of both
 * kinds), any code point of the full Unicode range, or a hostile fragment.
 */
export const anyChar: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)), weight: 3 },
  { arbitrary: anyCodePoint, weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 }), weight: 3 },
  { arbitrary: fc.constantFrom(...HOSTILE_FRAGMENTS), weight: 3 },
);

/** Strings over {@link anyChar}: full Unicode including lone surrogates and hostile fragments. */
export const anyString = (maxLength = 24): fc.Arbitrary<string> => fc.string({ unit: anyChar, maxLength });

export const BASE64URL_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

/** Base64url without padding of `bytes`, written independently of src/base64url.ts. */
export function base64url(bytes: Uint8Array): string {
  let out = '';
  let acc = 0;
  let bits = 0;
  for (const byte of bytes) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out += BASE64URL_ALPHABET[(acc >> bits) & 63];
    }
    acc &= (1 << bits) - 1;
  }
  if (bits > 0) out += BASE64URL_ALPHABET[(acc << (6 - bits)) & 63];
  return out;
}

/** `dsh-session:` + base64url of the UTF-8 of `text` (any text, not necessarily JSON). */
export const uriOfText = (text: string): string => `dsh-session:${base64url(encoder.encode(text))}`;

/**
 * A copy of `value` to compare it with after a call: `structuredClone` when it can be cloned;
 * otherwise (a function or symbol somewhere inside) a deep copy of its plain objects and arrays
 * that keeps every other value — functions, symbols, class instances — as the same reference, so
 * a change anywhere in the plain data still shows. Values that cannot even be read (throwing
 * getters, revoked proxies) are kept as they are: they cannot be modified either.
 */
function snapshot(value: unknown): unknown {
  try {
    return structuredClone(value);
  } catch {
    return plainCopy(value, new Map());
  }
}

function plainCopy(value: unknown, seen: Map<object, unknown>): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (seen.has(value)) return seen.get(value);
  try {
    const proto: unknown = Object.getPrototypeOf(value);
    if (Array.isArray(value)) {
      const copy: unknown[] = [];
      seen.set(value, copy);
      for (let i = 0; i < value.length; i++) copy[i] = plainCopy(value[i], seen);
      return copy;
    }
    if (proto !== Object.prototype && proto !== null) return value;
    const copy: Record<PropertyKey, unknown> = {};
    seen.set(value, copy);
    for (const key of Reflect.ownKeys(value)) copy[key] = plainCopy((value as Record<PropertyKey, unknown>)[key], seen);
    return copy;
  } catch {
    return value;
  }
}

/** A cause expectation: the exact value (`toBe`), or `NO_CAUSE` when the error must carry none. */
export const NO_CAUSE: unique symbol = Symbol('no cause');

/**
 * Runs one public call that must fail, and checks everything SPEC §7.5/§10 promise about a
 * failure: a `SessionReferenceError` (never another type) with `code`; the cause kept (`toBe`)
 * when there is one; no partial result (the call rejects, the error carries no context); and
 * every caller input deep-equal to a copy taken before the call (see `snapshot`).
 */
export async function expectAtomicFailure(
  run: () => unknown,
  code: SessionReferenceErrorCode,
  inputs: Record<string, unknown>,
  cause: unknown = undefined,
): Promise<SessionReferenceError> {
  const before = Object.fromEntries(Object.entries(inputs).map(([key, value]) => [key, snapshot(value)]));
  let thrown: unknown;
  let result: unknown;
  let resolved = false;
  try {
    result = await run();
    resolved = true;
  } catch (error) {
    thrown = error;
  }
  expect(resolved, `expected ${code}, but the call resolved to ${safeJson(result)}`).toBe(false);
  expect(thrown, `expected a SessionReferenceError ${code}, got ${String(thrown)}`).toBeInstanceOf(SessionReferenceError);
  const error = thrown as SessionReferenceError;
  expect(error.code, error.message).toBe(code);
  expect(error.message.length, 'error messages stay short').toBeLessThan(600);
  expect(Object.keys(error)).not.toContain('context');
  if (cause === NO_CAUSE) expect('cause' in error ? error.cause : undefined).toBeUndefined();
  else if (cause !== undefined) expect(error.cause).toBe(cause);
  for (const [key, value] of Object.entries(inputs)) expect(value, `input ${key} was modified`).toEqual(before[key]);
  return error;
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value)?.slice(0, 200) ?? String(value);
  } catch {
    return String(value);
  }
}

/** The text between `<referenced-sessions>\n` and `\n</referenced-sessions>` of a context text. */
export function blockInside(text: string): string {
  const open = '<referenced-sessions>\n';
  const start = text.indexOf(open);
  const end = text.lastIndexOf('\n</referenced-sessions>');
  expect(start).toBeGreaterThanOrEqual(0);
  expect(end).toBeGreaterThan(start);
  return text.slice(start + open.length, end);
}

/** Occurrences of `needle` in `text` (non-overlapping). */
export function count(text: string, needle: string): number {
  return text.split(needle).length - 1;
}

/** Tag-safe JSON as SPEC §9.3 describes it, written independently of src/render.ts. */
export const tagSafe = (value: unknown): string => JSON.stringify(value).split('<').join('\\u003c');

/** An object whose property `name` throws `error` when read (enumerable: `structuredClone` reads it too). */
export function throwingGetter(name: string, error: unknown = new TypeError(`no ${name} for you`), base: object = {}): object {
  return Object.defineProperty({ ...base }, name, {
    enumerable: true,
    get() {
      throw error;
    },
  });
}

/** A revoked proxy: every operation on it throws a TypeError. */
export function revokedProxy(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}
