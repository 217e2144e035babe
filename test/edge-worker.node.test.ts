/**
 * Acceptance test of the edge Worker (examples/edge-worker): `npm run build:edge` writes one ESM
 * bundle, which is loaded as it is into plain Miniflare (workerd, no compatibility flags, no
 * nodejs_compat) with an R2 bucket bound as SESSIONS. Real dsh logs are uploaded under arbitrary
 * keys (as `.jsonl.zstd` and as `.jsonl`), generated ones beside them, and both routes are called
 * over HTTP: composed message and metadata, candidates, and every error status. Cancellation runs
 * the same bundle inside workerd behind a small harness module that calls its `fetch` with a
 * `Request` whose signal aborts while R2 reads are slow.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createSessionReferences,
  encodeSessionReferenceUri,
  type SessionSearchHit,
  formatSessionReferenceMention,
  type SessionCandidate,
  type SessionReferenceMetadata,
  type UserMessage,
} from '../src/index.js';
import { createMemorySessionQuery, createObjectStoreSessionQuery, parseSessionLog } from '../src/store/index.js';
import { concatBytes } from './fixtures/base64.js';
import { fakeBucket, rawZstdFrame, realLogZstd, sessionLogText, zstdLog } from './fixtures/object-store.js';
import { rleFrame } from './fixtures/zstd-build.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const WORKER = join(ROOT, 'examples/edge-worker/dist/worker.js');
const REAL_LOG_PATH = join(ROOT, 'samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl');
const COMPATIBILITY_DATE = '2026-04-01';
const REAL_ID = 'session-904b047f-eb01-493f-b98a-391ecfae5b66';
const REAL_CWD = '/home/user/projects/01_unicorn/77-Dumen';
const REAL_TITLE = 'Bu projeyi gemini ile geliştiriyorduk';

const realText = readFileSync(REAL_LOG_PATH, 'utf8');
const encoder = new TextEncoder();

/** Generated sessions: the target (same cwd as the real log), a sibling, one without cwd. */
const TARGET = sessionLogText({ id: 'target', createdAt: 1_800_000_000_000, cwd: REAL_CWD, turns: [['user', 'new work']] });
const NOTES = sessionLogText({
  id: 'notes-42',
  createdAt: 1_700_000_000_000,
  cwd: '/srv/notes',
  title: 'Release notes',
  turns: [
    ['user', 'Draft the <release> notes'],
    ['assistant', 'Drafted: v1.2 fixes the parser.'],
  ],
});
const LOOSE = sessionLogText({ id: 'loose', createdAt: 1_600_000_000_000, turns: [['assistant', 'no cwd here']] });
/** A valid header, then a line that is not JSON: the listing works, reading the log fails. */
const CORRUPT_BODY = `${sessionLogText({ id: 'corrupt-body', createdAt: 1_500_000_000_000 })}this is not json\n{}\n`;
/** A valid header frame, then bytes that are not a zstd frame. */
const CORRUPT_FRAMES = concatBytes(
  rawZstdFrame(sessionLogText({ id: 'corrupt-frames', createdAt: 1_400_000_000_000 })),
  Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x08, 1, 2, 3, 4, 5, 6, 7, 8),
);

type Layout = 'zstd' | 'jsonl';

/** The bucket's objects: the real log under an arbitrary key in the given layout, the others mixed. */
function objects(layout: Layout): Record<string, Uint8Array> {
  return {
    [layout === 'zstd' ? 'archive/2026/11/7f3a.jsonl.zstd' : 'archive/2026/11/7f3a.jsonl']:
      layout === 'zstd' ? realLogZstd() : encoder.encode(realText),
    'tenants/acme/current.jsonl.zstd': zstdLog(TARGET, 1),
    'notes.bin': zstdLog(NOTES, 2),
    'x': encoder.encode(LOOSE),
    'broken/body.jsonl': encoder.encode(CORRUPT_BODY),
    'broken/frames.jsonl.zstd': CORRUPT_FRAMES,
  };
}

async function upload(mf: Miniflare, layout: Layout): Promise<void> {
  const bucket = await mf.getR2Bucket('SESSIONS');
  for (const [key, bytes] of Object.entries(objects(layout))) await bucket.put(key, bytes);
}

/** What the library itself composes for the same input (the reference result). */
async function expectedMessage(message: UserMessage, config = {}): Promise<UserMessage> {
  const logs = [realText, TARGET, NOTES, LOOSE].map((text) => parseSessionLog(text));
  const refs = createSessionReferences({ sessionQuery: createMemorySessionQuery(logs), config });
  return refs.referenceUserMessage({ id: 'target', cwd: REAL_CWD }, message);
}

interface ErrorBody {
  code: string;
  message: string;
  cause?: { code: string; message: string };
}

const miniflares: Miniflare[] = [];

/** wrangler.toml's rules: the chunks are ES modules, libzstd.wasm and sqlite3.wasm compiled modules. */
const WORKER_MODULE_RULES = [
  { type: 'ESModule' as const, include: ['**/*.js'] },
  { type: 'CompiledWasm' as const, include: ['**/*.wasm'] },
];

/** The built Worker's modules (worker.js, its chunks, libzstd.wasm, sqlite3.wasm), for a Miniflare given modules one by one. */
function workerModules(): Array<{ type: 'ESModule' | 'CompiledWasm'; path: string; contents: string | Uint8Array }> {
  return readdirSync(dirname(WORKER)).map((file) =>
    file.endsWith('.wasm')
      ? { type: 'CompiledWasm' as const, path: file, contents: readFileSync(join(dirname(WORKER), file)) }
      : { type: 'ESModule' as const, path: file, contents: readFileSync(join(dirname(WORKER), file), 'utf8') },
  );
}

function plainWorker(bindings?: Record<string, string>): Miniflare {
  const mf = new Miniflare({
    modules: true,
    scriptPath: WORKER,
    modulesRules: WORKER_MODULE_RULES,
    compatibilityDate: COMPATIBILITY_DATE,
    r2Buckets: ['SESSIONS'],
    ...(bindings ? { bindings } : {}),
  });
  miniflares.push(mf);
  return mf;
}

beforeAll(() => {
  execFileSync(process.execPath, [join(ROOT, 'examples/edge-worker/build.mjs')], { cwd: ROOT, stdio: 'pipe' });
});

afterAll(async () => {
  await Promise.all(miniflares.map((mf) => mf.dispose()));
});

describe('npm run build:edge', () => {
  it('writes worker.js, its chunks, libzstd.wasm and sqlite3.wasm, importing nothing else and nothing of Node', () => {
    expect(existsSync(WORKER)).toBe(true);
    const code = readFileSync(WORKER, 'utf8');
    // Static imports: the shared chunks, libzstd's and SQLite's modules (compiled modules in workerd).
    const imported = [...code.matchAll(/\bimport\s*[^;()]*?from\s*["']([^"']+)["']/g)].map((match) => match[1]);
    expect(imported).toEqual(expect.arrayContaining(['./libzstd.wasm', './sqlite3.wasm']));
    for (const specifier of imported) expect(specifier).toMatch(/^\.\/(chunk-[\w-]+\.js|libzstd\.wasm|sqlite3\.wasm)$/);
    for (const file of readdirSync(dirname(WORKER))) expect(readFileSync(join(dirname(WORKER), file), 'latin1')).not.toMatch(/\brequire\(|["']node:/);
    expect(code).toMatch(/export\s*\{[^}]*as default\s*\}/);
    const config = readFileSync(join(ROOT, 'examples/edge-worker/wrangler.toml'), 'utf8');
    expect(config).toMatch(/binding\s*=\s*"SESSIONS"/);
    expect(config).toMatch(/^main\s*=\s*"dist\/worker\.js"/m);
    expect(config.match(/^compatibility_flags\s*=.*$/m)?.[0] ?? '').not.toMatch(/nodejs_compat/);
  });
});

describe.each<Layout>(['zstd', 'jsonl'])('the built Worker in plain Miniflare, real log uploaded as .%s', (layout) => {
  let mf: Miniflare;
  const call = (path: string, init?: RequestInit) => mf.dispatchFetch(`https://edge.test${path}`, init as never);
  const post = (body: unknown) =>
    call('/prepare', { method: 'POST', headers: { 'content-type': 'application/json' }, body: typeof body === 'string' ? body : JSON.stringify(body) });

  beforeAll(async () => {
    mf = plainWorker();
    await upload(mf, layout);
  });

  it('GET /candidates lists other sessions by header id, same cwd first, with titles and mentions', async () => {
    const response = await call(`/candidates?as=target`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('application/json');
    const rows = (await response.json()) as SessionCandidate[];
    expect(rows.map((row) => row.sessionId)).toEqual([REAL_ID, 'loose', 'corrupt-body', 'corrupt-frames', 'notes-42']);
    expect(rows[0]).toEqual({
      sessionId: REAL_ID,
      label: REAL_TITLE,
      cwd: REAL_CWD,
      createdAt: 1789415426008,
      mention: formatSessionReferenceMention({ sessionId: REAL_ID, label: REAL_TITLE }),
    });
    expect(rows[4]).toMatchObject({ sessionId: 'notes-42', label: 'Release notes', cwd: '/srv/notes' });
  });

  it('GET /candidates filters by q and honours limit', async () => {
    const filtered = (await (await call('/candidates?as=target&q=NOTES')).json()) as SessionCandidate[];
    expect(filtered.map((row) => row.sessionId)).toEqual(['notes-42']);
    const limited = (await (await call('/candidates?as=target&q=&limit=2')).json()) as SessionCandidate[];
    expect(limited.map((row) => row.sessionId)).toEqual([REAL_ID, 'loose']);
  });

  it('GET /candidates?titles=1 also matches titles (SPEC §6.7); titles=0 or absent does not', async () => {
    const byTitle = (await (await call('/candidates?as=target&q=release&titles=1')).json()) as SessionCandidate[];
    expect(byTitle.map((row) => [row.sessionId, row.label])).toEqual([['notes-42', 'Release notes']]);
    for (const path of ['/candidates?as=target&q=release', '/candidates?as=target&q=release&titles=0']) {
      expect(await (await call(path)).json()).toEqual([]);
    }
    const bad = await call('/candidates?as=target&q=release&titles=yes');
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'SESSION_REFERENCE_INVALID_ARGUMENT', message: expect.stringContaining('"yes"') });
  });

  it('POST /prepare { as, text } returns the composed message of SPEC §9.4 and its metadata', async () => {
    const mention = formatSessionReferenceMention({ sessionId: REAL_ID, label: 'dumen' });
    const text = `Continue ${mention} and compare with ${encodeSessionReferenceUri('notes-42')} please`;
    const response = await post({ as: 'target', text });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { message: UserMessage; metadata: SessionReferenceMetadata };
    const expected = await expectedMessage({ id: body.message.id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } });
    expect(body.message).toEqual(expected);
    expect(body.metadata).toEqual(expected.envelope!.contexts[0]!.metadata);
    expect(body.message.envelope!.display).toEqual([{ type: 'text', text: 'Continue @dumen and compare with @notes-42 please' }]);
    const visible = (body.message.content[0] as { text: string }).text;
    expect(visible.startsWith('## Referenced sessions\n\n')).toBe(true);
    expect(visible).toContain('Bu projeyi gemini ile');
    expect(visible).toContain('\\u003crelease>');
    expect(visible.endsWith('</referenced-sessions>\n\n## My request:\n\n')).toBe(true);
    expect(body.message.content.slice(1)).toEqual([{ type: 'text', text: 'Continue @dumen and compare with @notes-42 please' }]);
    expect(body.metadata.references.map((r) => [r.sessionId, r.label, r.capturedThroughSeq])).toEqual([
      [REAL_ID, 'dumen', 98],
      ['notes-42', 'notes-42', 2],
    ]);
  });

  it('POST /prepare { as, message } keeps the message id and source', async () => {
    const message: UserMessage = {
      id: 'msg-7',
      role: 'user',
      content: [{ type: 'text', text: `See ${formatSessionReferenceMention({ sessionId: REAL_ID })}` }, { type: 'image', url: 'x' }],
      source: { kind: 'user', via: 'edge' },
    };
    const response = await post({ as: 'target', message });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { message: UserMessage; metadata: SessionReferenceMetadata };
    expect(body.message).toEqual(await expectedMessage(message));
    expect(body.message.id).toBe('msg-7');
  });

  it('POST /prepare without mentions returns the message unchanged and null metadata', async () => {
    const body = (await (await post({ as: 'target', text: 'plain prompt' })).json()) as { message: UserMessage; metadata: unknown };
    expect(body.message).toMatchObject({ role: 'user', content: [{ type: 'text', text: 'plain prompt' }], source: { kind: 'user' } });
    expect(body.message.envelope).toBeUndefined();
    expect(body.metadata).toBeNull();
  });

  it('400 for malformed JSON and invalid input', async () => {
    const cases: Array<[unknown, string]> = [
      ['{"as": "target", "text": ', 'SESSION_REFERENCE_INVALID_ARGUMENT'],
      ['[1, 2]', 'SESSION_REFERENCE_INVALID_ARGUMENT'],
      [{ text: 'no target' }, 'SESSION_REFERENCE_INVALID_ARGUMENT'],
      [{ as: 'target' }, 'SESSION_REFERENCE_INVALID_ARGUMENT'],
      [{ as: 'target', text: 'a', message: { content: [] } }, 'SESSION_REFERENCE_INVALID_ARGUMENT'],
      [{ as: 'target', text: 42 }, 'SESSION_REFERENCE_INVALID_ARGUMENT'],
      [{ as: 'target', text: 'bad @[x](dsh-session:AAAA)' }, 'SESSION_REFERENCE_INVALID_REFERENCE'],
      [{ as: 'target', text: `me ${formatSessionReferenceMention({ sessionId: 'target' })}` }, 'SESSION_REFERENCE_SELF_REFERENCE'],
      [
        { as: 'target', text: ['a', 'b', 'c', 'd'].map((id) => formatSessionReferenceMention({ sessionId: id })).join(' ') },
        'SESSION_REFERENCE_TOO_MANY',
      ],
    ];
    for (const [body, code] of cases) {
      const response = await post(body);
      const error = (await response.json()) as ErrorBody;
      expect([response.status, error.code], JSON.stringify(body)).toEqual([400, code]);
      expect(error.message.length).toBeGreaterThan(0);
    }
    for (const path of ['/candidates', '/candidates?as=target&limit=abc', '/candidates?as=target&limit=0', '/candidates?as=']) {
      const response = await call(path);
      expect([response.status, ((await response.json()) as ErrorBody).code], path).toEqual([400, 'SESSION_REFERENCE_INVALID_ARGUMENT']);
    }
  });

  it('404 for an unknown target, an unknown cited session and an unknown route; 405 for a wrong method', async () => {
    for (const response of [
      await call('/candidates?as=nobody'),
      await post({ as: 'nobody', text: 'hi' }),
      await post({ as: 'target', text: `see ${formatSessionReferenceMention({ sessionId: 'ghost' })}` }),
    ]) {
      expect(response.status).toBe(404);
      const error = (await response.json()) as ErrorBody;
      expect(error.code).toBe('SESSION_REFERENCE_NOT_FOUND');
      expect(error.message).toMatch(/"nobody"|"ghost"/);
    }
    const route = await call('/nowhere');
    expect([route.status, ((await route.json()) as ErrorBody).code]).toEqual([404, 'ROUTE_NOT_FOUND']);
    const method = await call('/prepare');
    expect([method.status, method.headers.get('allow'), ((await method.json()) as ErrorBody).code]).toEqual([405, 'POST', 'METHOD_NOT_ALLOWED']);
    expect((await call('/candidates?as=target', { method: 'POST' })).status).toBe(405);
  });

  it('502 when a cited log cannot be read (corrupt line, corrupt zstd frame)', async () => {
    for (const id of ['corrupt-body', 'corrupt-frames']) {
      const response = await post({ as: 'target', text: `see ${formatSessionReferenceMention({ sessionId: id })}` });
      const error = (await response.json()) as ErrorBody;
      expect([response.status, error.code, error.cause?.code]).toEqual([502, 'SESSION_REFERENCE_READ_FAILED', 'SESSION_REFERENCE_INVALID_LOG']);
      expect(error.cause!.message).toContain('broken/');
    }
  });
});

describe('the built Worker configured through [vars]', () => {
  let mf: Miniflare;
  /** One Miniflare, one plain Worker (the built file as it is) per configuration, each with its own bucket. */
  const CONFIGS: Record<string, Record<string, string>> = {
    tiny: { MAX_REFERENCE_BYTES: '100' },
    small: { MAX_REFERENCE_BYTES: '600' },
    prefixed: { KEY_PREFIX: 'tenants/' },
  };
  const call = async (worker: string, path: string, init?: RequestInit) =>
    (await mf.getWorker(worker)).fetch(`https://edge.test${path}`, init as never) as unknown as Promise<Response>;

  beforeAll(async () => {
    mf = new Miniflare({
      workers: Object.entries(CONFIGS).map(([name, bindings]) => ({
        name,
        modules: true,
        scriptPath: WORKER,
        modulesRules: WORKER_MODULE_RULES,
        compatibilityDate: COMPATIBILITY_DATE,
        r2Buckets: { SESSIONS: `sessions-${name}` },
        bindings,
      })),
    });
    miniflares.push(mf);
    for (const name of Object.keys(CONFIGS)) {
      const bucket = await mf.getR2Bucket('SESSIONS', name);
      for (const [key, bytes] of Object.entries(objects('zstd'))) await bucket.put(key, bytes);
    }
  });

  it('413 when a cited session cannot fit MAX_REFERENCE_BYTES', async () => {
    const response = await call('tiny', '/prepare', {
      method: 'POST',
      body: JSON.stringify({ as: 'target', text: `see ${formatSessionReferenceMention({ sessionId: REAL_ID })}` }),
    });
    const error = (await response.json()) as ErrorBody;
    expect([response.status, error.code]).toEqual([413, 'SESSION_REFERENCE_BUDGET_EXCEEDED']);
    expect(error.message).toContain('100');
  });

  it('a small budget truncates instead when the reference can fit, and reports it in metadata', async () => {
    const text = `see ${formatSessionReferenceMention({ sessionId: REAL_ID })}`;
    const response = await call('small', '/prepare', { method: 'POST', body: JSON.stringify({ as: 'target', text }) });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { message: UserMessage; metadata: SessionReferenceMetadata };
    expect(body.message).toEqual(
      await expectedMessage({ id: body.message.id, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } }, { maxReferenceBytes: 600 }),
    );
    expect(body.metadata.references[0]).toMatchObject({ truncated: true, budgetBytes: 600 });
    expect(body.metadata.references[0]!.serializedBytes).toBeLessThanOrEqual(600);
  });

  it('KEY_PREFIX restricts the listing; a broken log inside the listed keys is a 502', async () => {
    const rows = (await (await call('prefixed', '/candidates?as=target')).json()) as SessionCandidate[];
    expect(rows).toEqual([]);
    await (await mf.getR2Bucket('SESSIONS', 'prefixed')).put('tenants/acme/README.md', 'not a session log\n');
    const response = await call('prefixed', '/candidates?as=target');
    const error = (await response.json()) as ErrorBody;
    expect([response.status, error.code]).toEqual([502, 'SESSION_REFERENCE_INVALID_LOG']);
    expect(error.message).toContain('tenants/acme/README.md');
  });
});

/**
 * A harness module beside the built Worker: it calls the Worker's own `fetch` inside workerd with
 * a `Request` whose signal a controller aborts, an R2 binding made slow, or other `env` values.
 */
const HARNESS = `
import { wasmInstances } from './spy.mjs';
import worker from './worker.js';

export default {
  async fetch(request, env) {
    const spec = await request.json();
    const gets = [];
    const puts = [];
    const controller = new AbortController();
    // With holdGets, every R2 get waits here until the Worker has answered, then finds its object
    // gone; the client goes away as soon as the first get has started.
    let answerHeld;
    const held = new Promise((resolve) => (answerHeld = resolve));
    const sessions = spec.failList
      ? { list: async () => { throw new Error('R2 list exploded'); }, get: (key, options) => env.SESSIONS.get(key, options) }
      : {
          list: (options) => env.SESSIONS.list(options),
          put: (key, value) => (puts.push(key), env.SESSIONS.put(key, value)),
          get: async (key, options) => {
            gets.push(key);
            if (!spec.holdGets) return env.SESSIONS.get(key, options);
            if (gets.length === 1) setTimeout(() => controller.abort(new Error('client went away')), 0);
            await held;
            return null;
          },
        };
    if (spec.abortBefore) controller.abort(new Error('client went away'));
    const inner = new Request('https://edge.test' + spec.path, {
      method: spec.method ?? 'GET',
      body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
      signal: controller.signal,
    });
    const response = await worker.fetch(inner, { ...env, ...(spec.env ?? {}), SESSIONS: sessions });
    const body = await response.json();
    const getsAtResponse = gets.length;
    // The held gets answer now; whatever they lead to runs before this timer (microtasks first).
    answerHeld();
    await new Promise((resolve) => setTimeout(resolve, 0));
    return Response.json({ status: response.status, body, getsAtResponse, getsLater: gets.length, gets, puts, wasmInstances });
  },
};
`;

/** Evaluated before worker.js: records the exports of every WebAssembly module instantiated. */
const SPY = `
export const wasmInstances = [];
const Instance = WebAssembly.Instance;
WebAssembly.Instance = function (module, imports) {
  wasmInstances.push(WebAssembly.Module.exports(module).map((entry) => entry.name));
  return new Instance(module, imports);
};
`;

/** A Miniflare running the built Worker behind the harness and the spy, with an empty SESSIONS bucket. */
function harnessMiniflare(): Miniflare {
  const mf = new Miniflare({
    modules: [
      { type: 'ESModule', path: 'harness.mjs', contents: HARNESS },
      { type: 'ESModule', path: 'spy.mjs', contents: SPY },
      ...workerModules(),
    ],
    compatibilityDate: COMPATIBILITY_DATE,
    r2Buckets: ['SESSIONS'],
  });
  miniflares.push(mf);
  return mf;
}

describe('cancellation and store failures, the built Worker inside workerd', () => {
  let mf: Miniflare;
  interface HarnessResult {
    status: number;
    body: ErrorBody & { message: unknown };
    getsAtResponse: number;
    getsLater: number;
    wasmInstances: string[][];
  }
  const harness = async (spec: Record<string, unknown>): Promise<HarnessResult> =>
    (await (await mf.dispatchFetch('https://harness.test/', { method: 'POST', body: JSON.stringify(spec) })).json()) as HarnessResult;

  beforeAll(async () => {
    mf = harnessMiniflare();
    await upload(mf, 'zstd');
    const bucket = await mf.getR2Bucket('SESSIONS');
    for (let i = 0; i < 12; i++) await bucket.put(`more/${i}`, sessionLogText({ id: `more-${i}`, createdAt: i }));
  });

  it('the harness reaches the same answers as plain HTTP', async () => {
    const result = await harness({ path: '/candidates?as=target&q=notes' });
    expect(result.status).toBe(200);
    expect((result.body as unknown as SessionCandidate[]).map((row) => row.sessionId)).toEqual(['notes-42']);
  });

  it('decodes zstd logs with libzstd in WebAssembly: the module worker.js imports, instantiated once (SPEC §11.2)', async () => {
    const result = await harness({ path: '/candidates?as=target' });
    expect(result.status).toBe(200);
    // The bucket holds zstd logs: their headers were decoded by one instance of libzstd's module.
    expect(result.wasmInstances.filter((names) => names.includes('ZSTD_decompressStream'))).toHaveLength(1);
  });

  it('a request whose client went away while R2 reads were held answers 499 CANCELLED without waiting for them, and stops reading', async () => {
    for (const [path, method, body] of [
      ['/prepare', 'POST', { as: 'target', text: `see ${formatSessionReferenceMention({ sessionId: REAL_ID })}` }],
      ['/candidates?as=target', 'GET', undefined],
    ] as const) {
      // The held gets answer only after the response, so a Worker that waited for them would
      // never answer (the test would fail at its hang guard): answering at all is not waiting.
      const result = await harness({ path, method, body, holdGets: true });
      expect([result.status, result.body.code], path).toEqual([499, 'SESSION_REFERENCE_CANCELLED']);
      // The first batch of header reads was in flight (6 at most); none started after the abort.
      expect(result.getsAtResponse).toBeGreaterThan(0);
      expect(result.getsAtResponse).toBeLessThanOrEqual(6);
      expect(result.getsLater).toBe(result.getsAtResponse);
    }
  });

  it('an already aborted request reads nothing', async () => {
    const result = await harness({ path: '/candidates?as=target', abortBefore: true });
    expect([result.status, result.body.code, result.getsLater]).toEqual([499, 'SESSION_REFERENCE_CANCELLED', 0]);
  });

  it('502 READ_FAILED when R2 itself fails', async () => {
    const result = await harness({ path: '/candidates?as=target', failList: true });
    expect([result.status, result.body.code]).toEqual([502, 'SESSION_REFERENCE_READ_FAILED']);
    expect(result.body.message).toContain('R2 list exploded');
  });

  it('500 INVALID_CONFIG for a malformed [vars] value', async () => {
    const result = await harness({ path: '/candidates?as=target', env: { MAX_REFERENCE_BYTES: 'lots' } });
    expect([result.status, result.body.code]).toEqual([500, 'SESSION_REFERENCE_INVALID_CONFIG']);
    const zero = await harness({ path: '/candidates?as=target', env: { MAX_REFERENCES: '0' } });
    expect([zero.status, zero.body.code]).toEqual([500, 'SESSION_REFERENCE_INVALID_CONFIG']);
  });

  it('reads [vars] numbers and ?limit= with the CLI’s parser: decimal digits only, quoted as given', async () => {
    for (const bad of [' 5', '5 ', '+5', '1e3', '0x10', '9007199254740993']) {
      const result = await harness({ path: '/candidates?as=target', env: { MAX_LOG_BYTES: bad } });
      expect([result.status, result.body.code]).toEqual([500, 'SESSION_REFERENCE_INVALID_CONFIG']);
      expect(result.body.message).toBe(`MAX_LOG_BYTES must be a positive integer in decimal digits (at most 9007199254740991), got ${JSON.stringify(bad)}`);
      const limit = await harness({ path: `/candidates?as=target&limit=${encodeURIComponent(bad)}` });
      expect([limit.status, limit.body.code, limit.body.message]).toEqual([400, 'SESSION_REFERENCE_INVALID_ARGUMENT', `limit must be a positive integer in decimal digits (at most 9007199254740991), got ${JSON.stringify(bad)}`]);
    }
  });

  it('MAX_LOG_BYTES bounds every log read; the Worker’s default is 64 MiB, not the library’s 4 GiB', async () => {
    const bucket = await mf.getR2Bucket('SESSIONS');
    // About 2 KB of zstd: a header, 520 RLE blocks of blank lines (65 MiB decoded), then a title.
    const blank = concatBytes(
      rawZstdFrame(sessionLogText({ id: 'blank-lines', createdAt: 1 })),
      rleFrame(0x0a, 520),
      rawZstdFrame(`${JSON.stringify({ type: 'session/title', seq: 1, time: 1, data: { title: 'Past the limit' } })}\n`),
    );
    expect(blank.length).toBeLessThan(4096);
    await bucket.put('hostile/blank.jsonl.zstd', blank);
    try {
      const mention = formatSessionReferenceMention({ sessionId: REAL_ID });
      const small = await harness({ path: '/prepare', method: 'POST', body: { as: 'target', text: `see ${mention}` }, env: { MAX_LOG_BYTES: '1000' } });
      // The store's INVALID_LOG, as prepare reports a host read that failed (READ_FAILED, cause kept).
      expect([small.status, small.body.code, small.body.cause?.code]).toEqual([502, 'SESSION_REFERENCE_READ_FAILED', 'SESSION_REFERENCE_INVALID_LOG']);
      expect(small.body.cause?.message).toContain('maxLogBytes (1000 bytes)');
      // The default stops the 65 MiB log: its row falls back to its id. A larger setting reads it.
      const label = async (env?: Record<string, string>) => {
        const result = await harness({ path: '/candidates?as=target&titles=1&q=blank', ...(env ? { env } : {}) });
        expect(result.status).toBe(200);
        return (result.body as unknown as SessionCandidate[]).find((row) => row.sessionId === 'blank-lines')?.label;
      };
      expect(await label()).toBe('blank-lines');
      expect(await label({ MAX_LOG_BYTES: String(80 * 1024 * 1024) })).toBe('Past the limit');
    } finally {
      await bucket.delete('hostile/blank.jsonl.zstd');
    }
  });

  it('a number past 2^53 − 1 is quoted as given, not as it would be rounded', async () => {
    const config = await harness({ path: '/candidates?as=target', env: { MAX_REFERENCE_BYTES: '9007199254740993' } });
    expect([config.status, config.body.code]).toEqual([500, 'SESSION_REFERENCE_INVALID_CONFIG']);
    expect(config.body.message).toContain('"9007199254740993"');
    const limit = await harness({ path: '/candidates?as=target&limit=9007199254740993' });
    expect([limit.status, limit.body.code]).toEqual([400, 'SESSION_REFERENCE_INVALID_ARGUMENT']);
    expect(limit.body.message).toContain('"9007199254740993"');
  });
});

describe('GET /search: the built Worker inside workerd, the index kept in the bucket (SPEC §16.4, §16.6)', () => {
  let mf: Miniflare;
  const INDEX_KEY = 'logs/.dsh-session-reference/search-index';
  const LOGS: Record<string, Uint8Array> = {
    'logs/archive/7f3a.jsonl.zstd': realLogZstd(),
    'logs/current.jsonl.zstd': zstdLog(TARGET, 1),
    'logs/notes.bin': zstdLog(NOTES, 2),
    'logs/x': encoder.encode(LOOSE),
  };
  interface SearchResult {
    status: number;
    body: unknown;
    gets: string[];
    puts: string[];
  }
  const search = async (path: string, env: Record<string, string> = { KEY_PREFIX: 'logs/' }): Promise<SearchResult> =>
    (await (await mf.dispatchFetch('https://harness.test/', { method: 'POST', body: JSON.stringify({ path, env }) })).json()) as SearchResult;
  /** Gets of logs: every get but the index object's own. */
  const logGets = (result: SearchResult) => result.gets.filter((key) => key !== INDEX_KEY);
  /**
   * Hits whose scores need only be within 0.005 of these: workerd's ICU segments some words
   * differently from Node's, which moves BM25's average lengths in the fourth decimal (rounding
   * both sides to 3 decimals failed when a score sat on a rounding boundary: 1.3515).
   */
  const approximately = (hits: SessionSearchHit[]) => hits.map((hit) => ({ ...hit, score: expect.closeTo(hit.score, 2) }));
  /** What the library itself answers in Node over the same objects (the reference result), scores approximate. */
  const expectedHits = async (query: string, limit?: number) => {
    const sessionQuery = createObjectStoreSessionQuery(fakeBucket(LOGS).bucket, { prefix: 'logs/' });
    const refs = createSessionReferences({ sessionQuery });
    return approximately(await refs.searchSessions({ id: 'target', cwd: REAL_CWD }, query, limit === undefined ? {} : { limit }));
  };

  beforeAll(async () => {
    mf = harnessMiniflare();
    const bucket = await mf.getR2Bucket('SESSIONS');
    for (const [key, bytes] of Object.entries(LOGS)) await bucket.put(key, bytes);
  });

  it('finds a session by words said in it, writes the index beside the logs, and a second request reuses it', async () => {
    const first = await search('/search?as=target&q=amodei%20altman');
    expect(first.status).toBe(200);
    const hits = first.body as SessionSearchHit[];
    expect(hits.map((hit) => hit.sessionId)).toEqual([REAL_ID]);
    expect(hits).toEqual(await expectedHits('amodei altman'));
    // Every log was read once to build the index, which was written under its own key.
    expect(logGets(first).filter((key) => key === 'logs/archive/7f3a.jsonl.zstd').length).toBeGreaterThan(0);
    expect(first.puts).toEqual([INDEX_KEY]);
    const stored = await (await mf.getR2Bucket('SESSIONS')).get(INDEX_KEY);
    expect(stored).not.toBeNull();

    // Nothing changed: the listing's headers only, no log body, and the same index is not written again.
    const second = await search('/search?as=target&q=parser');
    expect(second.status).toBe(200);
    expect((second.body as SessionSearchHit[]).map((hit) => hit.sessionId)).toEqual(['notes-42']);
    expect(second.body).toEqual(await expectedHits('parser'));
    const snippet = (second.body as SessionSearchHit[])[0]!.snippets[0]!;
    expect(snippet.highlights.map(([start, end]) => snippet.text.slice(start, end))).toEqual(['parser']);
    expect(second.gets).toContain(INDEX_KEY);
    expect(logGets(second).length).toBeLessThan(logGets(first).length);
    expect(second.puts).toEqual([]);
  });

  it('the index object is never listed as a log: /candidates and /search see the same sessions as without it', async () => {
    const rows = (await search('/candidates?as=target')).body as SessionCandidate[];
    expect(rows.map((row) => row.sessionId)).toEqual([REAL_ID, 'loose', 'notes-42']);
    const empty = (await search('/search?as=target&q=')).body as SessionSearchHit[];
    expect(empty.map((hit) => [hit.sessionId, hit.score])).toEqual([[REAL_ID, 0], ['loose', 0], ['notes-42', 0]]);
  });

  it('a corrupt or foreign index object is rebuilt silently and overwritten: the right answer, never an error', async () => {
    const bucket = await mf.getR2Bucket('SESSIONS');
    for (const bad of [encoder.encode('not an index at all'), encoder.encode('dsh-session-reference/search-index 9 abc\n{}'), new Uint8Array(0)]) {
      await bucket.put(INDEX_KEY, bad);
      const result = await search('/search?as=target&q=drafted&limit=1');
      expect(result.status).toBe(200);
      expect(result.body).toEqual(await expectedHits('drafted', 1));
      expect((result.body as SessionSearchHit[]).map((hit) => hit.sessionId)).toEqual(['notes-42']);
      expect(result.puts).toEqual([INDEX_KEY]);
    }
    // A stale index (a log changed after it was written) follows the change.
    await search('/search?as=target&q=parser');
    await bucket.put('logs/notes.bin', zstdLog(NOTES.replace('fixes the parser', 'fixes the tokenizer'), 2));
    try {
      const after = await search('/search?as=target&q=parser');
      expect(after.body).toEqual([]);
      expect(((await search('/search?as=target&q=tokenizer')).body as SessionSearchHit[]).map((hit) => hit.sessionId)).toEqual(['notes-42']);
    } finally {
      await bucket.put('logs/notes.bin', LOGS['logs/notes.bin']!);
    }
  });

  it('an index object over MAX_SEARCH_INDEX_BYTES is neither loaded nor written: the index is rebuilt, the answer the same', async () => {
    const stored = await search('/search?as=target&q=parser');
    expect(stored.status).toBe(200);
    const before = await (await (await mf.getR2Bucket('SESSIONS')).get(INDEX_KEY))!.arrayBuffer();
    // Any index of these logs is larger than 100 bytes: the stored one is not loaded, the rebuilt one not written.
    const capped = await search('/search?as=target&q=parser', { KEY_PREFIX: 'logs/', MAX_SEARCH_INDEX_BYTES: '100' });
    expect(capped.status).toBe(200);
    expect(capped.body).toEqual(await expectedHits('parser'));
    expect(logGets(capped).filter((key) => key === 'logs/archive/7f3a.jsonl.zstd').length).toBeGreaterThan(0);
    expect(capped.puts).toEqual([]);
    const after = await (await (await mf.getR2Bucket('SESSIONS')).get(INDEX_KEY))!.arrayBuffer();
    expect(new Uint8Array(after)).toEqual(new Uint8Array(before));
    // The limit is read as the other numbers are.
    expect((await search('/search?as=target&q=x', { KEY_PREFIX: 'logs/', MAX_SEARCH_INDEX_BYTES: '1e3' })).status).toBe(500);
  });

  it('400 for a missing q or as, a bad limit; 405 for a wrong method; 502 READ_FAILED when R2 fails', async () => {
    for (const path of ['/search?as=target', '/search?q=x', '/search?as=target&q=x&limit=0', '/search?as=target&q=x&limit=abc', '/search?as=target&q=x&limit=%205']) {
      const result = await search(path);
      expect([result.status, (result.body as ErrorBody).code], path).toEqual([400, 'SESSION_REFERENCE_INVALID_ARGUMENT']);
    }
    const bad = (await search('/search?as=target&q=x&limit=1e3')).body as ErrorBody;
    expect(bad.message).toBe('limit must be a positive integer in decimal digits (at most 9007199254740991), got "1e3"');
    const post = await mf.dispatchFetch('https://harness.test/', { method: 'POST', body: JSON.stringify({ path: '/search?as=target&q=x', method: 'POST', body: {} }) });
    expect(((await post.json()) as SearchResult).status).toBe(405);
    const failed = (await (
      await mf.dispatchFetch('https://harness.test/', { method: 'POST', body: JSON.stringify({ path: '/search?as=target&q=x', failList: true }) })
    ).json()) as SearchResult;
    expect([failed.status, (failed.body as ErrorBody).code]).toEqual([502, 'SESSION_REFERENCE_READ_FAILED']);
    expect((failed.body as ErrorBody).message).toContain('R2 list exploded');
  });

  it('a log that cannot be read fails the whole search with 502, never a partial answer', async () => {
    const bucket = await mf.getR2Bucket('SESSIONS');
    await bucket.put('logs/broken.jsonl', encoder.encode(CORRUPT_BODY));
    try {
      const result = await search('/search?as=target&q=parser');
      expect(result.status).toBe(502);
      expect((result.body as ErrorBody).code).toMatch(/^SESSION_REFERENCE_(READ_FAILED|INVALID_LOG)$/);
    } finally {
      await bucket.delete('logs/broken.jsonl');
    }
  });
});
