import { describe, expect, it } from 'vitest';
import {
  createSessionReferences,
  DEFAULT_SESSION_REFERENCE_CONFIG,
  isSessionReferenceError,
  SESSION_REFERENCE_ERROR_CODES,
  SessionReferenceError,
} from '../src/index.js';
import { expectCode } from './helpers.js';
import { fakeQuery } from './sessions.js';

describe('SessionReferenceError (SPEC §10)', () => {
  it('carries name, code, message and cause, and serializes to { name, code, message }', () => {
    const cause = new Error('inner');
    const error = new SessionReferenceError('SESSION_REFERENCE_READ_FAILED', 'read failed', { cause });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe('SessionReferenceError');
    expect(error.cause).toBe(cause);
    expect(JSON.parse(JSON.stringify(error))).toEqual({ name: 'SessionReferenceError', code: 'SESSION_REFERENCE_READ_FAILED', message: 'read failed' });
  });

  it('recognizes instances and their plain-object forms, after structuredClone too', () => {
    const error = new SessionReferenceError('SESSION_REFERENCE_TOO_MANY', 'too many');
    expect(isSessionReferenceError(error)).toBe(true);
    expect(isSessionReferenceError(error.toJSON())).toBe(true);
    expect(isSessionReferenceError(structuredClone(error.toJSON()))).toBe(true);
    expect(isSessionReferenceError(JSON.parse(JSON.stringify(error)))).toBe(true);
    for (const value of [null, undefined, 'x', new Error('x'), { name: 'SessionReferenceError', code: 'NOPE', message: 'x' }, { name: 'SessionReferenceError', code: 'SESSION_REFERENCE_TOO_MANY' }]) {
      expect(isSessionReferenceError(value)).toBe(false);
    }
  });

  it('lists the ten stable codes', () => {
    expect(SESSION_REFERENCE_ERROR_CODES).toHaveLength(10);
  });
});

describe('createSessionReferences config (SPEC §5)', () => {
  const sessionQuery = fakeQuery([]);

  it('fills defaults', () => {
    expect(DEFAULT_SESSION_REFERENCE_CONFIG).toEqual({ maxReferences: 3, candidateLimit: 50, maxReferenceBytes: 65536, matchTitles: false, candidateMatch: 'substring', maxIndexBytes: 262144 });
    expect(createSessionReferences({ sessionQuery, config: { matchTitles: true } }).config.matchTitles).toBe(true);
    expect(createSessionReferences({ sessionQuery }).config).toEqual(DEFAULT_SESSION_REFERENCE_CONFIG);
    expect(createSessionReferences({ sessionQuery, config: { maxReferences: 1, maxReferenceBytes: undefined } }).config).toEqual({ ...DEFAULT_SESSION_REFERENCE_CONFIG, maxReferences: 1 });
  });

  it.each<[string, unknown, string]>([
    ['maxReferences 0', { maxReferences: 0 }, 'maxReferences'],
    ['maxReferences 4', { maxReferences: 4 }, 'maxReferences'],
    ['maxReferences 1.5', { maxReferences: 1.5 }, 'maxReferences'],
    ['candidateLimit NaN', { candidateLimit: NaN }, 'candidateLimit'],
    ['candidateLimit -1', { candidateLimit: -1 }, 'candidateLimit'],
    ['candidateLimit 2^53', { candidateLimit: 2 ** 53 }, 'candidateLimit'],
    ['maxReferenceBytes "100"', { maxReferenceBytes: '100' }, 'maxReferenceBytes'],
    ['maxReferenceBytes Infinity', { maxReferenceBytes: Infinity }, 'maxReferenceBytes'],
    ['matchTitles "true"', { matchTitles: 'true' }, 'matchTitles'],
    ['matchTitles 1', { matchTitles: 1 }, 'matchTitles'],
    ['matchTitles null', { matchTitles: null }, 'matchTitles'],
    ['candidateMatch "word"', { candidateMatch: 'word' }, 'candidateMatch'],
    ['candidateMatch "Words"', { candidateMatch: 'Words' }, 'candidateMatch'],
    ['candidateMatch true', { candidateMatch: true }, 'candidateMatch'],
    ['candidateMatch null', { candidateMatch: null }, 'candidateMatch'],
    ['an unknown key', { maxBytes: 5 }, 'maxBytes'],
    ['a non-object config', 'big', 'config'],
  ])('rejects %s naming the key', (_, config, key) => {
    const error = expectCode(() => createSessionReferences({ sessionQuery, config: config as never }), 'SESSION_REFERENCE_INVALID_CONFIG');
    expect(error.message).toContain(key);
  });

  it.each([undefined, null, {}, { sessionQuery: null }, { sessionQuery: {} }, { sessionQuery: { listSessions() {} } }, { sessionQuery, extra: 1 }])(
    'rejects the options %j',
    (options) => {
      const error = expectCode(() => createSessionReferences(options as never), 'SESSION_REFERENCE_INVALID_CONFIG');
      expect(error.message).toMatch(/sessionQuery|option/);
    },
  );
});
