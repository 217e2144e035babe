/**
 * CLI `push` (SPEC §17.8) against a loopback `node:http` server that answers the service's
 * `GET /sessions` and `PUT /sessions/{path}` (SPEC §17.4) as R2 would (etag = MD5 of the bytes),
 * and fails on purpose where a test says so: the retry path, refusals, the token rules, the
 * progress line and the concurrency limit. The run against the real service is in
 * push-edge.node.test.ts.
 */
import { createHash } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { main } from '../src/node/main.js';
import { pushStore, PUSH_TOKEN_VARIABLE, type PushSummary } from '../src/node/push.js';
import { sampleStoreRoot } from '../src/node/samples.js';

const TOKEN = 'test-token-0123456789';

/** Keys of the sample store's chosen logs (the v2 log beside a v3 one is not pushed). */
const SAMPLE_KEYS = [
  '77-Dumen/session-2b8e61d4-0f3a-4c7b-b9d2-5e7a1c3f9084/session.v3.jsonl.zstd',
  '77-Dumen/session-7d2f4c1a-93be-4f6e-8a05-c1e4b2d97a30/session.v3.jsonl',
  '77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl',
  'global/session-e5f1c2a0/session.jsonl',
  'ledger-service/session-4e6a2d9f-b1c8-47e0-9f35-a8d21c6b0e74/session.v3.jsonl.zstd',
  'ledger-service/session-91f4b0c6-2e7d-4a83-bd15-6c0e9a4f27d8/session.v3.jsonl',
  'ledger-service/session-c5a09e7b-4d1f-4b28-a6e3-8f2d0b7c1e59/session.v3.jsonl',
];

interface Stored {
  etag: string;
  size: number;
}

/** What a test makes the server do with one PUT: answer it, or refuse it with a status. */
type PutPlan = (key: string, attempt: number) => { status: number; headers?: Record<string, string>; body?: unknown } | 'store' | 'hold';

const servers: Array<{ close(): void }> = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

/** The stand-in service on 127.0.0.1: a page of `GET /sessions` holds two rows. */
async function service(plan: PutPlan = () => 'store') {
  const objects = new Map<string, Stored>();
  const puts: Array<{ key: string; authorization: string | undefined }> = [];
  const gets: string[] = [];
  const attempts = new Map<string, number>();
  const held: Array<() => void> = [];
  const state = { inFlight: 0, maxInFlight: 0 };
  const send = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url!, 'http://x');
    if (req.headers.authorization !== `Bearer ${TOKEN}`) {
      send(res, 401, { code: 'UNAUTHENTICATED', message: `bad token ${req.headers.authorization ?? ''}` }, { 'www-authenticate': 'Bearer' });
      return;
    }
    if (req.method === 'GET' && url.pathname === '/svc/sessions') {
      gets.push(url.search);
      const keys = [...objects.keys()].sort();
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const rows = keys.slice(start, start + 2).map((key) => ({ key, sessionId: 's', ...objects.get(key)!, uploaded: 1 }));
      send(res, 200, start + 2 < keys.length ? { rows, cursor: String(start + 2) } : { rows });
      return;
    }
    if (req.method === 'PUT' && url.pathname.startsWith('/svc/sessions/')) {
      const key = url.pathname.slice('/svc/sessions/'.length).split('/').map(decodeURIComponent).join('/');
      const attempt = (attempts.get(key) ?? 0) + 1;
      attempts.set(key, attempt);
      puts.push({ key, authorization: req.headers.authorization });
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const bytes = Buffer.concat(chunks);
        expect(bytes.length).toBe(Number(req.headers['content-length']));
        const action = plan(key, attempt);
        const store = () => {
          const etag = createHash('md5').update(bytes).digest('hex');
          objects.set(key, { etag, size: bytes.length });
          send(res, 200, { key, sessionId: 's', etag, size: bytes.length });
        };
        if (action === 'store') return store();
        if (action === 'hold') {
          state.inFlight++;
          state.maxInFlight = Math.max(state.maxInFlight, state.inFlight);
          held.push(() => {
            state.inFlight--;
            store();
          });
          return;
        }
        send(res, action.status, action.body ?? {}, action.headers);
      });
      return;
    }
    send(res, 404, { code: 'ROUTE_NOT_FOUND', message: 'no route' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}/svc`, objects, puts, gets, attempts, held, state };
}

function io(env: Record<string, string | undefined> = { [PUSH_TOKEN_VARIABLE]: TOKEN }, isTTY = false) {
  const out: string[] = [];
  const err: string[] = [];
  return {
    io: { stdout: { write: (text: string) => out.push(text) }, stderr: { write: (text: string) => err.push(text), isTTY }, env },
    stdout: () => out.join(''),
    stderr: () => err.join(''),
  };
}

const FAST = { attempts: 3, baseDelayMs: 1, maxWaitMs: 5_000 };

describe('push (SPEC §17.8)', () => {
  it('uploads every chosen log under its relative path, then nothing when unchanged', async () => {
    const svc = await service();
    const first = io();
    expect(await main(['push', '--to', svc.url, '--demo', '--json'], first.io)).toBe(0);
    const summary = JSON.parse(first.stdout()) as PushSummary;
    expect(summary).toMatchObject({ to: `${svc.url}/`, dryRun: false, uploaded: 7, unchanged: 0, failed: 0, pending: 0 });
    expect(summary.logs.map((log) => log.key)).toEqual(SAMPLE_KEYS);
    expect([...svc.objects.keys()].sort()).toEqual(SAMPLE_KEYS);
    for (const log of summary.logs) expect(svc.objects.get(log.key)).toEqual({ etag: log.md5, size: log.size });
    expect(svc.puts.every((put) => put.authorization === `Bearer ${TOKEN}`)).toBe(true);
    expect(first.stderr()).toBe(''); // not a terminal: no progress line

    const again = io();
    expect(await main(['push', '--to', svc.url, '--demo'], again.io)).toBe(0);
    expect(again.stdout()).toBe(`uploaded 0, unchanged 7, failed 0 — ${svc.url}/\n`);
    expect(svc.puts).toHaveLength(7); // no upload the second time
    expect(svc.gets).toEqual(['', '', '?cursor=2', '?cursor=4', '?cursor=6']); // the listing followed its cursor
  });

  it('uploads a changed log again; --dry-run uploads nothing', async () => {
    const svc = await service();
    await pushStore({ to: svc.url, root: sampleStoreRoot(), token: TOKEN });
    svc.objects.set(SAMPLE_KEYS[3]!, { etag: '"00000000000000000000000000000000"', size: 1 });
    const dry = io();
    expect(await main(['push', '--to', svc.url, '--demo', '--dry-run'], dry.io)).toBe(0);
    expect(dry.stdout()).toMatch(/^would upload 1, unchanged 6, failed 0 \(dry run: nothing uploaded\)/);
    expect(dry.stdout()).toContain(`would upload ${SAMPLE_KEYS[3]} (`);
    expect(svc.puts).toHaveLength(7);
    const summary = await pushStore({ to: svc.url, root: sampleStoreRoot(), token: TOKEN });
    expect(summary).toMatchObject({ uploaded: 1, unchanged: 6 });
    expect(svc.puts.at(-1)!.key).toBe(SAMPLE_KEYS[3]);
  });

  it('retries 429 after its Retry-After, and 5xx with backoff', async () => {
    const svc = await service((key, attempt) => {
      if (attempt > 1) return 'store';
      return key.includes('ledger') ? { status: 503, body: { code: 'INTERNAL_ERROR', message: 'busy' } } : { status: 429, headers: { 'retry-after': '0' }, body: { code: 'RATE_LIMITED', message: 'slow down' } };
    });
    const summary = await pushStore({ to: svc.url, root: sampleStoreRoot(), token: TOKEN, retry: FAST });
    expect(summary).toMatchObject({ uploaded: 7, failed: 0 });
    expect([...svc.attempts.values()]).toEqual([2, 2, 2, 2, 2, 2, 2]);
  });

  it('gives up after its attempts, or when Retry-After asks for longer than it waits; exit 1 on a failed upload', async () => {
    const svc = await service((key) =>
      key.startsWith('global/') ? { status: 503, body: { code: 'INTERNAL_ERROR', message: 'down' } }
      : key.includes('904b047f') ? { status: 429, headers: { 'retry-after': '3600' } }
      : key.includes('c5a09e7b') ? { status: 400, body: { code: 'SESSION_REFERENCE_INVALID_LOG', message: 'line 1 is not a dsh header' } }
      : 'store',
    );
    const summary = await pushStore({ to: svc.url, root: sampleStoreRoot(), token: TOKEN, retry: FAST });
    expect(summary).toMatchObject({ uploaded: 4, failed: 3 });
    const errors = Object.fromEntries(summary.logs.filter((log) => log.error).map((log) => [log.key, log.error]));
    expect(errors).toEqual({
      'global/session-e5f1c2a0/session.jsonl': 'SESSION_REFERENCE_READ_FAILED: PUT /sessions/global/session-e5f1c2a0/session.jsonl answered 503: INTERNAL_ERROR: down (after 3 attempts)',
      '77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl':
        'SESSION_REFERENCE_READ_FAILED: PUT /sessions/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl answered 429 (the service asked to retry after 3600 s)',
      'ledger-service/session-c5a09e7b-4d1f-4b28-a6e3-8f2d0b7c1e59/session.v3.jsonl': 'SESSION_REFERENCE_INVALID_LOG: line 1 is not a dsh header',
    });
    expect(svc.attempts.get('ledger-service/session-c5a09e7b-4d1f-4b28-a6e3-8f2d0b7c1e59/session.v3.jsonl')).toBe(1); // a 400 is not retried

    // Through the CLI: the refused log makes the exit status 1, and the summary names it.
    const refusing = await service((key) => (key.startsWith('global/') ? { status: 400, body: { code: 'SESSION_REFERENCE_INVALID_LOG', message: 'not a log' } } : 'store'));
    const run = io();
    expect(await main(['push', '--to', refusing.url, '--demo'], run.io)).toBe(1);
    expect(run.stdout()).toBe(
      `uploaded 6, unchanged 0, failed 1 — ${refusing.url}/\nfailed global/session-e5f1c2a0/session.jsonl: SESSION_REFERENCE_INVALID_LOG: not a log\n`,
    );
  });

  it('keeps at most 4 uploads in flight', async () => {
    const svc = await service(() => 'hold');
    const release = setInterval(() => {
      // Released once 4 are held, or once the last 3 are: never on a timer's say-so alone.
      if (svc.held.length === 4 || (svc.puts.length === 7 && svc.held.length > 0)) svc.held.splice(0).forEach((answer) => answer());
    }, 5);
    try {
      expect(await pushStore({ to: svc.url, root: sampleStoreRoot(), token: TOKEN })).toMatchObject({ uploaded: 7 });
    } finally {
      clearInterval(release);
    }
    expect(svc.state.maxInFlight).toBe(4);
  });

  it('draws a progress line on a terminal only', async () => {
    const svc = await service();
    const run = io(undefined, true);
    expect(await main(['push', '--to', svc.url, '--demo'], run.io)).toBe(0);
    expect(run.stderr()).toContain('\r\u001b[Kpushed 0/7: 0 uploaded, 0 unchanged, 0 failed');
    expect(run.stderr()).toContain('\r\u001b[Kpushed 7/7: 7 uploaded, 0 unchanged, 0 failed');
    expect(run.stderr().endsWith('\r\u001b[K')).toBe(true);
  });

  it('pushes a store holding a real dsh log, by its relative path', async () => {
    const root = mkdtempSync(join(tmpdir(), 'push-'));
    mkdirSync(join(root, 'proj x', 'sess%1'), { recursive: true });
    const log = `${JSON.stringify({ type: 'session', version: 3, id: 'pushed-1', createdAt: 1 })}\n`;
    writeFileSync(join(root, 'proj x', 'sess%1', 'session.v3.jsonl'), log);
    const svc = await service();
    const summary = await pushStore({ to: svc.url, root, token: TOKEN });
    expect(summary.logs).toEqual([{ key: 'proj x/sess%1/session.v3.jsonl', sessionId: 'pushed-1', size: log.length, md5: createHash('md5').update(log).digest('hex'), status: 'uploaded' }]);
    expect([...svc.objects.keys()]).toEqual(['proj x/sess%1/session.v3.jsonl']);
  });
});

describe('push: which logs', () => {
  it('pushes the log the store reads: the highest version, and of two directories with one id the first', async () => {
    const root = mkdtempSync(join(tmpdir(), 'push-'));
    const header = (id: string, version: number) => `${JSON.stringify({ type: 'session', version, id, createdAt: 1 })}\n`;
    const write = (path: string, text: string) => {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    };
    write('p/a/session.v2.jsonl', header('one', 2));
    write('p/a/session.v3.jsonl', header('one', 3));
    write('p/b/session.v3.jsonl', header('one', 3)); // the same id again: the store reads p/a
    write('p/c/session.jsonl', header('two', 1));
    write('p/c/notes.txt', 'not a log');
    write('p/d/session.v3.jsonl', ''); // no header yet: not a session
    const svc = await service();
    const summary = await pushStore({ to: svc.url, root, token: TOKEN });
    expect(summary.logs.map(({ key, sessionId }) => [key, sessionId])).toEqual([
      ['p/a/session.v3.jsonl', 'one'],
      ['p/c/session.jsonl', 'two'],
    ]);
  });
});

describe('push: one damaged log fails alone (issue 27)', () => {
  const header = (id: string) => `${JSON.stringify({ type: 'session', version: 3, id, createdAt: 1 })}\n`;
  /** The sample store's logs plus `extra` (path relative to the root → text), in a fresh directory. */
  function storeWith(extra: Record<string, string>): string {
    const root = mkdtempSync(join(tmpdir(), 'push-damaged-'));
    cpSync(sampleStoreRoot(), root, { recursive: true });
    for (const [path, text] of Object.entries(extra)) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return root;
  }

  it('uploads every other log and reports the malformed one in the summary and --json (exit 1)', async () => {
    // The probe's store10: a first line that is empty, then a valid header.
    const root = storeWith({ 'p/bad/session.v3.jsonl': `\n${header('bad-1')}`, 'p/good/session.v3.jsonl': header('good-1') });
    const svc = await service();
    const run = io();
    expect(await main(['push', '--to', svc.url, '--store', root, '--json'], run.io)).toBe(1);
    const summary = JSON.parse(run.stdout()) as PushSummary;
    expect(summary).toMatchObject({ uploaded: 8, unchanged: 0, failed: 1, pending: 0 });
    expect([...svc.objects.keys()].sort()).toEqual([...SAMPLE_KEYS, 'p/good/session.v3.jsonl'].sort());
    const bad = summary.logs.find((log) => log.key === 'p/bad/session.v3.jsonl');
    expect(bad).toMatchObject({ status: 'failed', size: 0, md5: '', code: 'SESSION_REFERENCE_INVALID_LOG' });
    expect(bad).not.toHaveProperty('sessionId');
    expect(bad!.error).toMatch(/^SESSION_REFERENCE_INVALID_LOG: .*session\.v3\.jsonl.*line 1/);
    expect(svc.puts.map((put) => put.key)).not.toContain('p/bad/session.v3.jsonl'); // refused locally: no upload

    const dry = io();
    expect(await main(['push', '--to', svc.url, '--store', root, '--dry-run'], dry.io)).toBe(1);
    expect(dry.stdout()).toMatch(/^would upload 0, unchanged 8, failed 1 \(dry run: nothing uploaded\)/);

    const text = io();
    expect(await main(['push', '--to', svc.url, '--store', root], text.io)).toBe(1);
    expect(text.stdout()).toMatch(new RegExp(`^uploaded 0, unchanged 8, failed 1 — ${svc.url}/\nfailed p/bad/session\.v3\.jsonl: SESSION_REFERENCE_INVALID_LOG: `));
  });

  it('chooses each directory\'s log by file name: a damaged newest log fails, the older one is not pushed in its place', async () => {
    const root = storeWith({ 'p/s/session.v2.jsonl': header('older'), 'p/s/session.v3.jsonl.zstd': 'not a zstd frame\n' });
    const svc = await service();
    const summary = await pushStore({ to: svc.url, root, token: TOKEN });
    expect(summary).toMatchObject({ uploaded: 7, failed: 1 });
    expect(summary.logs.find((log) => log.status === 'failed')).toMatchObject({ key: 'p/s/session.v3.jsonl.zstd', error: expect.stringMatching(/^SESSION_REFERENCE_/) });
    expect([...svc.objects.keys()]).not.toContain('p/s/session.v2.jsonl');
  });

  it('a project or session directory that cannot be listed is one failure each; the rest is pushed', async () => {
    // Root-proof unreadable directories: paths past PATH_MAX (4096 bytes). The root's own path stays
    // under it, so the store lists; the directories whose paths pass it cannot be read. Built from
    // the inside out with renames of short paths, as no single call may name a path that long.
    const tmp = mkdtempSync(join(tmpdir(), 'push-long-'));
    const long = (c: string) => c.repeat(255);
    mkdirSync(join(tmp, 'd', 'q', 's'), { recursive: true });
    writeFileSync(join(tmp, 'd', 'q', 's', 'session.v3.jsonl'), header('readable-1'));
    mkdirSync(join(tmp, 'd', long('P'), 's'), { recursive: true });
    mkdirSync(join(tmp, 'd', 'p', long('S')), { recursive: true });
    writeFileSync(join(tmp, 'd', 'p', long('S'), 'session.v3.jsonl'), header('unreadable-1'));
    let chain = join(tmp, 'd');
    for (let depth = 0; depth < 15; depth++) {
      mkdirSync(join(tmp, 'up'));
      renameSync(chain, join(tmp, 'up', long(String.fromCharCode(97 + depth))));
      renameSync(join(tmp, 'up'), join(tmp, 'd'));
    }
    let root = join(tmp, 'd');
    for (let depth = 14; depth >= 0; depth--) root = join(root, long(String.fromCharCode(97 + depth)));
    expect(Buffer.byteLength(join(root, 'q', 's', 'session.v3.jsonl'))).toBeLessThan(4096);
    expect(Buffer.byteLength(join(root, 'p', long('S')))).toBeGreaterThan(4096);
    const svc = await service();
    const summary = await pushStore({ to: svc.url, root, token: TOKEN });
    expect(summary.logs.map(({ key, status, error }) => [key, status, error?.replace(/cannot read .*: /, 'cannot read …: ')])).toEqual([
      [long('P'), 'failed', 'SESSION_REFERENCE_READ_FAILED: cannot read …: ENAMETOOLONG'],
      [`p/${long('S')}`, 'failed', 'SESSION_REFERENCE_READ_FAILED: cannot read …: ENAMETOOLONG'],
      ['q/s/session.v3.jsonl', 'uploaded', undefined],
    ]);
    expect([...svc.objects.keys()]).toEqual(['q/s/session.v3.jsonl']);
  });

  it('property: whatever mix of good, damaged and unfinished logs, exactly the good ones go up and each damaged one is named', async () => {
    const damaged = { emptyFirstLine: (id: string) => `\n${header(id)}`, notJson: () => 'garbage\n', notAHeader: () => '{"type":"message"}\n', noId: () => '{"type":"session","version":3}\n', nul: () => '\0\0\0\n' };
    const unfinished = { empty: () => '', torn: (id: string) => header(id).slice(0, 20) };
    const kinds = ['good', ...Object.keys(damaged), ...Object.keys(unfinished)] as const;
    const svc = await service();
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...kinds), { minLength: 1, maxLength: 8 }), async (folders) => {
        svc.objects.clear(); // every run starts from an empty service
        const root = mkdtempSync(join(tmpdir(), 'push-mix-'));
        const expected = { uploaded: [] as string[], failed: [] as string[] };
        folders.forEach((kind, i) => {
          const key = `p/s${i}/session.v3.jsonl`;
          const id = `s${i}`;
          const text = kind === 'good' ? header(id) : kind in damaged ? damaged[kind as keyof typeof damaged](id) : unfinished[kind as keyof typeof unfinished](id);
          mkdirSync(join(root, 'p', `s${i}`), { recursive: true });
          writeFileSync(join(root, key), text);
          if (kind === 'good') expected.uploaded.push(key);
          else if (kind in damaged) expected.failed.push(key);
        });
        const summary = await pushStore({ to: svc.url, root, token: TOKEN });
        expect(summary.logs.filter((log) => log.status === 'uploaded').map((log) => log.key)).toEqual(expected.uploaded);
        expect(summary.logs.filter((log) => log.status === 'failed').map((log) => [log.key, log.code])).toEqual(expected.failed.map((key) => [key, 'SESSION_REFERENCE_INVALID_LOG']));
        expect(summary).toMatchObject({ uploaded: expected.uploaded.length, failed: expected.failed.length, unchanged: 0 });
      }),
      { numRuns: 25 },
    );
  });

  it('a store whose root cannot be listed still refuses the whole push', async () => {
    const root = storeWith({});
    const svc = await service();
    const file = join(root, 'global', 'session-e5f1c2a0', 'session.jsonl');
    await expect(pushStore({ to: svc.url, root: file, token: TOKEN })).rejects.toMatchObject({ code: 'SESSION_REFERENCE_READ_FAILED' });
    expect(svc.puts).toEqual([]);
  });
});

describe('push: the token and the URL', () => {
  it('refuses --token with the reason, never echoing it (exit 2)', async () => {
    const run = io();
    expect(await main(['push', '--to', 'https://refs.example.test', '--token', 'hunter2-secret'], run.io)).toBe(2);
    expect(run.stderr()).toContain('--token is refused: flags show up in process lists and shell history; set DSH_SESSION_REFERENCE_TOKEN instead');
    expect(run.stderr()).not.toContain('hunter2');
  });

  it('a 401 exits 1 naming the variable; the token never shows, even when the server echoes it', async () => {
    const svc = await service();
    const wrong = 'wrong-token-abcdefgh';
    const run = io({ [PUSH_TOKEN_VARIABLE]: wrong });
    expect(await main(['push', '--to', svc.url, '--demo'], run.io)).toBe(1);
    expect(run.stderr()).toBe(
      `SESSION_REFERENCE_INVALID_CONFIG: GET /sessions answered 401: UNAUTHENTICATED: bad token Bearer [token] (set ${PUSH_TOKEN_VARIABLE} to a token the service accepts)\n`,
    );
    expect(svc.puts).toEqual([]);
  });

  it.each([
    ['http://refs.example.test/', /--to must be https: \(http: only to a loopback host\)/],
    ['https://me:hunter2@refs.example.test/', /--to must not carry a user name or password/],
    ['ftp://refs.example.test/', /--to must be an https: URL/],
    ['refs.example.test', /--to must be an absolute URL/],
    ['https://refs.example.test/?t=1', /--to must have no query or fragment/],
  ])('refuses --to %s (exit 2)', async (to, message) => {
    const run = io();
    expect(await main(['push', '--to', to, '--demo'], run.io)).toBe(2);
    expect(run.stderr()).toMatch(message);
    expect(run.stderr()).not.toContain('hunter2');
  });

  it('usage: --to is required, push takes no arguments, a token with spaces is refused', async () => {
    const run = io();
    expect(await main(['push', '--demo'], run.io)).toBe(2);
    expect(run.stderr()).toContain('push needs --to URL');
    expect(await main(['push', 'extra', '--to', 'https://x.test'], io().io)).toBe(2);
    expect(await main(['candidates', '--to', 'https://x.test'], io().io)).toBe(2);
    const spaced = io({ [PUSH_TOKEN_VARIABLE]: 'two words' });
    expect(await main(['push', '--to', 'https://x.test', '--demo'], spaced.io)).toBe(2);
    expect(spaced.stderr()).toContain(`${PUSH_TOKEN_VARIABLE} must be one token of visible ASCII characters (its value is not shown)`);
    expect(spaced.stderr()).not.toContain('two words');
  });
});
