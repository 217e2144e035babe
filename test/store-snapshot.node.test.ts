/**
 * Hardening III, the Node-only cases: a file read as it was at open (SPEC §11.2.4: truncated or
 * shrunk while read is a short read, appended bytes are not read), bounded caches over create and
 * delete churn (SPEC §11.2.5), and a read whose heap does not depend on chunking (SPEC §11.2.3,
 * with a bounded V8 heap).
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { build } from 'esbuild';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { createDshStoreSessionQuery } from '../src/node/index.js';
import { LruCache } from '../src/node/lru.js';
import { withFs, type FsCall } from './fixtures/node-fs.js';
import { expectRejectCode } from './helpers.js';

const SEED = 2121;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function freshRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'dsh-snapshot-'));
  roots.push(root);
  return root;
}

function put(root: string, session: string, content: string): string {
  const dir = join(root, 'project', session);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'session.jsonl');
  writeFileSync(path, content);
  return path;
}

const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const header = (id: string, extra: Record<string, unknown> = {}) => line({ type: 'session', version: 3, id, createdAt: 1, ...extra });
const message = (seq: number, text: string) =>
  line({ type: 'user/message', seq, time: seq, surfaceOp: 'append', data: { id: `u${seq}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } } });
const title = (seq: number, text: string) => line({ type: 'session/title', seq, time: seq, data: { title: text } });

/** A log of about 3 MiB: three whole-read chunks of 1 MiB. */
const BIG = header('big') + Array.from({ length: 60 }, (_, i) => message(i, `${i} ${'ğ'.repeat(25_000)}`)).join('') + title(60, 'big title');

/** Runs `change` once, just before the `at`-th `fs.read` (from 0) of `body`. */
function changingAt(at: number, change: () => void): (original: FsCall) => FsCall {
  let reads = 0;
  return (original) =>
    (...args) => {
      if (reads++ === at) change();
      return original(...args);
    };
}

describe('a file is read as it was at open (SPEC §11.2.4)', () => {
  it('property: a log truncated at any point while it is read is READ_FAILED "short read: N of M bytes", whole reads and title rows alike', async () => {
    const root = freshRoot();
    const path = put(root, 'big', BIG);
    const size = statSync(path).size;
    const store = createDshStoreSessionQuery({ root });
    await store.listSessions();
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 2 }), fc.nat(), fc.boolean(), async (at, point, whole) => {
        writeFileSync(path, BIG);
        // Cut past what the reads before `at` took (1 MiB each), so that the cut is met.
        const cut = Math.min(size - 1, at * (1 << 20) + (point % (size - at * (1 << 20))));
        const read = whole ? store.readSurface('big') : store.readTitleSnapshots(['big']).then(([row]) => Promise.reject(row!.status === 'rejected' ? row.reason : new Error('fulfilled')));
        const error = await withFs('read', changingAt(at, () => truncateSync(path, cut)), () => expectRejectCode(read, 'SESSION_REFERENCE_READ_FAILED'));
        expect(error.message).toBe(`${JSON.stringify(path)}: short read: ${cut} of ${size} bytes`);
      }),
      { seed: SEED, numRuns: 25 },
    );
  });

  it('bytes appended while a log is read are not read: the snapshot is the file at open', async () => {
    const root = freshRoot();
    const path = put(root, 'big', BIG);
    const store = createDshStoreSessionQuery({ root });
    const before = await store.readSurface('big');
    for (const at of [0, 1, 2]) {
      writeFileSync(path, BIG);
      const surface = await withFs('read', changingAt(at, () => appendFileSync(path, message(61, 'appended') + title(62, 'appended title'))), () => store.readSurface('big'));
      expect(surface).toEqual(before);
    }
  });

  it('a header read of a file cut inside its header line meanwhile is a short read, failing the listing', async () => {
    const root = freshRoot();
    const path = put(root, 'cut', header('cut') + message(0, 'x'.repeat(10_000)));
    const size = statSync(path).size;
    const error = await withFs('read', changingAt(0, () => truncateSync(path, 20)), () => expectRejectCode(createDshStoreSessionQuery({ root }).listSessions(), 'SESSION_REFERENCE_READ_FAILED'));
    expect(error.message).toBe(`${JSON.stringify(path)}: short read: 20 of ${size} bytes`);
  });
});

/** `gc()` of this isolate. */
function gcFunction(): () => void {
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
}

describe('bounded caches (SPEC §11.2.5)', () => {
  it('property: an LruCache never holds more than its entries and bytes, and evicts the least recently used first', () => {
    type Op = { kind: 'set'; key: number; bytes: number } | { kind: 'get'; key: number } | { kind: 'retain'; keys: number[] };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 20 }), bytes: fc.integer({ min: 0, max: 60 }) }),
      fc.record({ kind: fc.constant('get' as const), key: fc.integer({ min: 0, max: 20 }) }),
      fc.record({ kind: fc.constant('retain' as const), keys: fc.array(fc.integer({ min: 0, max: 20 })) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 150 }), fc.array(op, { maxLength: 200 }), (maxEntries, maxBytes, ops) => {
        const cache = new LruCache<number>(maxEntries, maxBytes, (_key, bytes) => bytes);
        // The model: keys least recently used first.
        let model: Array<[string, number]> = [];
        for (const step of ops) {
          if (step.kind === 'set') {
            const key = String(step.key);
            cache.set(key, step.bytes);
            model = model.filter(([k]) => k !== key);
            if (step.bytes <= maxBytes) model.push([key, step.bytes]);
            while (model.length > maxEntries || model.reduce((sum, [, b]) => sum + b, 0) > maxBytes) model.shift();
          } else if (step.kind === 'get') {
            const key = String(step.key);
            const found = model.find(([k]) => k === key);
            expect(cache.get(key)).toBe(found?.[1]);
            if (found) model = [...model.filter(([k]) => k !== key), found];
          } else {
            const keys = new Set(step.keys.map(String));
            cache.retain(keys);
            model = model.filter(([k]) => keys.has(k));
          }
          expect(cache.size).toBe(model.length);
          expect(cache.bytes).toBe(model.reduce((sum, [, b]) => sum + b, 0));
          expect(cache.size).toBeLessThanOrEqual(maxEntries);
          expect(cache.bytes).toBeLessThanOrEqual(maxBytes);
        }
        for (const [key, bytes] of model) expect(cache.get(key)).toBe(bytes);
      }),
      { seed: SEED, numRuns: 200 },
    );
  });

  it('a long-lived query over sessions created and deleted all day stays flat in memory', async () => {
    const gc = gcFunction();
    const root = freshRoot();
    const store = createDshStoreSessionQuery({ root });
    // Big headers and titles, so that each entry a cache kept of a deleted session would weigh ~20 KB.
    const pad = 'ş'.repeat(4000);
    let heapAfterWarmUp = 0;
    for (let round = 0; round < 24; round++) {
      const ids = Array.from({ length: 80 }, (_, i) => `r${round}-${i}`);
      for (const id of ids) put(root, id, header(id, { note: pad }) + title(0, `${id} ${pad}`));
      expect((await store.listSessions()).map((row) => row.header.id).sort()).toEqual([...ids].sort());
      const rows = await store.readTitleSnapshots(ids);
      expect(rows.every((row) => row.status === 'fulfilled')).toBe(true);
      await store.readSurface(ids[0]!);
      rmSync(join(root, 'project'), { recursive: true, force: true });
      if (round === 3) {
        await store.listSessions();
        gc();
        heapAfterWarmUp = process.memoryUsage().heapUsed;
      }
    }
    expect(await store.listSessions()).toEqual([]);
    gc();
    // 20 rounds × 80 deleted sessions × ~20 KB of header and title held would be ~32 MB.
    expect(process.memoryUsage().heapUsed - heapAfterWarmUp).toBeLessThan(6 * 1024 * 1024);
  });
});

describe('memory does not depend on chunking (SPEC §11.2.3)', () => {
  it('a 2 MB line in 1-byte chunks reads with a 40 MiB V8 heap (one array per chunk would need ~300 MB)', async () => {
    const dir = freshRoot();
    const script = join(dir, 'line.mjs');
    await build({
      stdin: {
        contents: `import { readSessionLog } from './src/store/index.ts';
          const encoder = new TextEncoder();
          const text = '{"type":"session","version":3,"id":"one-byte","createdAt":1}\\n' +
            JSON.stringify({ type: 'user/message', seq: 0, time: 0, data: { text: 'x'.repeat(2_000_000) } }) + '\\n';
          const bytes = encoder.encode(text);
          async function* oneByte() { for (let i = 0; i < bytes.length; i++) yield bytes.subarray(i, i + 1); }
          const log = await readSessionLog(oneByte());
          console.log(JSON.stringify([log.header.id, log.events[0].data.text.length]));`,
        resolveDir: ROOT,
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: script,
      logLevel: 'silent',
    });
    const run = spawnSync(process.execPath, ['--max-old-space-size=40', script], { encoding: 'utf8', timeout: 240_000 });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual(['one-byte', 2_000_000]);
  }, 250_000);
});
