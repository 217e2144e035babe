/**
 * Search (SPEC §16.7, issue 23): the build over a Node store of 2,000 sessions of about 100 KB
 * against reading and projecting the same logs through the same store; one query against the
 * build plus a listing; a search after 1% of the sessions changed against the first build; the
 * index's memory against the text it indexes; 10,000 sessions in one process (memory growth); the
 * naive alternative, a substring scan over every projected text; the build against the parse floor
 * of the same logs (issue 30), in wall and in CPU time, the best of two rounds each; the load of
 * the exported index and the first search after it, in the same run.
 */
import { appendFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSessionReferences } from '../src/index.js';
import { createDshStoreSessionQuery } from '../src/node/index.js';
import { createMemorySessionQuery, parseSessionLog } from '../src/store/index.js';
import { projectSurface } from '../src/projection.js';
import { indexFromBytes } from '../src/search/index-bytes.js';
import * as kit from '../src/search/kit.js';
import { useRoot } from '../src/search/root.js';
import { loadSqlite, type Sqlite3Static } from '../src/search/sqlite.js';
import { foldSurface } from '../src/surface.js';
import { formatMs } from './harness.js';
import type { StoreBenchHooks } from './store.js';
import { writeLog } from './store-logs.js';

declare const gc: (() => void) | undefined;

useRoot(kit); // for indexFromBytes, called here directly (the service's loader does the same)

const AGENT = { id: 'bench-target', cwd: '/work/p0' };
/** The vocabulary user and assistant texts are drawn from by Zipf's law (bench/store-logs.ts): its long tail is what an index holds. */
const VOCABULARY = 200_000;
/** The budget `searchSessions` reads at (engine: `maxIndexBytes * 2 + 4096` for the default 256 KiB). */
const READ_BUDGET = 262_144 * 2 + 4096;

function writeStore(root: string, count: number, bytes: number): string[] {
  const paths: string[] = [];
  for (let i = 0; i < count; i++) {
    const dir = join(root, `project-${i % 20}`, `session-${i}`);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'session.v3.jsonl');
    writeLog(path, bytes, 500 + i, `session-${i}`, `/work/p${i % 20}`, false, VOCABULARY);
    paths.push(path);
  }
  return paths;
}

/**
 * Memory held for search, after collecting garbage: the JS heap and memory outside it (`external`:
 * ArrayBuffers, such as the snippet text kept as UTF-8) without SQLite's WebAssembly memory, plus
 * what SQLite has allocated inside that memory by its own count (`SQLITE_STATUS_MEMORY_USED`: the
 * index's database pages, caches and statements). WebAssembly memory is reserved in steps and
 * never given back (SQLite reserves 8 MiB when it loads, and a small index fits in it), so its size
 * would show growth only in steps; SQLite's count shows every byte of the index.
 */
async function memory(): Promise<number> {
  // Native memory of collected objects (zlib contexts of compression streams, ArrayBuffers) is
  // freed by finalizers after a collection: let them run, then collect again.
  for (let round = 0; round < 3; round++) {
    gc?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const { heapUsed, external } = process.memoryUsage();
  const sqlite = await loadSqlite();
  return heapUsed + external - sqlite.wasm.heap8u().byteLength + sqliteMemoryUsed(sqlite);
}

/** SQLite's own count of the bytes it has allocated (`sqlite3_status64(SQLITE_STATUS_MEMORY_USED)`). */
function sqliteMemoryUsed({ wasm, capi }: Sqlite3Static): number {
  const stack = wasm.pstack.pointer;
  try {
    const [current, highwater] = wasm.pstack.allocChunks(2, 8) as [number, number];
    if (capi.sqlite3_status64(capi.SQLITE_STATUS_MEMORY_USED, current, highwater, 0) !== 0) throw new Error('sqlite3_status64 failed');
    return Number(wasm.peek(current, 'i64'));
  } finally {
    wasm.pstack.restore(stack);
  }
}

/**
 * Fills what the store caches whether or not anybody searches (headers and titles, by file
 * identity) and loads the search engine once, by indexing one small session elsewhere: its code
 * and fixed memory (SQLite's module, the runtime's compression streams), not an index. The growth
 * measured next is the index alone.
 */
async function warm(store: ReturnType<typeof createDshStoreSessionQuery>): Promise<void> {
  const records = await store.listSessions();
  await store.readTitleSnapshots(records.map((record) => record.header.id));
  const header = JSON.stringify({ type: 'session', version: 3, id: 'warm', createdAt: 1 });
  const message = JSON.stringify({ type: 'user/message', seq: 1, time: 1, surfaceOp: 'append', data: { id: 'u1', role: 'user', content: [{ type: 'text', text: 'warm words' }], source: { kind: 'user' } } });
  const other = createSessionReferences({ sessionQuery: createMemorySessionQuery([parseSessionLog(`${header}\n${message}\n`)]) });
  await other.searchSessions(AGENT, 'warm');
}

/** CPU time of this process so far, user and system, in milliseconds (`process.cpuUsage`: the libuv threads' file system calls included). */
function cpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Wall and CPU time of `run`, in milliseconds, with its result. */
async function timed<T>(run: () => Promise<T>): Promise<{ ms: number; cpu: number; value: T }> {
  const [started, cpu] = [performance.now(), cpuMs()];
  const value = await run();
  return { ms: performance.now() - started, cpu: cpuMs() - cpu, value };
}

/** Reads and projects every listed session through `store`, 8 at a time (as the index build reads). */
async function readAndProject(root: string): Promise<{ ms: number; texts: string[][] }> {
  const store = createDshStoreSessionQuery({ root });
  const started = performance.now();
  const records = await store.listSessions();
  const texts: string[][] = [];
  for (let k = 0; k < records.length; k += 8) {
    const batch = await Promise.all(records.slice(k, k + 8).map((r) => store.readRetainedSurface(r.header.id, READ_BUDGET)));
    for (const surface of batch) texts.push(projectSurface(foldSurface(surface.events)).map((item) => item.text));
  }
  return { ms: performance.now() - started, texts };
}

/**
 * The parse floor of `paths` (issue 30): read each log whole, decode it, split it into lines and
 * `JSON.parse` every line — what any reader of the logs pays before it can use them — 8 at a time.
 */
async function parseFloor(paths: readonly string[]): Promise<number> {
  const decoder = new TextDecoder();
  const started = performance.now();
  for (let k = 0; k < paths.length; k += 8) {
    const texts = await Promise.all(paths.slice(k, k + 8).map(async (path) => decoder.decode(await readFile(path))));
    for (const text of texts) for (const line of text.split('\n')) if (line !== '') JSON.parse(line);
  }
  return performance.now() - started;
}

function appendMessage(path: string, seq: number, text: string): void {
  appendFileSync(path, `${JSON.stringify({ type: 'user/message', seq, time: 1_790_000_000_000, data: { id: `x${seq}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } }, surfaceOp: 'append' })}\n`);
}

export async function benchSearch(hooks: StoreBenchHooks): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-bench-search-'));
  try {
    await benchBuild(dir, hooks);
    await benchScale(dir, hooks);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function benchBuild(dir: string, hooks: StoreBenchHooks): Promise<void> {
  const count = hooks.quick ? 500 : 2000;
  console.log(`\nSearch — ${count} sessions of about 100 KB in a Node store (SPEC §16.7)`);
  const root = join(dir, 'store');
  const paths = writeStore(root, count, 100_000);
  // Warm the file cache and the JIT once, then measure the floors and the build back to back: the
  // floors each round, and a build on a store warmed as the measured one (a throwaway index) in
  // every round but the last; the best of the rounds of each, in wall and in CPU time.
  await readAndProject(root);
  const query = 'schema migration';
  const store = createDshStoreSessionQuery({ root });
  await warm(store);
  const rounds = hooks.quick ? 1 : 2;
  const floors: Array<{ ms: number; cpu: number }> = [];
  const parses: Array<{ ms: number; cpu: number }> = [];
  const builds: Array<{ ms: number; cpu: number }> = [];
  let texts: string[][] = [];
  for (let round = 0; round < rounds; round++) {
    const read = await timed(() => readAndProject(root));
    floors.push(read);
    texts = read.value.texts;
    parses.push(await timed(() => parseFloor(paths)));
    if (round < rounds - 1) builds.push(await timed(() => createSessionReferences({ sessionQuery: store }).searchSessions(AGENT, query)));
  }
  const indexedBytes = texts.reduce((sum, items) => sum + items.reduce((s, t) => s + Buffer.byteLength(t), 0), 0);
  const before = await memory();
  const refs = createSessionReferences({ sessionQuery: store });
  const measured = await timed(() => refs.searchSessions(AGENT, query));
  builds.push(measured);
  if (measured.value.length === 0) throw new Error('the build found nothing');
  const indexMemory = (await memory()) - before;
  const best = (samples: Array<{ ms: number; cpu: number }>) => ({ ms: Math.min(...samples.map((s) => s.ms)), cpu: Math.min(...samples.map((s) => s.cpu)) });
  const [floor, parse, built] = [best(floors), best(parses), best(builds)];
  const build = built.ms;
  hooks.ratioRow('search', `build, ${count} sessions vs reading + projecting them`, build, floor.ms, 2, `${formatMs(build)} / ${formatMs(floor.ms)}`);
  hooks.ratioRow('search', `build, ${count} sessions vs the parse floor of their logs`, build, parse.ms, 3, `${formatMs(build)} / ${formatMs(parse.ms)}`);
  // The same in CPU time (process.cpuUsage, the libuv threads' file system calls included): on a
  // shared machine the steadier figure, as other processes' load stretches wall time unevenly.
  hooks.ratioRow('search', `build, ${count} sessions vs reading + projecting them, CPU time`, built.cpu, floor.cpu, 2, `${formatMs(built.cpu)} / ${formatMs(floor.cpu)}`);
  hooks.ratioRow('search', `build, ${count} sessions vs the parse floor of their logs, CPU time`, built.cpu, parse.cpu, 3, `${formatMs(built.cpu)} / ${formatMs(parse.cpu)}`);
  hooks.ratioRow('search', 'index memory (JS heap + external + SQLite, snippet text included) vs indexed text (UTF-8)', indexMemory, indexedBytes, 2, `${(indexMemory / 1e6).toFixed(1)} MB / ${(indexedBytes / 1e6).toFixed(1)} MB`);

  // One query on the built index, listing included, against the build plus a listing.
  let started = performance.now();
  await store.listSessions();
  const listing = performance.now() - started;
  const rare = 'term1a2b';
  const times: number[] = [];
  for (let s = 0; s < 5; s++) {
    started = performance.now();
    await refs.searchSessions(AGENT, s % 2 ? query : rare);
    times.push(performance.now() - started);
  }
  const one = times.sort((a, b) => a - b)[2]!;
  // SPEC §16.7: a search costs at most a hundredth of the build plus the listing that finds changes.
  hooks.ratioRow('search', 'one query beyond its listing vs the build', Math.max(0, one - listing), build, 0.01, `${formatMs(one)} − listing ${formatMs(listing)} / ${formatMs(build)}`);

  // The naive alternative: read and project every session, then scan for the query.
  started = performance.now();
  const naive = await readAndProject(root);
  const needle = 'schema';
  naive.texts.filter((items) => items.some((text) => text.toLowerCase().includes(needle)));
  const naiveMs = performance.now() - started;
  hooks.ratioRow('search', 'one query vs the naive substring scan over every projected text', one, naiveMs, undefined);

  // A search after 1% of the sessions changed: an appended message each.
  const changed = Math.max(1, Math.round(count / 100));
  for (let i = 0; i < changed; i++) appendMessage(paths[i * 97 % count]!, 1_000_000 + i, `changed session ${i}: a zeppelinword appears`);
  started = performance.now();
  const after = await refs.searchSessions(AGENT, 'zeppelinword', { limit: count });
  const again = performance.now() - started;
  if (after.length !== changed) throw new Error(`expected ${changed} changed sessions, found ${after.length}`);
  hooks.ratioRow('search', `search after ${changed} sessions (1%) changed vs the first build`, again, build, 0.05);

  // Export and reload: the bytes a host keeps.
  started = performance.now();
  const bytes = await refs.exportSearchIndex();
  const exportMs = performance.now() - started;
  hooks.countRow('search', 'exported index, MB', Math.round(bytes.length / 1e6), Math.ceil((indexedBytes * 2) / 1e6), `${formatMs(exportMs)} to export`);

  // A service started from the kept bytes (a warm cache): the load (checksum, copy, cheap checks,
  // no session unpacked), then a search of the unchanged store: listing, query, the hits' items.
  const loadTimes: number[] = [];
  const fromCache: number[] = [];
  for (let s = 0; s < 3; s++) {
    started = performance.now();
    (await indexFromBytes(bytes, 262_144))!.close();
    loadTimes.push(performance.now() - started);
    const cached = createSessionReferences({ sessionQuery: createDshStoreSessionQuery({ root }), config: { searchIndex: bytes } });
    started = performance.now();
    await cached.searchSessions(AGENT, query);
    fromCache.push(performance.now() - started);
  }
  const load = loadTimes.sort((a, b) => a - b)[1]!;
  const cachedSearch = fromCache.sort((a, b) => a - b)[1]!;
  hooks.ratioRow('search', 'load of the cached index (checksum, copy, cheap checks) vs the build', load, build, 0.05, `${formatMs(load)} / ${formatMs(build)}, ${(bytes.length / 1e6).toFixed(1)} MB`);
  hooks.ratioRow('search', 'first search after that load, unchanged store, vs the build', cachedSearch, build, 0.2, `${formatMs(cachedSearch)} / ${formatMs(build)}`);
}

async function benchScale(dir: string, hooks: StoreBenchHooks): Promise<void> {
  const count = hooks.quick ? 2000 : 10_000;
  const bytes = 20_000;
  console.log(`\nSearch — ${count} sessions of about ${bytes / 1000} KB in one Node process (SPEC §16.7)`);
  const root = join(dir, 'scale');
  writeStore(root, count, bytes);
  const store = createDshStoreSessionQuery({ root });
  await warm(store);
  const before = await memory();
  const started = performance.now();
  const refs = createSessionReferences({ sessionQuery: store });
  const hits = await refs.searchSessions(AGENT, 'deploy branch', { limit: 10 });
  const ms = performance.now() - started;
  if (hits.length === 0) throw new Error('the scale build found nothing');
  const grown = (await memory()) - before;
  hooks.countRow('search', `memory growth (JS heap + external + SQLite), ${count} sessions indexed, MB`, Math.round(grown / 1e6), Math.ceil((count * bytes) / 1e6), `built in ${formatMs(ms)}`);
}
