/**
 * `npm run bench -- --only store` (or `store-prepare`, `store-real`, `store-rss`, `store-edge`, `store-worst`, `store-list`, `store-titles`):
 * the stores at the speed of their bytes (issue 14, SPEC §11.2.2), each ratio measured side by
 * side in one run. Generated stores go to a temporary directory, removed at the end.
 *
 * - prepare through the Node store and the object store on a 100 MB log, plain and one-frame zstd,
 *   against the floor: read the same bytes in the same chunks, decompress them with the same
 *   decoder (fzstd's streaming `Decompress`), split lines on `\n`, `JSON.parse` each line;
 * - prepare on a real-shaped log below the parse floor (bench/store-real.ts, SPEC §11.2.6);
 * - a 1 GiB log (plain and zstd) prepared through both stores in a child process: peak RSS growth
 *   against 128 MiB + 100 bytes per event;
 * - the same log cited through the edge Worker in plain workerd and through the CLI
 *   (bench/store-edge.ts);
 * - what the worst valid 16 KiB object costs one edge Worker request (bench/store-worst.ts);
 * - listing 10,000 zstd sessions in dsh layout against reading the first 4 KiB of every log, and
 *   what one 100 MB single-frame log adds to that listing;
 * - titles of 2,000 sessions of about 100 KB against the floor for reading those logs, and a second
 *   call on the same query against the first.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, createReadStream, fstatSync, mkdirSync, mkdtempSync, open as openCb, read as readCb, readdir as readdirCb, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Readable } from 'node:stream';
import { Decompress } from 'fzstd';
import { createSessionReferences } from '../src/index.js';
import { createDshStoreSessionQuery } from '../src/node/index.js';
import { createObjectStoreSessionQuery, type ObjectStoreBucket } from '../src/store/index.js';
import { formatMs, measure } from './harness.js';
import { statusBytes } from './memory.js';
import { benchEdge } from './store-edge.js';
import { benchRealPrepare } from './store-real.js';
import { benchWorst } from './store-worst.js';
import { compress, hugeLog, hugeLogAllowance, hugeLogForms, writeLog, type HugeLog } from './store-logs.js';

export interface StoreBenchHooks {
  ratioRow(section: string, name: string, ours: number, reference: number, max: number | undefined, detail?: string): void;
  countRow(section: string, name: string, value: number, max: number, detail: string): void;
  wants(section: string): boolean;
  quick: boolean;
}

const MB = 1_000_000;
const MIB = 1 << 20;
const CHUNK = MIB;

// ---------------------------------------------------------------------------------------------
// Floors and hosts

/** The floor of reading a log: chunks of the bytes, decompressed (zstd) with fzstd's streaming decoder, split on `\n`, each line decoded and parsed. */
async function floorRead(chunks: AsyncIterable<Uint8Array>, zstd: boolean): Promise<number> {
  const decoder = new TextDecoder();
  let pending = new Uint8Array(0);
  let lines = 0;
  const onData = (data: Uint8Array) => {
    let start = 0;
    for (let nl = data.indexOf(10); nl !== -1; nl = data.indexOf(10, start)) {
      let bytes = data.subarray(start, nl);
      if (pending.length > 0) {
        const joined = new Uint8Array(pending.length + bytes.length);
        joined.set(pending);
        joined.set(bytes, pending.length);
        bytes = joined;
        pending = new Uint8Array(0);
      }
      JSON.parse(decoder.decode(bytes));
      lines++;
      start = nl + 1;
    }
    if (start < data.length) {
      const rest = data.subarray(start);
      const joined = new Uint8Array(pending.length + rest.length);
      joined.set(pending);
      joined.set(rest, pending.length);
      pending = joined;
    }
  };
  const stream = zstd ? new Decompress((data) => onData(data)) : undefined;
  for await (const chunk of chunks) {
    if (stream) stream.push(chunk);
    else onData(chunk);
  }
  return lines;
}

/**
 * A file's bytes in chunks of {@link CHUNK} (one chunk of its size, plus one byte, for a smaller
 * file: as the Node store reads), until a short read.
 */
export async function* fileChunks(path: string): AsyncGenerator<Uint8Array> {
  const file = await open(path, 'r');
  try {
    const size = Math.min(CHUNK, (await file.stat()).size + 1);
    for (let position = 0; ; ) {
      const buffer = new Uint8Array(size);
      const { bytesRead } = await file.read(buffer, 0, size, position);
      if (bytesRead === 0) return;
      position += bytesRead;
      yield buffer.subarray(0, bytesRead);
      if (bytesRead < size) return;
    }
  } finally {
    await file.close();
  }
}

export async function* memoryChunks(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += CHUNK) yield bytes.subarray(at, at + CHUNK);
}

function webStream(chunks: AsyncIterable<Uint8Array>): ReadableStream<Uint8Array> {
  return Readable.toWeb(Readable.from(chunks)) as ReadableStream<Uint8Array>;
}

/** An R2-shaped bucket over objects held as bytes or files: ranged reads, whole reads as streams of 1 MiB chunks. */
export function benchBucket(objects: Map<string, Uint8Array | string>): ObjectStoreBucket {
  const sizeOf = (value: Uint8Array | string) => (typeof value === 'string' ? statSync(value).size : value.length);
  return {
    async list() {
      return { objects: [...objects].map(([key, value]) => ({ key, size: sizeOf(value) })), truncated: false };
    },
    async get(key, options) {
      const value = objects.get(key);
      if (value === undefined) return null;
      const size = sizeOf(value);
      const range = options?.range;
      const read = async (): Promise<Uint8Array> => {
        if (typeof value !== 'string') return range ? value.slice(range.offset, range.offset + range.length) : value.slice();
        if (!range) return readFile(value);
        const file = await open(value, 'r');
        try {
          const buffer = new Uint8Array(Math.min(range.length, size - range.offset));
          await file.read(buffer, 0, buffer.length, range.offset);
          return buffer;
        } finally {
          await file.close();
        }
      };
      const body = range
        ? undefined
        : typeof value === 'string'
          ? (Readable.toWeb(createReadStream(value, { highWaterMark: CHUNK })) as ReadableStream<Uint8Array>)
          : webStream(memoryChunks(value));
      return {
        size,
        body,
        async arrayBuffer() {
          const bytes = await read();
          return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
        },
      } as never;
    },
  };
}

const agent = { id: 'bench-target', cwd: '/work/bench' };
const content = [{ type: 'text' as const, text: 'continue from there' }];

async function prepareOnce(sessionQuery: Parameters<typeof createSessionReferences>[0]['sessionQuery'], sessionId: string): Promise<number> {
  const refs = createSessionReferences({ sessionQuery });
  const { context } = await refs.prepare(agent, content, [{ sessionId }]);
  return context!.metadata.references[0]!.serializedBytes;
}

// ---------------------------------------------------------------------------------------------
// Sections

/** A dsh store root with one session directory holding `file` as `name`. */
function singleStore(dir: string, name: string, source: string, id: string): string {
  const root = join(dir, `store-${name}-${id}`);
  mkdirSync(join(root, 'project', id), { recursive: true });
  const target = join(root, 'project', id, name);
  writeFileSync(target, readFileSync(source));
  return root;
}

async function benchPrepare(dir: string, hooks: StoreBenchHooks): Promise<void> {
  console.log('\nStores — prepare on a 100 MB log (SPEC §11.2.2)');
  const plainPath = join(dir, 'big.jsonl');
  const events = writeLog(plainPath, 100 * MB, 1, 'big-100mb');
  const zstdPath = join(dir, 'big.jsonl.zstd');
  compress(dir, [{ src: plainPath, dst: zstdPath, frames: 'single' }]);
  console.log(`  generated ${(statSync(plainPath).size / MB).toFixed(0)} MB, ${events} events; one zstd frame of ${(statSync(zstdPath).size / MB).toFixed(1)} MB`);
  for (const [kind, path, name] of [['plain', plainPath, 'session.v3.jsonl'], ['zstd', zstdPath, 'session.v3.jsonl.zstd']] as const) {
    const zstd = kind === 'zstd';
    const root = singleStore(dir, name, path, 'big-100mb');
    const bytes = new Uint8Array(readFileSync(path));
    const times = await measure(
      [
        { name: 'node store', async: true, op: () => prepareOnce(createDshStoreSessionQuery({ root }), 'big-100mb') },
        { name: 'object store', async: true, op: () => prepareOnce(createObjectStoreSessionQuery(benchBucket(new Map([['k', bytes]]))), 'big-100mb') },
        { name: 'floor file', async: true, op: () => floorRead(fileChunks(path), zstd) },
        { name: 'floor memory', async: true, op: () => floorRead(memoryChunks(bytes), zstd) },
      ],
      { samples: hooks.quick ? 3 : 5, minSampleMs: 50, warmupMs: 0 },
    );
    hooks.ratioRow('store', `prepare, Node store, 100 MB ${kind}`, times.get('node store')!, times.get('floor file')!, 1.5);
    hooks.ratioRow('store', `prepare, object store, 100 MB ${kind}`, times.get('object store')!, times.get('floor memory')!, 1.5);
  }
}

/** In a child process: peak RSS growth of one prepare (bytes). */
export async function rssChild(kind: string, root: string, path: string, id: string): Promise<void> {
  // Warm up the code paths on a small log first, so the baseline includes the compiled code.
  const small = join(root, '..', 'warm');
  const warmRoot = join(small, 'store');
  mkdirSync(join(warmRoot, 'p', 'w'), { recursive: true });
  writeLog(join(warmRoot, 'p', 'w', 'session.jsonl'), MB, 9, 'warm');
  await prepareOnce(createDshStoreSessionQuery({ root: warmRoot }), 'warm');
  (globalThis as { gc?: () => void }).gc?.();
  const before = process.memoryUsage().rss;
  const query = kind === 'node' ? createDshStoreSessionQuery({ root }) : createObjectStoreSessionQuery(benchBucket(new Map([['k', path]])));
  const started = performance.now();
  await prepareOnce(query, id);
  const ms = performance.now() - started;
  const peak = statusBytes(process.pid, 'VmHWM');
  console.log(JSON.stringify({ growth: peak - before, ms }));
}

async function benchRss(dir: string, hooks: StoreBenchHooks): Promise<void> {
  console.log('\nStores — a 1 GiB log, peak RSS (SPEC §11.2.2)');
  // The log as dsh writes a long session (compacted), then one whose surface keeps every message.
  for (const compacted of [true, false]) await benchRssOf(dir, hooks, hugeLog(dir, hooks.quick, compacted));
}

async function benchRssOf(dir: string, hooks: StoreBenchHooks, log: HugeLog): Promise<void> {
  const allowed = hugeLogAllowance(log);
  const size = `${(log.bytes / MIB).toFixed(0)} MiB${log.compacted ? '' : ' never compacted'}`;
  for (const { kind, path, name } of hugeLogForms(log)) {
    const root = join(dir, `rss-${log.id}-${kind}`);
    mkdirSync(join(root, 'project', log.id), { recursive: true });
    // A hard link: the store sees the file under its dsh name without a second copy.
    spawnSync('ln', [path, join(root, 'project', log.id, name)]);
    for (const store of ['node', 'object']) {
      const run = spawnSync(process.execPath, ['--expose-gc', process.argv[1]!, '--rss-child', store, root, path, log.id], { encoding: 'utf8', env: process.env });
      if (run.status !== 0) throw new Error(`rss child failed: ${run.stderr}`);
      const { growth, ms } = JSON.parse(run.stdout.trim().split('\n').at(-1)!) as { growth: number; ms: number };
      hooks.countRow('store', `peak RSS growth MiB, ${store === 'node' ? 'Node' : 'object'} store, ${size} ${kind}`, Math.round(growth / MIB), Math.floor(allowed / MIB), `${(growth / MIB).toFixed(0)} MiB ≤ 128 MiB + 100 B × ${log.events} events; prepare ${formatMs(ms)}`);
    }
  }
}

/** Writes `count` small sessions in dsh layout (zstd, one frame per batch) under `root`. */
export function smallStore(dir: string, root: string, count: number, bytes: number, zstd: boolean): string[] {
  const jobs: Array<{ src: string; dst: string; frames: 'dsh' }> = [];
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const session = join(root, `project-${i % 20}`, `session-${i}`);
    mkdirSync(session, { recursive: true });
    const plain = join(session, 'session.v3.jsonl');
    writeLog(plain, bytes, 100 + i, `session-${i}`, `/work/p${i % 20}`);
    if (zstd) {
      jobs.push({ src: plain, dst: `${plain}.zstd`, frames: 'dsh' });
      paths.push(`${plain}.zstd`);
    } else paths.push(plain);
  }
  if (zstd) {
    compress(dir, jobs);
    for (const job of jobs) rmSync(job.src);
  }
  return paths;
}

/** Runs `step(i)` for every `i` below `count`, `width` at a time (as the store's workers do). */
async function inParallel(count: number, width: number, step: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < count) await step(next++);
  }));
}

/**
 * What any dsh-layout listing must do before decoding (context for the floor): list every session
 * directory (SPEC §12.1: the highest `v<N>` wins and only regular files are opened, so the names
 * and types must be read), then open, `fstat`, read 4 KiB of and close the log (16 at a time).
 */
async function listAndReadHeads(dirs: readonly string[], paths: readonly string[]): Promise<number> {
  const call = <T>(run: (done: (error: unknown, value: T) => void) => void) =>
    new Promise<T>((resolve, reject) => run((error, value) => (error ? reject(error) : resolve(value))));
  let total = 0;
  await inParallel(paths.length, 16, async (i) => {
    await call((done) => readdirCb(dirs[i]!, { withFileTypes: true }, done));
    const fd = await call<number>((done) => openCb(paths[i]!, 'r', done));
    fstatSync(fd, { bigint: true });
    total += await call<number>((done) => readCb(fd, new Uint8Array(4096), 0, 4096, 0, done));
    closeSync(fd);
  });
  return total;
}

/** The floor of a listing: open every log, read its first 4 KiB, close it (16 at a time, as the store). */
async function readHeads(paths: readonly string[]): Promise<number> {
  let total = 0;
  await inParallel(paths.length, 16, async (i) => {
    const file = await open(paths[i]!, 'r');
    try {
      total += (await file.read(new Uint8Array(4096), 0, 4096, 0)).bytesRead;
    } finally {
      await file.close();
    }
  });
  return total;
}

async function benchListing(dir: string, hooks: StoreBenchHooks): Promise<void> {
  console.log('\nStores — listing 10,000 zstd sessions in dsh layout (SPEC §12.1, §11.2.1)');
  const count = hooks.quick ? 2000 : 10_000;
  const root = join(dir, 'many');
  const paths = smallStore(dir, root, count, 6000, true);
  // The same store plus one 100 MB single-frame log.
  const big = join(dir, 'list-big.jsonl');
  writeLog(big, 100 * MB, 3, 'list-big');
  mkdirSync(join(root, 'project-big', 'big'), { recursive: true });
  const bigZstd = join(dir, 'list-big.jsonl.zstd');
  compress(dir, [{ src: big, dst: bigZstd, frames: 'single' }]);
  const withBig = join(dir, 'many-plus-big');
  spawnSync('cp', ['-al', root, withBig]);
  mkdirSync(join(withBig, 'project-big', 'big'), { recursive: true });
  spawnSync('ln', [bigZstd, join(withBig, 'project-big', 'big', 'session.v3.jsonl.zstd')]);
  const list = async (at: string) => {
    const sessions = await createDshStoreSessionQuery({ root: at }).listSessions();
    return sessions.length;
  };
  if ((await list(withBig)) !== count + 1) throw new Error('listing missed sessions');
  const times = await measure(
    [
      { name: 'list', async: true, op: () => list(root) },
      { name: 'list + big', async: true, op: () => list(withBig) },
      { name: 'heads', async: true, op: () => readHeads(paths) },
      { name: 'dirs + heads', async: true, op: () => listAndReadHeads(paths.map(dirname), paths) },
    ],
    { samples: hooks.quick ? 3 : 7, minSampleMs: 50, warmupMs: 0 },
  );
  hooks.ratioRow('store', `listSessions, ${count} zstd sessions vs 4 KiB reads`, times.get('list')!, times.get('heads')!, 2);
  hooks.ratioRow(
    'store',
    `listSessions vs listing each session directory + 4 KiB reads (no target: what §12.1 makes any listing do)`,
    times.get('list')!,
    times.get('dirs + heads')!,
    undefined,
  );
  const added = times.get('list + big')! - times.get('list')!;
  hooks.countRow('store', 'ms one 100 MB single-frame log adds to it', Math.round(added), 50, `${formatMs(times.get('list + big')!)} − ${formatMs(times.get('list')!)}`);
}

async function benchTitles(dir: string, hooks: StoreBenchHooks): Promise<void> {
  console.log('\nStores — titles of 2,000 sessions of about 100 KB (SPEC §6.4, §12.1)');
  const count = hooks.quick ? 500 : 2000;
  const root = join(dir, 'titled');
  const paths = smallStore(dir, root, count, 100_000, false);
  const ids = paths.map((_, i) => `session-${i}`);
  let first = 0;
  let second = 0;
  let floor = 0;
  const samples = hooks.quick ? 3 : 5;
  const firsts: number[] = [];
  const seconds: number[] = [];
  const floors: number[] = [];
  for (let s = 0; s < samples; s++) {
    const store = createDshStoreSessionQuery({ root });
    await store.listSessions();
    (globalThis as { gc?: () => void }).gc?.();
    let started = performance.now();
    const rows = await store.readTitleSnapshots(ids);
    firsts.push(performance.now() - started);
    if (!rows.every((row) => row.status === 'fulfilled' && row.value.title)) throw new Error('a title is missing');
    started = performance.now();
    await store.readTitleSnapshots(ids);
    seconds.push(performance.now() - started);
    (globalThis as { gc?: () => void }).gc?.();
    started = performance.now();
    await inParallel(paths.length, 4, async (i) => void (await floorRead(fileChunks(paths[i]!), false)));
    floors.push(performance.now() - started);
  }
  const median = (values: number[]) => values.sort((a, b) => a - b)[values.length >> 1]!;
  first = median(firsts);
  second = median(seconds);
  floor = median(floors);
  hooks.ratioRow('store', `readTitleSnapshots, ${count} logs of 100 KB vs reading them`, first, floor, 1.5);
  hooks.ratioRow('store', 'second readTitleSnapshots on the same query vs the first', second, first, 0.05);
}

export async function benchStores(hooks: StoreBenchHooks): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-bench-store-'));
  try {
    if (hooks.wants('store') || hooks.wants('store-prepare')) await benchPrepare(dir, hooks);
    if (hooks.wants('store') || hooks.wants('store-real')) await benchRealPrepare(dir, hooks);
    if (hooks.wants('store') || hooks.wants('store-list')) await benchListing(dir, hooks);
    if (hooks.wants('store') || hooks.wants('store-titles')) await benchTitles(dir, hooks);
    if (hooks.wants('store') || hooks.wants('store-rss')) await benchRss(dir, hooks);
    if (hooks.wants('store') || hooks.wants('store-edge')) await benchEdge(dir, hooks);
    if (hooks.wants('store') || hooks.wants('store-worst')) await benchWorst(hooks);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
