/**
 * Acceptance test of the edge service (SPEC §17): the three-line Worker of examples/edge-worker is
 * built by a plain `wrangler deploy --dry-run --outdir` (wrangler's own bundling of
 * `dsh-session-reference/edge`, as an app gets it), and that output runs in Miniflare (workerd)
 * with a real R2 bucket, the SQLite-backed `SessionCatalog` Durable Object and a queue. Tokens are
 * signed with real keys: an HS256 secret, and an ES256 key pair served as a JWKS over loopback.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from 'jose';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionCandidate, SessionReferenceMetadata, UserMessage } from '../src/index.js';
import { formatSessionReferenceMention } from '../src/index.js';
import { sessionLogText, zstdLog } from './fixtures/object-store.js';
import * as SAMPLE from './sample-ids.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const EXAMPLE = join(ROOT, 'examples/edge-worker');
const SAMPLES = join(ROOT, 'samples/store');
const COMPATIBILITY_DATE = '2026-04-01';
const SECRET = 'test-secret-for-hs256-that-is-long-enough-0123456789';
const ISSUER = 'https://issuer.test';
const AUDIENCE = 'dsh-edge-test';
const QUEUE = 'dsh-sessions-events';

const DUMEN_ID = SAMPLE.REAL;
const DUMEN_TITLE = 'Bu projeyi gemini ile geliştiriyorduk';
/** v2 beside v3 in the sample store. */
const LEDGER_ID = SAMPLE.VERSIONS;
/** A zstd log of the sample store. */
const ZSTD_ID = SAMPLE.LARGE;
const TARGET_ID = SAMPLE.TARGET;

const sample = (path: string) => new Uint8Array(readFileSync(join(SAMPLES, path)));
const DUMEN = sample(`77-Dumen/${DUMEN_ID}/session.v3.jsonl`);
const TARGET = sample(`77-Dumen/${TARGET_ID}/session.v3.jsonl`);
const LEDGER_V2 = sample(`ledger-service/${LEDGER_ID}/session.v2.jsonl`);
const LEDGER_V3 = sample(`ledger-service/${LEDGER_ID}/session.v3.jsonl`);
const LEDGER_ZSTD = sample(`ledger-service/${ZSTD_ID}/session.v3.jsonl.zstd`);
const FIXTURE_V3 = new Uint8Array(readFileSync('/work/shared/fixtures/dsh-v3/dumen-prefix/session.v3.jsonl'));

let outDir: string;
let jwks: Server;
let jwksUrl: string;
let es256: { privateKey: CryptoKey; publicKey: CryptoKey };
let rs256: { privateKey: CryptoKey; publicKey: CryptoKey };
const miniflares: Miniflare[] = [];

interface ErrorBody {
  code: string;
  message: string;
}

beforeAll(async () => {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-edge.mjs'), '--bundle-only'], { cwd: ROOT, stdio: 'pipe' });
  outDir = mkdtempSync(join(tmpdir(), 'dsh-edge-'));
  execFileSync(join(ROOT, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', outDir], {
    cwd: EXAMPLE,
    stdio: 'pipe',
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
  });
  es256 = await generateKeyPair('ES256', { extractable: true });
  rs256 = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(es256.publicKey)), kid: 'k1', alg: 'ES256', use: 'sig' };
  const rsaJwk = { ...(await exportJWK(rs256.publicKey)), kid: 'access-1', alg: 'RS256', use: 'sig' };
  jwks = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify({ keys: [jwk, rsaJwk] }));
  });
  await new Promise<void>((done) => jwks.listen(0, '127.0.0.1', done));
  const address = jwks.address();
  jwksUrl = `http://127.0.0.1:${typeof address === 'object' && address !== null ? address.port : 0}/certs`;
});

afterAll(async () => {
  await Promise.all(miniflares.map((mf) => mf.dispose()));
  await new Promise((done) => jwks?.close(done));
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

/** The built Worker in Miniflare, with `vars` as its `[vars]`. */
function service(vars: Record<string, string> = { AUTH_JWT_SECRET: SECRET, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE }, persist?: string, bucket = true, useSQLite = true): Miniflare {
  const mf = new Miniflare({
    ...(persist !== undefined && { defaultPersistRoot: persist }),
    modules: true,
    scriptPath: join(outDir, 'worker.js'),
    modulesRoot: outDir,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: ['enable_request_signal'],
    r2Buckets: bucket ? ['SESSIONS'] : [],
    durableObjects: { CATALOG: { className: 'SessionCatalog', useSQLite } },
    queueConsumers: { [QUEUE]: { maxBatchSize: 100 } },
    bindings: vars,
  });
  miniflares.push(mf);
  return mf;
}

async function hs256(claims: JWTPayload, configure: (jwt: SignJWT) => SignJWT = (jwt) => jwt.setExpirationTime('5m'), secret = SECRET): Promise<string> {
  const jwt = new SignJWT(claims).setProtectedHeader({ alg: 'HS256' }).setIssuedAt().setIssuer(ISSUER).setAudience(AUDIENCE);
  return configure(jwt).sign(new TextEncoder().encode(secret));
}

function b64url(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url');
}

/** A client of one service as one tenant. */
function client(mf: Miniflare, token: string | undefined) {
  const call = (path: string, init: RequestInit = {}) =>
    mf.dispatchFetch(`https://edge.test${path}`, {
      ...init,
      headers: { ...(token === undefined ? {} : { authorization: `Bearer ${token}` }), ...(init.headers as Record<string, string>) },
    } as never) as unknown as Promise<Response>;
  return {
    call,
    // Miniflare's dispatchFetch streams a byte body without Content-Length (an HTTP client sends it).
    put: (path: string, body: Uint8Array | string) =>
      call(`/sessions/${path}`, { method: 'PUT', body, headers: { 'content-length': String(typeof body === 'string' ? Buffer.byteLength(body) : body.length) } }),
    candidates: async (query: string) => {
      const response = await call(`/candidates?${query}`);
      return { status: response.status, body: (await response.json()) as SessionCandidate[] & ErrorBody };
    },
    /** The session ids the tenant's catalog offers an agent it does not hold (every winner, at most 1000). */
    offered: async () => {
      const response = await call('/candidates?as=an-agent-not-uploaded&limit=1000');
      expect(response.status).toBe(200);
      return ((await response.json()) as SessionCandidate[]).map((row) => row.sessionId);
    },
    prepare: async (as: string, text: string) => {
      const response = await call('/prepare', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ as, text }) });
      return { status: response.status, body: (await response.json()) as { message: UserMessage; metadata: SessionReferenceMetadata } & ErrorBody };
    },
  };
}

function md5(bytes: Uint8Array): string {
  return createHash('md5').update(bytes).digest('hex');
}

async function expectUnauthenticated(response: Response, message: RegExp): Promise<void> {
  expect(response.status).toBe(401);
  expect(response.headers.get('www-authenticate')).toMatch(/^Bearer\b/);
  const body = (await response.json()) as ErrorBody;
  expect(body.code).toBe('UNAUTHENTICATED');
  expect(body.message).toMatch(message);
}

describe('wrangler deploy --dry-run of the three-line Worker', () => {
  it('is exactly the three lines of SPEC §17.2, with R2, Durable Object, migration, queue and cron in wrangler.toml', () => {
    expect(readFileSync(join(EXAMPLE, 'src/worker.ts'), 'utf8').trim().split('\n')).toEqual([
      "export { SessionCatalog } from 'dsh-session-reference/edge';",
      "import { createEdgeWorker } from 'dsh-session-reference/edge';",
      'export default createEdgeWorker();',
    ]);
    const config = readFileSync(join(EXAMPLE, 'wrangler.toml'), 'utf8');
    expect(config).toMatch(/binding = "SESSIONS"/);
    expect(config).toMatch(/name = "CATALOG"\s+class_name = "SessionCatalog"/);
    expect(config).toMatch(/new_sqlite_classes = \["SessionCatalog"\]/);
    expect(config).toMatch(/\[\[queues\.consumers\]\]\s+queue = "dsh-sessions-events"/);
    expect(config).toMatch(/crons = \[/);
    const settings = config.replace(/#.*$/gm, '');
    expect(settings).not.toMatch(/nodejs_compat|no_bundle|\[\[rules\]\]/);
  });

  it('uploads libzstd as a .wasm module and no JavaScript form of libzstd or SQLite; gzip at most 800 KiB', () => {
    const files = readdirSync(outDir).filter((file) => file.endsWith('.js') || file.endsWith('.wasm'));
    expect(files.filter((file) => file.endsWith('.wasm'))).toEqual([expect.stringMatching(/libzstd\.wasm$/)]);
    const code = readFileSync(join(outDir, 'worker.js'), 'utf8');
    expect(code).toMatch(/from\s*"\.\/[0-9a-f]+-libzstd\.wasm"/);
    // No base64 copy of either module, and no slice of libzstd's wasm2js form or of SQLite's JavaScript.
    expect(code).not.toMatch(/[A-Za-z0-9_-]{20000}/);
    for (const source of ['src/store/libzstd-js.ts', 'node_modules/@sqlite.org/sqlite-wasm/dist/index.mjs']) {
      const text = readFileSync(join(ROOT, source), 'utf8');
      for (const at of [0.3, 0.5, 0.7]) expect(code.includes(text.slice(Math.floor(text.length * at), Math.floor(text.length * at) + 120)), source).toBe(false);
    }
    const gzip = files.reduce((sum, file) => sum + gzipSync(readFileSync(join(outDir, file))).length, 0);
    expect(gzip).toBeLessThanOrEqual(800 * 1024);
  });
});

describe('authentication (SPEC §17.3)', () => {
  let mf: Miniflare;
  beforeAll(() => {
    mf = service({ AUTH_JWT_SECRET: SECRET, AUTH_JWKS_URL: jwksUrl, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE });
  });

  it('refuses a missing, garbage, expired, not-yet-valid, wrongly signed or alg:none token with 401 and WWW-Authenticate: Bearer', async () => {
    await expectUnauthenticated(await client(mf, undefined).call('/candidates?as=x'), /no bearer token/);
    await expectUnauthenticated(await client(mf, 'garbage').call('/candidates?as=x'), /not a JWT/);
    await expectUnauthenticated(await client(mf, 'a.b.c').call('/candidates?as=x'), /not a JWT|refused/);
    await expectUnauthenticated(await client(mf, await hs256({ sub: 'acme' }, (jwt) => jwt.setExpirationTime(Math.floor(Date.now() / 1000) - 60))).call('/candidates?as=x'), /expired/);
    await expectUnauthenticated(await client(mf, await hs256({ sub: 'acme' }, (jwt) => jwt.setExpirationTime('10m').setNotBefore('5m'))).call('/candidates?as=x'), /"nbf"/);
    await expectUnauthenticated(await client(mf, await hs256({ sub: 'acme' }, undefined, 'another-secret-another-secret-another-secret')).call('/candidates?as=x'), /signature/);
    const none = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ sub: 'acme', iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 300 })}.`;
    await expectUnauthenticated(await client(mf, none).call('/candidates?as=x'), /refused/);
    const response = await mf.dispatchFetch('https://edge.test/candidates?as=x', { headers: { authorization: 'Basic abc' } });
    await expectUnauthenticated(response as unknown as Response, /Bearer <token>/);
  });

  it('refuses a wrong issuer or audience and a token without its tenant claim', async () => {
    await expectUnauthenticated(await client(mf, await hs256({ sub: 'acme' }, (jwt) => jwt.setIssuer('https://evil.test').setExpirationTime('5m'))).call('/candidates?as=x'), /"iss"/);
    await expectUnauthenticated(await client(mf, await hs256({ sub: 'acme' }, (jwt) => jwt.setAudience('other').setExpirationTime('5m'))).call('/candidates?as=x'), /"aud"/);
    await expectUnauthenticated(await client(mf, await hs256({ name: 'no sub' })).call('/candidates?as=x'), /tenant/);
    await expectUnauthenticated(await client(mf, await hs256({ sub: '' })).call('/candidates?as=x'), /tenant/);
    // The probe's F1: a tenant with a lone surrogate has no UTF-8 form, so no R2 prefix: 401, not 500.
    for (const sub of ['\ud800', 'a\udc00b']) {
      await expectUnauthenticated(await client(mf, await hs256({ sub })).call('/sessions'), /well-formed Unicode/);
    }
  });

  it('accepts an HS256 token and an ES256 token whose key is in the JWKS; refuses ES256 signed by another key', async () => {
    const ok = await client(mf, await hs256({ sub: 'acme' })).call('/candidates?as=unknown-session');
    expect(ok.status).toBe(200);
    const sign = (key: CryptoKey) =>
      new SignJWT({ sub: 'acme' }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime('5m').sign(key);
    const viaJwks = await client(mf, await sign(es256.privateKey)).call('/candidates?as=unknown-session');
    expect(viaJwks.status).toBe(200);
    const other = await generateKeyPair('ES256');
    await expectUnauthenticated(await client(mf, await sign(other.privateKey)).call('/candidates?as=x'), /signature/);
  });

  it('accepts a Cloudflare Access token (RS256, audience list) from Cf-Access-Jwt-Assertion', async () => {
    const token = await new SignJWT({ sub: 'user-1', email: 'a@example.com' })
      .setProtectedHeader({ alg: 'RS256', kid: 'access-1' })
      .setIssuer(ISSUER)
      .setAudience([AUDIENCE, 'another-app'])
      .setExpirationTime('5m')
      .sign(rs256.privateKey);
    const response = (await mf.dispatchFetch('https://edge.test/candidates?as=unknown-session', { headers: { 'cf-access-jwt-assertion': token } })) as unknown as Response;
    expect(response.status).toBe(200);
    const hs256Only = service({ AUTH_JWT_SECRET: SECRET, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE });
    const refused = (await hs256Only.dispatchFetch('https://edge.test/candidates?as=x', { headers: { authorization: `Bearer ${token}` } })) as unknown as Response;
    await expectUnauthenticated(refused, /algorithm/);
  });

  it('refuses a token without exp; allows a little clock skew on exp (issue 27)', async () => {
    await expectUnauthenticated(await client(mf, await hs256({ sub: 'acme' }, (jwt) => jwt)).call('/candidates?as=x'), /"exp"/);
    const skewed = await client(mf, await hs256({ sub: 'acme' }, (jwt) => jwt.setExpirationTime(Math.floor(Date.now() / 1000) - 5))).call('/candidates?as=unknown-session');
    expect(skewed.status).toBe(200);
  });

  it('answers 500 INVALID_CONFIG, not 401, for AUTH_MODE = "none" beside a secret or JWKS, a short secret or a malformed JWKS URL (issue 27)', async () => {
    const token = await hs256({ sub: 'acme' });
    for (const [vars, message] of [
      [{ AUTH_MODE: 'none', AUTH_JWT_SECRET: SECRET }, /AUTH_MODE = "none".*AUTH_JWT_SECRET/],
      [{ AUTH_MODE: 'none', AUTH_JWKS_URL: jwksUrl }, /AUTH_MODE = "none".*AUTH_JWKS_URL/],
      [{ AUTH_JWT_SECRET: 'short' }, /AUTH_JWT_SECRET must be at least 32 bytes/],
      [{ AUTH_JWKS_URL: 'not-a-url' }, /AUTH_JWKS_URL must be an absolute http\(s\) URL/],
    ] as const) {
      const broken = service(vars as Record<string, string>);
      for (const request of [client(broken, undefined).call('/candidates?as=x'), client(broken, token).call('/sessions'), client(broken, 'garbage').call('/reconcile', { method: 'POST' })]) {
        const response = await request;
        expect(response.status).toBe(500);
        const body = (await response.json()) as ErrorBody;
        expect(body.code).toBe('SESSION_REFERENCE_INVALID_CONFIG');
        expect(body.message).toMatch(message);
      }
    }
  });

  it('answers 502 when the JWKS is unreachable or not a key set: the server is at fault, not the token (issue 27)', async () => {
    const html = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end('<html>login</html>');
    });
    await new Promise<void>((done) => html.listen(0, '127.0.0.1', done));
    const port = (html.address() as { port: number }).port;
    try {
      const token = await new SignJWT({ sub: 'acme' }).setProtectedHeader({ alg: 'ES256', kid: 'k1' }).setIssuer(ISSUER).setAudience(AUDIENCE).setExpirationTime('5m').sign(es256.privateKey);
      for (const url of [`http://127.0.0.1:${port}/certs`, 'http://127.0.0.1:1/certs']) {
        const broken = service({ AUTH_JWKS_URL: url, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE });
        const response = await client(broken, token).call('/candidates?as=x');
        expect(response.status).toBe(502);
        expect(response.headers.get('www-authenticate')).toBeNull();
        const body = (await response.json()) as ErrorBody;
        expect(body.code).toBe('SESSION_REFERENCE_READ_FAILED');
        expect(body.message).toMatch(/AUTH_JWKS_URL/);
      }
    } finally {
      await new Promise((done) => html.close(done));
    }
  });

  it('denies every request when no authentication is configured; AUTH_MODE = "none" opens it', async () => {
    const closed = service({});
    await expectUnauthenticated(await client(closed, await hs256({ sub: 'acme' })).call('/candidates?as=x'), /no authentication configured/);
    const open = service({ AUTH_MODE: 'none' });
    const response = await client(open, undefined).call('/candidates?as=x');
    expect(response.status).toBe(200);
  });
});

describe('the service over real logs (SPEC §17.4–§17.6)', () => {
  let mf: Miniflare;
  let acme: ReturnType<typeof client>;
  let globex: ReturnType<typeof client>;
  beforeAll(async () => {
    mf = service({ AUTH_JWT_SECRET: SECRET, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE, ALLOWED_ORIGINS: 'https://app.example.com, https://two.example.com', MAX_UPLOAD_BYTES: '4000000' });
    acme = client(mf, await hs256({ sub: 'acme' }));
    globex = client(mf, await hs256({ sub: 'globex/ü' }));
  });

  it('PUT /sessions/{path} stores real logs (plain v3, zstd, v2 beside v3) and answers key, sessionId, R2 etag and size', async () => {
    const uploads: Array<[string, Uint8Array, string]> = [
      [`77-Dumen/${DUMEN_ID}/session.v3.jsonl`, DUMEN, DUMEN_ID],
      [`77-Dumen/${TARGET_ID}/session.v3.jsonl`, TARGET, TARGET_ID],
      [`ledger-service/${LEDGER_ID}/session.v3.jsonl`, LEDGER_V3, LEDGER_ID],
      [`ledger-service/${LEDGER_ID}/session.v2.jsonl`, LEDGER_V2, LEDGER_ID],
      [`ledger-service/${ZSTD_ID}/session.v3.jsonl.zstd`, LEDGER_ZSTD, ZSTD_ID],
      ['fixtures/dumen-prefix.jsonl', FIXTURE_V3, JSON.parse(new TextDecoder().decode(FIXTURE_V3).split('\n')[0]!).id],
    ];
    for (const [path, bytes, sessionId] of uploads) {
      const response = await acme.put(path, bytes);
      expect(response.status, path).toBe(200);
      expect(await response.json()).toEqual({ key: path, sessionId, etag: md5(bytes), size: bytes.length });
    }
    const bucket = await mf.getR2Bucket('SESSIONS');
    const listed = await bucket.list({ prefix: 'tenants/' });
    expect(listed.objects.map((object) => object.key).sort()).toEqual(uploads.map(([path]) => `tenants/acme/${path}`).sort());
  });

  it('GET /sessions pages through the catalog rows', async () => {
    const response = await acme.call('/sessions');
    expect(response.status).toBe(200);
    const page = (await response.json()) as { rows: Array<{ key: string; sessionId: string; etag: string; size: number; uploaded: number }> };
    expect(page.rows).toHaveLength(6);
    expect(page.rows.find((row) => row.key === `77-Dumen/${DUMEN_ID}/session.v3.jsonl`)).toEqual({
      key: `77-Dumen/${DUMEN_ID}/session.v3.jsonl`,
      sessionId: DUMEN_ID,
      etag: md5(DUMEN),
      size: DUMEN.length,
      uploaded: expect.any(Number),
    });
  });

  it('GET /candidates answers from the catalog: each session once, the agent itself never, titles as labels', async () => {
    const { status, body } = await acme.candidates(`as=${TARGET_ID}`);
    expect(status).toBe(200);
    const ids = body.map((row) => row.sessionId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining([DUMEN_ID, LEDGER_ID, ZSTD_ID]));
    expect(ids).not.toContain(TARGET_ID);
    expect(body.find((row) => row.sessionId === DUMEN_ID)).toMatchObject({
      label: DUMEN_TITLE,
      mention: formatSessionReferenceMention({ sessionId: DUMEN_ID, label: DUMEN_TITLE }),
    });
    const limited = await acme.candidates(`as=${TARGET_ID}&limit=1`);
    expect(limited.body).toHaveLength(1);
    expect((await acme.candidates(`as=${TARGET_ID}&titles=yes`)).status).toBe(400);
    expect((await acme.candidates('q=x')).status).toBe(400);
  });

  it('GET /search finds a session by what was said', async () => {
    const response = await acme.call(`/search?as=${TARGET_ID}&q=gemini`);
    expect(response.status).toBe(200);
    const hits = (await response.json()) as Array<{ sessionId: string }>;
    expect(hits.map((hit) => hit.sessionId)).toContain(DUMEN_ID);
  });

  it('POST /prepare cites real logs; of v2 beside v3 it serves v3 (SPEC §17.5)', async () => {
    const text = `Compare ${formatSessionReferenceMention({ sessionId: LEDGER_ID, label: 'ledger' })} with ${formatSessionReferenceMention({ sessionId: ZSTD_ID, label: 'zstd' })}`;
    const { status, body } = await acme.prepare(TARGET_ID, text);
    expect(status).toBe(200);
    const serialized = JSON.stringify(body.message);
    expect(serialized).toContain('detect the header row automatically');
    expect(serialized).not.toContain('stale v2 answer');
    const listed = await acme.candidates(`as=${TARGET_ID}&q=ledger`);
    expect(listed.body.find((row) => row.sessionId === LEDGER_ID)?.label).toBe('CSV importer: header-row detection');
    expect(body.metadata.references.map((reference) => reference.sessionId)).toEqual([LEDGER_ID, ZSTD_ID]);
    const unknown = await acme.prepare(TARGET_ID, `see ${formatSessionReferenceMention({ sessionId: 'no-such-session', label: 'x' })}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('SESSION_REFERENCE_NOT_FOUND');
  });

  it('keeps tenants apart: another tenant\'s session answers exactly as an unknown one', async () => {
    // An agent the catalog lacks is no error (the probe's F9: the session being typed in); another
    // tenant's id as the agent is answered exactly as one that never was.
    for (const route of ['candidates?', 'search?q=zstd&']) {
      const foreign = await globex.call(`/${route}as=${TARGET_ID}`);
      const unknown = await globex.call(`/${route}as=session-that-never-was`);
      expect([foreign.status, unknown.status]).toEqual([200, 200]);
      expect(await foreign.json()).toEqual(await unknown.json());
    }
    expect(await globex.offered()).toEqual([]);
    const put = await globex.put('mine.jsonl', TARGET);
    expect(put.status).toBe(200);
    const bucket = await mf.getR2Bucket('SESSIONS');
    expect(await bucket.head('tenants/globex%2F%C3%BC/mine.jsonl')).not.toBeNull();
    const own = await globex.candidates(`as=${TARGET_ID}`);
    expect(own.status).toBe(200);
    expect(own.body).toEqual([]);
    const cite = await globex.prepare(TARGET_ID, `see ${formatSessionReferenceMention({ sessionId: DUMEN_ID, label: 'x' })}`);
    expect(cite.status).toBe(404);
  });

  it('refuses garbage, a log whose body breaks after a valid header, ".." paths, a body without Content-Length or over MAX_UPLOAD_BYTES; nothing is stored', async () => {
    const bucket = await mf.getR2Bucket('SESSIONS');
    const before = (await bucket.list()).objects.length;
    const garbage = await acme.put('garbage.jsonl', 'this is not a dsh log\n');
    expect(garbage.status).toBe(400);
    expect(((await garbage.json()) as ErrorBody).code).toBe('SESSION_REFERENCE_INVALID_LOG');
    const brokenBody = `${sessionLogText({ id: 'broken', createdAt: 1 })}not json\n{}\n`;
    const broken = await acme.put('broken.jsonl', brokenBody);
    expect(broken.status).toBe(400);
    expect(((await broken.json()) as ErrorBody).code).toBe('SESSION_REFERENCE_INVALID_LOG');
    const brokenZstd = await acme.put('broken.jsonl.zstd', Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0, 1, 2, 3));
    expect(brokenZstd.status).toBe(400);
    for (const path of ['a/..%2Fb.jsonl', '..%2F..%2Fx', 'a//b', 'a%5Cb', 'a%00b', 'a%0Ab', 'a%E2%80%A8b', '%FF', 'x'.repeat(1100)]) {
      const response = await acme.put(path, TARGET);
      expect(response.status, path).toBe(400);
      expect(((await response.json()) as ErrorBody).code).toBe('SESSION_REFERENCE_INVALID_ARGUMENT');
    }
    // A dot segment, plain or percent-encoded, is resolved by the URL itself before any Worker sees
    // it: the request names another route, or a path still inside the prefix.
    for (const path of ['%2e%2e/%2e%2e/%2e%2e/escape.jsonl', '../../../../escape.jsonl', '.%2E/.%2e/x']) {
      const response = await acme.put(path, TARGET);
      expect(response.status, path).toBe(404);
    }
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(TARGET);
        controller.close();
      },
    });
    const chunked = await acme.call('/sessions/chunked.jsonl', { method: 'PUT', body: stream, duplex: 'half' } as RequestInit);
    expect(chunked.status).toBe(411);
    // Over MAX_UPLOAD_BYTES: answered 413 from Content-Length before the body is read (issue 27), so
    // it is sent by a client that reads the answer while it writes (see 'PUT answers 413 … stalls').
    const big = await stalledPut(await mf.ready, 'big.jsonl', await hs256({ sub: 'acme' }), 4_000_001, ' '.repeat(65536));
    expect({ status: big.status, code: big.body.code }).toEqual({ status: 413, code: 'REQUEST_TOO_LARGE' });
    expect((await bucket.list()).objects.length).toBe(before);
    const rows = (await (await acme.call('/sessions')).json()) as { rows: unknown[] };
    expect(rows.rows).toHaveLength(6);
  });

  it('stores a log sent in 1-byte chunks with its Content-Length (the header found on a bounded peek)', async () => {
    const bytes = zstdLog(sessionLogText({ id: 'trickled', createdAt: 1_970_000_000_000, turns: [['user', 'slowly'], ['assistant', 'byte by byte']] }), 1);
    let at = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at === bytes.length) controller.close();
        else controller.enqueue(bytes.subarray(at, ++at));
      },
    });
    const response = await acme.call('/sessions/side/trickled.jsonl.zstd', { method: 'PUT', body: stream, duplex: 'half', headers: { 'content-length': String(bytes.length) } } as RequestInit);
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ sessionId: 'trickled', size: bytes.length, etag: md5(bytes) });
    expect((await acme.call('/sessions/side/trickled.jsonl.zstd', { method: 'DELETE' })).status).toBe(200);
  });

  it('answers CORS preflights and adds CORS headers with Vary: Origin for allowed origins only', async () => {
    const preflight = (await mf.dispatchFetch('https://edge.test/candidates', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example.com', 'access-control-request-method': 'GET', 'access-control-request-headers': 'authorization' },
    })) as unknown as Response;
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(preflight.headers.get('vary')).toMatch(/Origin/);
    expect(preflight.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
    const allowed = await acme.call(`/candidates?as=${TARGET_ID}`, { headers: { origin: 'https://two.example.com' } });
    expect(allowed.headers.get('access-control-allow-origin')).toBe('https://two.example.com');
    expect(allowed.headers.get('vary')).toMatch(/Origin/);
    const other = await acme.call(`/candidates?as=${TARGET_ID}`, { headers: { origin: 'https://evil.example.com' } });
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
    expect(other.headers.get('vary')).toMatch(/Origin/);
    const otherPreflight = (await mf.dispatchFetch('https://edge.test/candidates', {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example.com', 'access-control-request-method': 'GET' },
    })) as unknown as Response;
    expect(otherPreflight.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('drops a vanished object found by /prepare and answers from the bucket as it is', async () => {
    const key = `tenants/acme/ledger-service/${ZSTD_ID}/session.v3.jsonl.zstd`;
    const bucket = await mf.getR2Bucket('SESSIONS');
    await bucket.delete(key);
    const { status, body } = await acme.prepare(TARGET_ID, `see ${formatSessionReferenceMention({ sessionId: ZSTD_ID, label: 'gone' })}`);
    expect(status).toBe(404);
    expect(body.code).toBe('SESSION_REFERENCE_NOT_FOUND');
    const after = await acme.candidates(`as=${TARGET_ID}`);
    expect(after.body.map((row) => row.sessionId)).not.toContain(ZSTD_ID);
  });

  it('serves a cited object changed behind the catalog as it is now, and refreshes its row', async () => {
    const key = 'tenants/acme/side/changing.jsonl';
    const before = sessionLogText({ id: 'changing', createdAt: 1_960_000_000_000, title: 'Before', turns: [['user', 'the old words']] });
    expect((await acme.put('side/changing.jsonl', before)).status).toBe(200);
    const bucket = await mf.getR2Bucket('SESSIONS');
    await bucket.put(key, sessionLogText({ id: 'changing', createdAt: 1_960_000_000_000, title: 'After', turns: [['user', 'the new words']] }));
    const { status, body } = await acme.prepare(TARGET_ID, `see ${formatSessionReferenceMention({ sessionId: 'changing', label: 'c' })}`);
    expect(status).toBe(200);
    expect(JSON.stringify(body.message)).toContain('the new words');
    expect(JSON.stringify(body.message)).not.toContain('the old words');
    const listed = await acme.candidates(`as=${TARGET_ID}&q=changing`);
    expect(listed.body.map((row) => row.label)).toEqual(['After']);
  });

  it('answers a 401 with CORS headers for an allowed origin (a browser can read why)', async () => {
    const response = await client(mf, undefined).call(`/candidates?as=${TARGET_ID}`, { headers: { origin: 'https://app.example.com' } });
    expect(response.status).toBe(401);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
  });

  it('DELETE /sessions/{path} removes the object and its row (read-your-writes); v2 then serves', async () => {
    const response = await acme.call(`/sessions/ledger-service/${LEDGER_ID}/session.v3.jsonl`, { method: 'DELETE' });
    expect(response.status).toBe(200);
    const { body } = await acme.prepare(TARGET_ID, `see ${formatSessionReferenceMention({ sessionId: LEDGER_ID, label: 'ledger' })}`);
    expect(JSON.stringify(body.message)).toContain('stale v2 answer');
    const listed = await acme.candidates(`as=${TARGET_ID}&q=ledger`);
    expect(listed.body.find((row) => row.sessionId === LEDGER_ID)?.label).toBe('STALE v2 LOG — must not be read');
    const again = await acme.call(`/sessions/ledger-service/${LEDGER_ID}/session.v3.jsonl`, { method: 'DELETE' });
    expect(again.status).toBe(404);
  });

  it('applies R2 event notifications from the queue (object-create, object-delete), ignoring keys outside TENANT_PREFIX', async () => {
    const bucket = await mf.getR2Bucket('SESSIONS');
    const text = sessionLogText({ id: 'from-the-side', createdAt: 1_900_000_000_000, title: 'Written by rclone', turns: [['user', 'hello']] });
    const bytes = zstdLog(text);
    const key = 'tenants/acme/side/from-the-side.jsonl.zstd';
    const put = await bucket.put(key, bytes);
    const worker = await mf.getWorker();
    const note = (action: string, eventTime: string) => ({
      id: `${action}-${eventTime}`,
      timestamp: new Date(),
      attempts: 1,
      body: { account: 'a', bucket: 'dsh-sessions', action, object: { key, size: bytes.length, eTag: put?.etag }, eventTime },
    });
    const malformed = { id: 'malformed', timestamp: new Date(), attempts: 1, body: { action: 'PutObject', object: { key: 'tenants/acme/x.jsonl' } } };
    const outside = { id: 'outside', timestamp: new Date(), attempts: 1, body: { action: 'PutObject', object: { key: 'elsewhere/x.jsonl', size: 1, eTag: 'x' }, eventTime: new Date().toISOString() } };
    const createdNote = note('PutObject', new Date().toISOString());
    const created = await worker.queue(QUEUE, [createdNote, outside, malformed]);
    expect(created.outcome).toBe('ok');
    expect(created.retryMessages).toEqual([]);
    expect([...created.explicitAcks].sort()).toEqual([createdNote.id, 'malformed', 'outside'].sort());
    const listed = await acme.candidates(`as=${TARGET_ID}`);
    expect(listed.body.find((row) => row.sessionId === 'from-the-side')).toMatchObject({ label: 'Written by rclone' });
    await bucket.delete(key);
    const deleted = await worker.queue(QUEUE, [note('DeleteObject', new Date(Date.now() + 1000).toISOString())]);
    expect(deleted.retryMessages).toEqual([]);
    expect((await acme.candidates(`as=${TARGET_ID}`)).body.map((row) => row.sessionId)).not.toContain('from-the-side');
  });

  it('leaves out objects whose key no {path} can name: dot or empty segments (the probe\'s F2)', async () => {
    const bucket = await mf.getR2Bucket('SESSIONS');
    const worker = await mf.getWorker();
    const keys = ['tenants/acme/../alice/dotted.jsonl', 'tenants/acme/side//empty.jsonl', 'tenants/acme/./here.jsonl'];
    for (const [index, key] of keys.entries()) {
      const put = await bucket.put(key, sessionLogText({ id: `unnamable-${index}`, createdAt: 1_940_000_000_000, title: 'Unnamable' }));
      const body = { account: 'a', bucket: 'dsh-sessions', action: 'PutObject', object: { key, size: 1, eTag: put?.etag }, eventTime: new Date().toISOString() };
      expect((await worker.queue(QUEUE, [{ id: `unnamable-${index}`, timestamp: new Date(), attempts: 1, body }])).retryMessages).toEqual([]);
    }
    expect(await (await acme.call('/reconcile', { method: 'POST' })).json()).toMatchObject({ done: true });
    const rows = ((await (await acme.call('/sessions')).json()) as { rows: Array<{ key: string }> }).rows.map((row) => row.key);
    expect(rows.filter((key) => key.split('/').some((segment) => segment === '' || segment === '.' || segment === '..'))).toEqual([]);
    expect((await acme.offered()).filter((id) => id.startsWith('unnamable-'))).toEqual([]);
    for (const key of keys) await bucket.delete(key);
  });

  it('POST /reconcile and the Cron Trigger repair the catalog from the bucket (added, changed, removed)', async () => {
    const bucket = await mf.getR2Bucket('SESSIONS');
    const text = sessionLogText({ id: 'reconciled', createdAt: 1_950_000_000_000, title: 'Found by reconcile' });
    await bucket.put('tenants/acme/side/reconciled.jsonl', text);
    const response = await acme.call('/reconcile', { method: 'POST' });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ done: true, added: 1 });
    expect((await acme.candidates(`as=${TARGET_ID}`)).body.map((row) => row.sessionId)).toContain('reconciled');
    await bucket.delete('tenants/acme/side/reconciled.jsonl');
    const worker = await mf.getWorker();
    await worker.scheduled({ cron: '*/30 * * * *' });
    expect((await acme.candidates(`as=${TARGET_ID}`)).body.map((row) => row.sessionId)).not.toContain('reconciled');
  });

  it('the Cron Trigger feeds a tenant\'s catalog only from its canonical folder, never another spelling of it (issue 27)', async () => {
    const alice = client(mf, await hs256({ sub: 'alice@example.com' }));
    const slash = client(mf, await hs256({ sub: 'a/b' }));
    expect((await alice.put('x.jsonl', TARGET)).status).toBe(200);
    expect((await slash.put('y.jsonl', TARGET)).status).toBe(200);
    const bucket = await mf.getR2Bucket('SESSIONS');
    const copied = sessionLogText({ id: 'copied-by-hand', createdAt: 1_960_000_000_000, title: 'Copied by hand' });
    await bucket.put('tenants/alice@example.com/copied.jsonl', copied);
    await bucket.put('tenants/a%2fb/copied.jsonl', copied);
    const worker = await mf.getWorker();
    for (let run = 0; run < 2; run++) await worker.scheduled({ cron: '*/30 * * * *' });
    for (const [tenant, key] of [[alice, 'x.jsonl'], [slash, 'y.jsonl']] as const) {
      const rows = (await (await tenant.call('/sessions')).json()) as { rows: Array<{ key: string; sessionId: string }> };
      expect(rows.rows.map((row) => row.key)).toEqual([key]);
      expect(await tenant.offered()).not.toContain('copied-by-hand');
      const reconciled = await tenant.call('/reconcile', { method: 'POST' });
      expect(await reconciled.json()).toMatchObject({ done: true, added: 0, removed: 0 });
    }
  });

  it('a PUT and a DELETE of one key racing leave the catalog as the bucket is once both have answered (issue 27)', async () => {
    const racer = client(mf, await hs256({ sub: 'racer' }));
    const bucket = await mf.getR2Bucket('SESSIONS');
    for (let attempt = 0; attempt < 6; attempt++) {
      const put = racer.put('pd.jsonl', FIXTURE_V3);
      await new Promise((done) => setTimeout(done, 10 * attempt));
      const [stored, deleted] = await Promise.all([put, racer.call('/sessions/pd.jsonl', { method: 'DELETE' })]);
      expect([200, 409]).toContain(stored.status);
      expect([200, 404]).toContain(deleted.status);
      const inBucket = (await bucket.head('tenants/racer/pd.jsonl')) !== null;
      const rows = (await (await racer.call('/sessions')).json()) as { rows: Array<{ key: string }> };
      expect({ attempt, inCatalog: rows.rows.some((row) => row.key === 'pd.jsonl') }).toEqual({ attempt, inCatalog: inBucket });
      await racer.call('/sessions/pd.jsonl', { method: 'DELETE' });
    }
  });

  it('answers 400 for a /sessions cursor no page gave, and a plain 404 from /prepare for an unknown cited id (issue 27)', async () => {
    for (const cursor of ['garbage', 's3.jsonl', 'YQ']) {
      const response = await acme.call(`/sessions?cursor=${cursor}`);
      expect(response.status).toBe(400);
      expect(((await response.json()) as ErrorBody).code).toBe('SESSION_REFERENCE_INVALID_ARGUMENT');
    }
    const { status, body } = await acme.prepare(TARGET_ID, `see ${formatSessionReferenceMention({ sessionId: 'no-such-id', label: 'x' })}`);
    expect(status).toBe(404);
    expect(body).toEqual({ code: 'SESSION_REFERENCE_NOT_FOUND', message: 'unknown session id "no-such-id": no session of this tenant has it' });
  });

  it('answers /candidates and /search from the catalog alone: they still answer with the bucket emptied behind it', async () => {
    const initech = client(mf, await hs256({ sub: 'initech' }));
    for (const [path, bytes] of [['a.jsonl', TARGET], ['b.jsonl', DUMEN]] as const) expect((await initech.put(path, bytes)).status).toBe(200);
    const before = await initech.candidates(`as=${TARGET_ID}`);
    const hitsBefore = await (await initech.call(`/search?as=${TARGET_ID}&q=gemini`)).json();
    const bucket = await mf.getR2Bucket('SESSIONS');
    for (const path of ['a.jsonl', 'b.jsonl']) await bucket.delete(`tenants/initech/${path}`);
    const after = await initech.candidates(`as=${TARGET_ID}`);
    expect(after.status).toBe(200);
    expect(after.body).toEqual(before.body);
    expect(after.body.map((row) => row.sessionId)).toEqual([DUMEN_ID]);
    expect(await (await initech.call(`/search?as=${TARGET_ID}&q=gemini`)).json()).toEqual(hitsBefore);
  });

  it('answers 404 for an unknown route and 405 with Allow for a wrong method', async () => {
    const route = await acme.call('/nowhere');
    expect(route.status).toBe(404);
    const method = await acme.call('/candidates', { method: 'POST' });
    expect(method.status).toBe(405);
    expect(method.headers.get('allow')).toBe('GET, HEAD');
    for (const verb of ['PATCH', 'POST']) {
      const list = await acme.call('/sessions', { method: verb });
      expect(list.status).toBe(405);
      expect(list.headers.get('allow')).toBe('GET, HEAD');
    }
    const one = await acme.call('/sessions/a.jsonl', { method: 'POST' });
    expect(one.headers.get('allow')).toBe('PUT, DELETE');
  });
});

describe('settings checked before any route runs (issue 27)', () => {
  it('answers 500 INVALID_CONFIG naming the [vars] name on every route for a malformed number or origin', async () => {
    const token = await hs256({ sub: 'acme' });
    const base = { AUTH_JWT_SECRET: SECRET, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE };
    for (const [name, value] of [
      ['MAX_UPLOAD_BYTES', '1e6'],
      ['MAX_UPLOAD_BYTES', '0'],
      ['MAX_REFERENCES', '5'],
      ['MAX_REFERENCE_BYTES', '-1'],
      ['CANDIDATE_LIMIT', 'abc'],
      ['RECONCILE_PAGE_SIZE', '0'],
      ['RECONCILE_PAGE_SIZE', '5000'],
      ['MAX_LOG_BYTES', '1.5'],
      ['ALLOWED_ORIGINS', 'https://a.com/'],
      ['ALLOWED_ORIGINS', '*'],
      // The second probe's N5: a prefix with a dot or empty segment, or without its closing "/".
      ['TENANT_PREFIX', '../up/'],
      ['TENANT_PREFIX', 'tenants'],
    ] as const) {
      const broken = client(service({ ...base, [name]: value }), token);
      for (const request of [broken.call('/sessions'), broken.call('/candidates?as=x'), broken.call('/reconcile', { method: 'POST' }), broken.put('a.jsonl', TARGET)]) {
        const response = await request;
        const body = (await response.json()) as ErrorBody;
        expect({ name, value, status: response.status, code: body.code }).toEqual({ name, value, status: 500, code: 'SESSION_REFERENCE_INVALID_CONFIG' });
        expect(body.message).toContain(name);
      }
    }
  });
});

describe('queue and scheduled check the settings as fetch does (issue 27)', () => {
  it('a misconfigured deploy writes no catalog row from a queue message or the Cron Trigger; the batch is retried and applies once the deploy is fixed', async () => {
    const token = await hs256({ sub: 'acme' });
    const base = { AUTH_JWT_SECRET: SECRET, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE };
    const key = 'tenants/acme/side/queued.jsonl';
    const text = sessionLogText({ id: 'queued', createdAt: 1_970_000_000_000, title: 'Queued' });
    for (const wrong of [{ MAX_LOG_BYTES: '1.5' }, { AUTH_MODE: 'none' }]) {
      const persist = mkdtempSync(join(tmpdir(), 'dsh-edge-persist-'));
      try {
        const broken = service({ ...base, ...wrong }, persist);
        const put = await (await broken.getR2Bucket('SESSIONS')).put(key, text);
        const message = { id: 'm1', timestamp: new Date(), attempts: 1, body: { account: 'a', bucket: 'b', action: 'PutObject', object: { key, size: text.length, eTag: put?.etag }, eventTime: new Date().toISOString() } };
        const worker = await broken.getWorker();
        const queued = await worker.queue(QUEUE, [message]);
        expect({ wrong, outcome: queued.outcome, acks: queued.explicitAcks }).toEqual({ wrong, outcome: 'exception', acks: [] });
        expect((await worker.scheduled({ cron: '*/30 * * * *' })).outcome).toBe('exception');
        const refused = await client(broken, token).call('/sessions');
        expect(((await refused.json()) as ErrorBody).code).toBe('SESSION_REFERENCE_INVALID_CONFIG');
        await broken.dispose();
        miniflares.splice(miniflares.indexOf(broken), 1);
        // The same state under a fixed deploy: the catalog holds nothing yet; the retried message then writes the row.
        const fixed = service(base, persist);
        const acme = client(fixed, token);
        expect(((await (await acme.call('/sessions')).json()) as { rows: unknown[] }).rows).toEqual([]);
        const retried = await (await fixed.getWorker()).queue(QUEUE, [{ ...message, attempts: 2 }]);
        expect({ outcome: retried.outcome, acks: retried.explicitAcks }).toEqual({ outcome: 'ok', acks: ['m1'] });
        const rows = (await (await acme.call('/sessions')).json()) as { rows: Array<{ sessionId: string }> };
        expect(rows.rows.map((row) => row.sessionId)).toEqual(['queued']);
      } finally {
        rmSync(persist, { recursive: true, force: true });
      }
    }
  });
});

/** An app with its own router that mounts the routes (SPEC §17.2), built by wrangler like the three lines. */
const MOUNTED_WORKER = `import { Hono } from 'hono';
import { createEdgeApp } from 'dsh-session-reference/edge';
export { SessionCatalog } from 'dsh-session-reference/edge';
const app = new Hono();
app.get('/health', (c) => c.text('ok'));
app.route('/api', createEdgeApp());
const prefixed = createEdgeApp({ basePath: '/dsh' });
export default {
  fetch(request, env, ctx) {
    return new URL(request.url).pathname.startsWith('/dsh/') ? prefixed.fetch(request, env, ctx) : app.fetch(request, env, ctx);
  },
};
`;

describe('createEdgeApp: the routes mounted under a path prefix of an app with its own router', () => {
  let mf: Miniflare;
  let project: string;
  beforeAll(() => {
    // Inside the repository, so that `dsh-session-reference/edge` resolves to the package itself.
    project = join(ROOT, 'node_modules/.cache', `edge-mounted-${process.pid}`);
    mkdirSync(join(project, 'out'), { recursive: true });
    writeFileSync(join(project, 'worker.js'), MOUNTED_WORKER);
    const config = readFileSync(join(EXAMPLE, 'wrangler.toml'), 'utf8').replace('main = "src/worker.ts"', 'main = "worker.js"');
    writeFileSync(join(project, 'wrangler.toml'), config);
    execFileSync(join(ROOT, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', join(project, 'out')], {
      cwd: project,
      stdio: 'pipe',
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
    });
    mf = new Miniflare({
      modules: true,
      scriptPath: join(project, 'out', 'worker.js'),
      modulesRoot: join(project, 'out'),
      modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
      compatibilityDate: COMPATIBILITY_DATE,
      r2Buckets: ['SESSIONS'],
      durableObjects: { CATALOG: { className: 'SessionCatalog', useSQLite: true } },
      bindings: { AUTH_MODE: 'none' },
    });
    miniflares.push(mf);
  });
  afterAll(() => {
    if (project) rmSync(project, { recursive: true, force: true });
  });

  it('serves the app\'s own routes, the edge routes under /api (app.route) and under /dsh (basePath)', async () => {
    const health = (await mf.dispatchFetch('https://app.test/health')) as unknown as Response;
    expect(await health.text()).toBe('ok');
    const api = client(mf, undefined);
    const put = await api.call(`/api/sessions/team%20a/${TARGET_ID}.jsonl`, { method: 'PUT', body: TARGET, headers: { 'content-length': String(TARGET.length) } });
    expect(put.status).toBe(200);
    expect(await put.json()).toMatchObject({ key: `team a/${TARGET_ID}.jsonl`, sessionId: TARGET_ID });
    const bucket = await mf.getR2Bucket('SESSIONS');
    expect(await bucket.head(`tenants/default/team a/${TARGET_ID}.jsonl`)).not.toBeNull();
    const dsh = await api.call(`/dsh/sessions/notes/${DUMEN_ID}.jsonl`, { method: 'PUT', body: DUMEN, headers: { 'content-length': String(DUMEN.length) } });
    expect(await dsh.json()).toMatchObject({ key: `notes/${DUMEN_ID}.jsonl`, sessionId: DUMEN_ID });
    const rows = (await (await api.call(`/api/candidates?as=${TARGET_ID}`)).json()) as SessionCandidate[];
    expect(rows.map((row) => row.sessionId)).toEqual([DUMEN_ID]);
    expect((await api.call('/dsh/nowhere')).status).toBe(404);
    expect((await api.call('/candidates?as=x')).status).toBe(404);
  });
});

/** A PUT over raw HTTP whose body sends `first` and then stalls: the answer must come without the rest. */
function stalledPut(base: URL, path: string, token: string, length: number, first: string): Promise<{ status: number; body: ErrorBody }> {
  return new Promise((resolve, reject) => {
    const put = request(new URL(`/sessions/${path}`, base), { method: 'PUT', agent: false, headers: { authorization: `Bearer ${token}`, 'content-length': String(length) } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () => {
        put.destroy();
        resolve({ status: response.statusCode!, body: JSON.parse(text) as ErrorBody });
      });
    });
    // Once answered, the connection is torn down under the still-open body: not a failure.
    put.on('error', (error) => (put.destroyed ? undefined : reject(error)));
    put.write(first);
  });
}

describe('the second probe of issue 27', () => {
  const base = { AUTH_JWT_SECRET: SECRET, AUTH_ISSUER: ISSUER, AUTH_AUDIENCE: AUDIENCE };
  const log = (id: string, words: string) => sessionLogText({ id, createdAt: 1_980_000_000_000, title: `Title ${id}`, turns: [['user', words]] });

  it('CANDIDATE_LIMIT is the default and the cap of /candidates and /search rows (a larger limit is served at the cap)', async () => {
    const mf = service({ ...base, CANDIDATE_LIMIT: '3' });
    const acme = client(mf, await hs256({ sub: 'acme' }));
    for (let n = 0; n < 6; n++) expect((await acme.put(`s-${n}.jsonl`, log(`s-${n}`, 'a common word'))).status).toBe(200);
    const rows = async (path: string) => ((await (await acme.call(path)).json()) as unknown[]).length;
    expect(await rows('/candidates?as=s-0')).toBe(3);
    expect(await rows('/candidates?as=s-0&q=s-')).toBe(3);
    expect(await rows('/candidates?as=s-0&limit=55')).toBe(3);
    expect(await rows('/candidates?as=s-0&limit=9007199254740991')).toBe(3);
    expect(await rows('/candidates?as=s-0&limit=2')).toBe(2);
    expect(await rows('/search?as=s-0&q=common')).toBe(3);
    expect(await rows('/search?as=s-0&q=common&limit=100')).toBe(3);
    expect(await rows('/search?as=s-0&q=common&limit=1')).toBe(1);
    expect((await acme.call('/candidates?as=s-0&limit=0')).status).toBe(400);
  });

  it('a missing SESSIONS binding, or SESSIONS given in [vars], is 500 INVALID_CONFIG naming it on every route, in the queue and in the cron', async () => {
    const token = await hs256({ sub: 'acme' });
    for (const [what, vars] of [['no binding', base], ['a [vars] string', { ...base, SESSIONS: 'dsh-sessions' }]] as const) {
      const mf = service(vars, undefined, false);
      const broken = client(mf, token);
      for (const request of [
        broken.call('/sessions'),
        broken.call('/candidates?as=x'),
        broken.call('/search?as=x&q=y'),
        broken.call('/prepare', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ as: 'x', text: 'hi' }) }),
        broken.call('/reconcile', { method: 'POST' }),
        broken.put('a.jsonl', TARGET),
        broken.call('/sessions/a.jsonl', { method: 'DELETE' }),
      ]) {
        const response = await request;
        const body = (await response.json()) as ErrorBody;
        expect({ what, status: response.status, code: body.code }).toEqual({ what, status: 500, code: 'SESSION_REFERENCE_INVALID_CONFIG' });
        expect(body.message).toContain('SESSIONS');
      }
      const worker = await mf.getWorker();
      const message = { id: 'm1', timestamp: new Date(), attempts: 1, body: { account: 'a', bucket: 'b', action: 'PutObject', object: { key: 'tenants/acme/x.jsonl', size: 1, eTag: 'e' }, eventTime: new Date().toISOString() } };
      const queued = await worker.queue(QUEUE, [message]);
      expect({ what, outcome: queued.outcome, acks: queued.explicitAcks }).toEqual({ what, outcome: 'exception', acks: [] });
      expect((await worker.scheduled({ cron: '*/30 * * * *' })).outcome).toBe('exception');
    }
  });

  it('a malformed setting fails the cron and the queue (RECONCILE_PAGE_SIZE over 1000): nothing is written', async () => {
    const mf = service({ ...base, RECONCILE_PAGE_SIZE: '5000' });
    const bucket = await mf.getR2Bucket('SESSIONS');
    const key = 'tenants/acme/side/paged.jsonl';
    const put = await bucket.put(key, log('paged', 'hello'));
    const worker = await mf.getWorker();
    const message = { id: 'm1', timestamp: new Date(), attempts: 1, body: { account: 'a', bucket: 'b', action: 'PutObject', object: { key, size: put?.size, eTag: put?.etag }, eventTime: new Date().toISOString() } };
    expect((await worker.queue(QUEUE, [message])).outcome).toBe('exception');
    expect((await worker.scheduled({ cron: '*/30 * * * *' })).outcome).toBe('exception');
    const response = await client(mf, await hs256({ sub: 'acme' })).call('/sessions');
    const body = (await response.json()) as ErrorBody;
    expect({ status: response.status, code: body.code }).toEqual({ status: 500, code: 'SESSION_REFERENCE_INVALID_CONFIG' });
    expect(body.message).toContain('RECONCILE_PAGE_SIZE');
  });

  it('a delete notification of a key whose object is still in the bound bucket (another bucket, a replay) keeps its row', async () => {
    const mf = service(base);
    const acme = client(mf, await hs256({ sub: 'acme' }));
    expect((await acme.put('k.jsonl', log('kept', 'zebracorn'))).status).toBe(200);
    const worker = await mf.getWorker();
    const note = (id: string, bucket: string) => ({ id, timestamp: new Date(), attempts: 1, body: { account: 'a', bucket, action: 'DeleteObject', object: { key: 'tenants/acme/k.jsonl' }, eventTime: new Date(Date.now() + 1000).toISOString() } });
    const other = await worker.queue(QUEUE, [note('other', 'some-other-bucket'), note('lifecycle', 'mirror')]);
    expect({ outcome: other.outcome, acks: [...other.explicitAcks].sort() }).toEqual({ outcome: 'ok', acks: ['lifecycle', 'other'] });
    const listed = (await (await acme.call('/sessions')).json()) as { rows: Array<{ key: string }> };
    expect(listed.rows.map((row) => row.key)).toEqual(['k.jsonl']);
    expect((await acme.prepare('kept', 'hello')).status).toBe(200);
    // Once the object is really gone, the same notification drops the row.
    await (await mf.getR2Bucket('SESSIONS')).delete('tenants/acme/k.jsonl');
    expect((await worker.queue(QUEUE, [note('real', 'dsh-sessions')])).outcome).toBe('ok');
    expect(((await (await acme.call('/sessions')).json()) as { rows: unknown[] }).rows).toEqual([]);
  });

  it('the cron reconciles a bounded number of tenants per invocation and resumes with the next ones', async () => {
    const mf = service(base);
    const bucket = await mf.getR2Bucket('SESSIONS');
    const tenants = Array.from({ length: 45 }, (_, n) => `t${String(n).padStart(2, '0')}`);
    for (const tenant of tenants) await bucket.put(`tenants/${tenant}/x.jsonl`, log(`s-${tenant}`, 'hello'));
    // A folder with an empty name is no tenant (and not the catalog that keeps the cron's place).
    await bucket.put('tenants//x.jsonl', log('s-empty', 'hello'));
    const clients = await Promise.all(tenants.map(async (tenant) => client(mf, await hs256({ sub: tenant }))));
    const indexed = async () => {
      let count = 0;
      for (const tenant of clients) count += ((await (await tenant.call('/sessions')).json()) as { rows: unknown[] }).rows.length;
      return count;
    };
    const worker = await mf.getWorker();
    expect((await worker.scheduled({ cron: '*/30 * * * *' })).outcome).toBe('ok');
    const first = await indexed();
    // One tenant folder listing, one reconcile page per tenant, the place loaded and saved: 40 subrequests at most.
    expect(first).toBe(40 - 2 - 1);
    expect((await worker.scheduled({ cron: '*/30 * * * *' })).outcome).toBe('ok');
    expect(await indexed()).toBe(45);
    // A new round begins: an object added to the first tenant is found again.
    await bucket.put('tenants/t00/y.jsonl', log('s-t00-new', 'hello'));
    expect((await worker.scheduled({ cron: '*/30 * * * *' })).outcome).toBe('ok');
    expect(await indexed()).toBe(46);
  });

  it('the cron repairs a tenant whose every object was deleted straight in R2, its notifications lost (the probe\'s F5)', async () => {
    const mf = service(base);
    const bucket = await mf.getR2Bucket('SESSIONS');
    const gdpr = client(mf, await hs256({ sub: 'gdpr' }));
    const kept = client(mf, await hs256({ sub: 'kept' }));
    expect((await gdpr.put('a.jsonl', log('gone-a', 'my bank PIN is 4711 pineapple'))).status).toBe(200);
    expect((await gdpr.put('b.jsonl', log('gone-b', 'pineapple again'))).status).toBe(200);
    expect((await kept.put('k.jsonl', log('kept-k', 'pineapple kept'))).status).toBe(200);
    // No cron ran yet: the catalogs registered their folders themselves when first written.
    for (const key of ['tenants/gdpr/a.jsonl', 'tenants/gdpr/b.jsonl']) await bucket.delete(key);
    expect((await bucket.list({ prefix: 'tenants/gdpr/' })).objects).toEqual([]);
    const worker = await mf.getWorker();
    expect((await worker.scheduled({ cron: '*/30 * * * *' })).outcome).toBe('ok');
    expect(((await (await gdpr.call('/sessions')).json()) as { rows: unknown[] }).rows).toEqual([]);
    expect(await gdpr.offered()).toEqual([]);
    // Nor is the deleted text searchable any more (a new log gives the search an agent session).
    expect((await gdpr.put('fresh.jsonl', log('fresh', 'nothing here'))).status).toBe(200);
    expect((await (await gdpr.call('/search?as=fresh&q=pineapple')).json()) as unknown[]).toEqual([]);
    await bucket.delete('tenants/gdpr/fresh.jsonl');
    // The other tenant's catalog is untouched, and a later round still visits the emptied one.
    expect(((await (await kept.call('/sessions')).json()) as { rows: unknown[] }).rows).toHaveLength(1);
    await bucket.put('tenants/gdpr/c.jsonl', log('back-c', 'back again'));
    for (let run = 0; run < 2; run++) expect((await worker.scheduled({ cron: '*/30 * * * *' })).outcome).toBe('ok');
    expect(((await (await gdpr.call('/sessions')).json()) as { rows: unknown[] }).rows).toHaveLength(1);
    await bucket.delete('tenants/gdpr/c.jsonl');
    for (let run = 0; run < 2; run++) expect((await worker.scheduled({ cron: '*/30 * * * *' })).outcome).toBe('ok');
    expect(((await (await gdpr.call('/sessions')).json()) as { rows: unknown[] }).rows).toEqual([]);
  });

  it('/prepare for an agent the catalog lacks composes as the local service does (the second probe\'s N1)', async () => {
    const mf = service(base);
    const acme = client(mf, await hs256({ sub: 'fresh' }));
    expect((await acme.put('o1.jsonl', log('o1', 'the plan we agreed on'))).status).toBe(200);
    const mention = formatSessionReferenceMention({ sessionId: 'o1', label: 'o1' });
    const composed = await acme.prepare('not-uploaded-yet', `see ${mention}`);
    expect(composed.status).toBe(200);
    expect(composed.body.metadata.references.map((reference) => reference.sessionId)).toEqual(['o1']);
    expect(JSON.stringify(composed.body.message)).toContain('the plan we agreed on');
    const plain = await acme.prepare('not-uploaded-yet', 'no mention at all');
    expect(plain.status).toBe(200);
    const badCwd = await acme.call('/prepare', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ as: 'x', cwd: 7, text: 'x' }) });
    expect(badCwd.status).toBe(400);
  });

  it('a CATALOG bound to a Durable Object class without SQLite (new_classes) is 500 INVALID_CONFIG naming it (the second probe\'s N4)', async () => {
    const mf = service(base, undefined, true, false);
    const response = await client(mf, await hs256({ sub: 'kv' })).call('/sessions');
    const body = (await response.json()) as ErrorBody;
    expect({ status: response.status, code: body.code }).toEqual({ status: 500, code: 'SESSION_REFERENCE_INVALID_CONFIG' });
    expect(body.message).toMatch(/new_sqlite_classes/);
  });

  it('/prepare of a cited object that changed into a non-log drops its row: 502 INVALID_LOG without the tenant prefix, then the plain 404 of an unknown id', async () => {
    const mf = service(base);
    const acme = client(mf, await hs256({ sub: 'alice' }));
    expect((await acme.put('g1.jsonl', log('s-g1', 'zebracorn secret plan one'))).status).toBe(200);
    expect((await acme.put('own.jsonl', log('own', 'mine'))).status).toBe(200);
    expect((await acme.put('v.jsonl', log('s-v', 'vanishing'))).status).toBe(200);
    const bucket = await mf.getR2Bucket('SESSIONS');
    await bucket.put('tenants/alice/g1.jsonl', 'garbage, not a log\n');
    const cite = (id: string) => acme.prepare('own', `see ${formatSessionReferenceMention({ sessionId: id, label: id })}`);
    const broken = await cite('s-g1');
    expect({ status: broken.status, code: broken.body.code }).toEqual({ status: 502, code: 'SESSION_REFERENCE_INVALID_LOG' });
    expect(broken.body.message).toMatch(/^the log "g1\.jsonl" is not a readable dsh log/);
    expect(broken.body.message).not.toMatch(/tenants\/|sessionQuery/);
    expect(await (await acme.call('/search?as=own&q=zebracorn')).json()).toEqual([]);
    expect((await acme.candidates('as=own')).body.map((row) => row.sessionId)).toEqual(['s-v']);
    const unknown = { code: 'SESSION_REFERENCE_NOT_FOUND', message: 'unknown session id "s-g1": no session of this tenant has it' };
    expect(await cite('s-g1')).toEqual({ status: 404, body: unknown });
    await bucket.delete('tenants/alice/v.jsonl');
    expect(await cite('s-v')).toEqual({ status: 404, body: { ...unknown, message: 'unknown session id "s-v": no session of this tenant has it' } });
  });

  it('PUT answers 413 from Content-Length and 400 from a bad first line while the body stalls', async () => {
    const mf = service({ ...base, MAX_UPLOAD_BYTES: '400000' });
    const url = await mf.ready;
    const token = await hs256({ sub: 'acme' });
    const over = await stalledPut(url, 'big.jsonl', token, 209_715_200, 'x');
    expect({ status: over.status, code: over.body.code }).toEqual({ status: 413, code: 'REQUEST_TOO_LARGE' });
    const bad = await stalledPut(url, 'bad.jsonl', token, 300_000, '{"type":"garbage"}\n');
    expect({ status: bad.status, code: bad.body.code }).toEqual({ status: 400, code: 'SESSION_REFERENCE_INVALID_LOG' });
    expect(await (await mf.getR2Bucket('SESSIONS')).list({ prefix: 'tenants/' })).toMatchObject({ objects: [] });
  });

  it('refuses path segments with format characters, noncharacters or whitespace at an end (400 naming the segment); nothing is stored', async () => {
    const mf = service(base);
    const acme = client(mf, await hs256({ sub: 'acme' }));
    for (const path of ['a%E2%80%AEb.jsonl', 'a%E2%80%8Bb.jsonl', 'a%EF%BF%BFb', '%20', 'dir/a%20']) {
      const response = await acme.put(path, TARGET);
      const body = (await response.json()) as ErrorBody;
      expect({ path, status: response.status, code: body.code }).toEqual({ path, status: 400, code: 'SESSION_REFERENCE_INVALID_ARGUMENT' });
      expect(body.message).toContain('path segment');
    }
    expect((await acme.put('a%C2%A0b.jsonl', TARGET)).status).toBe(200);
    expect((await (await mf.getR2Bucket('SESSIONS')).list({ prefix: 'tenants/' })).objects.map((object) => object.key)).toEqual(['tenants/acme/a\u00a0b.jsonl']);
  });
});
