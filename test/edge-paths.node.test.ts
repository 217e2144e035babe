/**
 * `{path}` of `/sessions/{path}` (SPEC §17.4): one or more segments of printable characters, none
 * empty, `.` or `..`; the key never leaves the tenant's prefix. Properties over hostile paths
 * (dot segments plain and percent-encoded, backslashes, encoded slashes, control characters,
 * invalid percent-encoding, very long paths). Tenant prefixes (SPEC §17.3): none starts another,
 * and a key maps back to exactly one tenant. fast-check prints the seed of a failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tenantOfKey, tenantPrefix, tenantRoot, type EdgeEnv } from '../src/edge/env.js';
import { HttpError } from '../src/edge/http.js';
import { isSessionPath, MAX_KEY_BYTES, sessionKey } from '../src/edge/paths.js';

const PREFIX = 'tenants/acme/';

/** Pieces hostile paths are made of, raw or percent-encoded. */
const hostilePiece = fc.oneof(
  fc.constantFrom('..', '.', '%2e%2e', '%2E%2e', '.%2e', '%2e', '\\', '%5C', '%2F', '%2f', '/', '//', '%00', '%0A', '%7F', '%C2%85', '%E2%80%A8', '%FF', '%E0%80', '%', '%zz', 'a', 'é', '%C3%A9', 'session.v3.jsonl'),
  fc.string({ unit: 'grapheme', maxLength: 8 }).map(encodeURIComponent),
  fc.string({ maxLength: 8 }),
);
const hostilePath = fc.oneof(
  fc.array(hostilePiece, { minLength: 0, maxLength: 12 }).map((pieces) => pieces.join('')),
  fc.array(hostilePiece, { minLength: 1, maxLength: 8 }).map((pieces) => pieces.join('/')),
  fc.integer({ min: 900, max: 1200 }).map((length) => 'x'.repeat(length)),
);

function keyOrRefusal(encoded: string): string | HttpError {
  try {
    return sessionKey(encoded, PREFIX);
  } catch (error) {
    if (error instanceof HttpError) return error;
    throw error;
  }
}

describe('sessionKey: the tenant-relative key of /sessions/{path}', () => {
  it('refuses with 400 or gives a key of non-empty, non-dot, printable segments that stays inside the prefix', () => {
    fc.assert(
      fc.property(hostilePath, (encoded) => {
        const result = keyOrRefusal(encoded);
        if (result instanceof HttpError) {
          expect(result.status).toBe(400);
          expect(result.code).toBe('SESSION_REFERENCE_INVALID_ARGUMENT');
          return;
        }
        const segments = result.split('/');
        expect(segments.length).toBe(encoded.split('/').length);
        for (const segment of segments) {
          expect(segment).not.toBe('');
          expect(segment).not.toBe('.');
          expect(segment).not.toBe('..');
          expect(segment).not.toMatch(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Noncharacter_Code_Point}\\]/u);
          expect(segment).not.toMatch(/^\s|\s$/u);
        }
        expect(new TextEncoder().encode(PREFIX + result).length).toBeLessThanOrEqual(MAX_KEY_BYTES);
        expect(`/${result}/`).not.toContain('/../');
      }),
      { numRuns: 2000 },
    );
  });

  it('gives back exactly the segments a client percent-encoded', () => {
    const segment = fc
      .string({ unit: 'grapheme', minLength: 1, maxLength: 20 })
      .filter((text) => text !== '.' && text !== '..' && !/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Noncharacter_Code_Point}\\/]|^\s|\s$/u.test(text));
    fc.assert(
      fc.property(fc.array(segment, { minLength: 1, maxLength: 6 }), (segments) => {
        fc.pre(new TextEncoder().encode(PREFIX + segments.join('/')).length <= MAX_KEY_BYTES);
        expect(sessionKey(segments.map(encodeURIComponent).join('/'), PREFIX)).toBe(segments.join('/'));
      }),
      { numRuns: 1000 },
    );
  });

  it.each([
    ['', /one or more segments/],
    ['a//b', /segment 2 is empty/],
    ['a/', /segment 2 is empty/],
    ['..', /"\.\."/],
    ['a/%2e%2e/b', /segment 2 is "\.\."/],
    ['%2E', /segment 1 is "\."/],
    ['a%2Fb', /encoded "\/"/],
    ['a%5Cb', /"\\"/],
    ['a\\b', /"\\"/],
    ['a%00b', /control character/],
    ['%FF', /not valid percent-encoded UTF-8/],
    ['x'.repeat(1100), /too long/],
    // Printable characters only (issue 27): format characters, noncharacters, whitespace at either end.
    ['a%E2%80%AEb', /segment 1 \("a%E2%80%AEb"\) holds .*format character/],
    ['ok/a%E2%80%8Bb', /segment 2 \("a%E2%80%8Bb"\) holds/],
    ['a%EF%BB%BFb', /format character/],
    ['a%E2%81%A6b', /format character/],
    ['a%EF%BF%BFb', /noncharacter/],
    ['a%EF%B7%90b', /noncharacter/],
    ['%F4%8F%BF%BF', /noncharacter/],
    ['a%E2%80%A9b', /paragraph separator/],
    ['%20', /segment 1 \("%20"\) starts or ends with whitespace/],
    ['a%20', /starts or ends with whitespace/],
    ['%09a', /control/],
    ['a%E3%80%80', /starts or ends with whitespace/],
    ['%C2%A0a', /starts or ends with whitespace/],
  ])('refuses %j', (encoded, message) => {
    const result = keyOrRefusal(encoded);
    expect(result).toBeInstanceOf(HttpError);
    expect((result as HttpError).message).toMatch(message);
  });
});

describe('isSessionPath: the keys a {path} can name (the probe\'s F2)', () => {
  it('holds for every key sessionKey gives, and for no key it refuses once decoded', () => {
    fc.assert(
      fc.property(hostilePath, (encoded) => {
        const result = keyOrRefusal(encoded);
        if (typeof result === 'string') expect(isSessionPath(result)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });

  it.each(['../alice/a.jsonl', 'a/../b', './a', 'a//b', 'a/', '/a', '', 'a/\u0000b', 'a\\b', ' a', 'a/b\u202e'])('refuses %j', (key) => {
    expect(isSessionPath(key)).toBe(false);
  });
});

describe('printable segments (issue 27)', () => {
  it.each(['a%C2%A0b', 'a%20b', 'caf%C3%A9', '%F0%9F%9A%80', '%E4%BC%9A%E8%AF%9D'])('keeps %j (inner spaces and any printable letter or emoji)', (encoded) => {
    expect(sessionKey(encoded, PREFIX)).toBe(decodeURIComponent(encoded));
  });
});

describe('tenant prefixes (SPEC §17.3)', () => {
  const env = { TENANT_PREFIX: 'tenants/' } as EdgeEnv;
  const tenant = fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }), fc.constantFrom('a', 'a/b', 'a%2Fb', '..', '.', 'default', ' ', '\u0000'));

  it('no tenant\'s prefix starts another tenant\'s, and a key maps back to its tenant and path', () => {
    fc.assert(
      fc.property(tenant, tenant, fc.string({ minLength: 1, maxLength: 20 }), (a, b, path) => {
        const prefixA = tenantPrefix(env, a);
        const prefixB = tenantPrefix(env, b);
        if (a !== b) {
          expect(prefixA.startsWith(prefixB)).toBe(false);
          expect(prefixB.startsWith(prefixA)).toBe(false);
        }
        expect(tenantOfKey(env, prefixA + path)).toEqual({ tenant: a, prefix: prefixA, path });
      }),
      { numRuns: 1000 },
    );
  });

  it('gives the tenants "." and ".." folders that are no dot segment (the probe\'s F8)', () => {
    expect(tenantPrefix(env, '.')).toBe('tenants/%2E/');
    expect(tenantPrefix(env, '..')).toBe('tenants/%2E%2E/');
    expect(tenantPrefix(env, '...')).toBe('tenants/.../');
    expect(tenantOfKey(env, 'tenants/%2E/x.jsonl')).toEqual({ tenant: '.', prefix: 'tenants/%2E/', path: 'x.jsonl' });
    expect(tenantOfKey(env, 'tenants/%2E%2E/x.jsonl')).toEqual({ tenant: '..', prefix: 'tenants/%2E%2E/', path: 'x.jsonl' });
  });

  it.each(['tenants', 'a//', '../up/', './', '/', ' tenants/', 'tenants/\u202e/', 'tenants/ /', 't\u0000/'])('refuses TENANT_PREFIX %j as INVALID_CONFIG (the second probe\'s N5)', (prefix) => {
    expect(() => tenantRoot({ TENANT_PREFIX: prefix } as EdgeEnv)).toThrow(expect.objectContaining({ code: 'SESSION_REFERENCE_INVALID_CONFIG' }));
  });

  it.each([['', 'tenants/'], ['tenants/', 'tenants/'], ['prod/tenants/', 'prod/tenants/'], ['t%2F/', 't%2F/']])('takes TENANT_PREFIX %j as %j', (prefix, root) => {
    expect(tenantRoot({ TENANT_PREFIX: prefix } as EdgeEnv)).toBe(root);
  });

  it('ignores keys outside TENANT_PREFIX or without a tenant and a path', () => {
    for (const key of ['elsewhere/a/b.jsonl', 'tenants/', 'tenants/acme', 'tenants/acme/', 'tenants//x', 'tenants/%zz/x', 'tenants/a%2fb/x', 'tenants/./x', 'tenants/../x', 'tenants/%2e/x', 'tenants/.%2E/x']) {
      expect(tenantOfKey(env, key), key).toBeUndefined();
    }
  });
});
