#!/usr/bin/env node
// Measures reads below the parse floor (SPEC §11.2.6) in CPU time (process.cpuUsage, best of N
// runs, interleaved, all in one process, so the figures hold on a busy machine), on the real v3
// log of samples/ repeated to about 25 MiB (seqs as they are):
//
// - the row scan alone over every row a surface read skips: the WebAssembly scan
//   (src/store/chunk-scanner.ts running src/store/json-scan.wat over each 1 MiB chunk) against
//   the JavaScript scan (src/store/json-scan.ts);
// - a surface read (what `prepare` reads) through the pipeline, fed 1 MiB chunks as the bench's
//   stores are, plain and, when the `zstd` CLI is there, in dsh's zstd layout (a frame per 8
//   lines), once with the library as it is and once built without the module's bytes (so the
//   JavaScript scan and `indexOf` run, as in workerd);
// - `prepare` through the object store (plain, a stream of 1 MiB chunks), both builds;
// - the surface reads and `prepare` once more with the library built to yield by `setTimeout(0)`
//   as it did before src/pace.ts used the host's `setImmediate` (issue 30: wall time per turn);
//
// each against the parse floor of bench/store-real.ts: the same chunks (decoded by libzstd for
// zstd), split on `\n`, decoded in runs and `JSON.parse`d line by line. Each row gives CPU time
// and, beside it, wall time (best of the same runs): the wall time a turn of the event loop
// costs shows only there.
//
// Usage: node scripts/measure-row-scan.mjs [MiB] [runs]   (defaults 25 and 7)
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
const SAMPLE = join(ROOT, 'samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl');
const mib = Number(process.argv[2] ?? 25);
const runs = Number(process.argv[3] ?? 7);
const CHUNK = 1048576;

// ---------------------------------------------------------------------------------------------
// The library, twice: as it is, and without the module's bytes.

const ENTRY = `export { scanRow } from './src/store/json-scan.ts'; export { ChunkScanner, wasmScanRuns } from './src/store/chunk-scanner.ts';
export { dshType } from './src/store/classify.ts'; export { collect } from './src/store/pipeline.ts'; export { LogCollector } from './src/store/collect.ts';
export { readsProjected, surfaceEntry } from './src/store/surface-read.ts'; export { foldSurface } from './src/surface.ts';
export { createSessionReferences } from './src/index.ts'; export { createObjectStoreSessionQuery } from './src/store/index.ts';
export { floorRead } from './bench/store-real.ts';`;
/** Without the module's bytes: compiling fails, so every scan is the JavaScript one. */
const noWasm = {
  name: 'no-wasm',
  setup(b) {
    b.onLoad({ filter: /json-scan-wasm\.ts$/ }, () => ({ contents: `export const JSON_SCAN_WASM_BASE64URL = '';`, loader: 'ts' }));
  },
};
/** Yielding by `setTimeout(0)` only: src/pace.ts without the host's `setImmediate`. */
const timeoutTurns = {
  name: 'timeout-turns',
  setup(b) {
    b.onLoad({ filter: /src[\\/]pace\.ts$/ }, (args) => {
      const text = readFileSync(args.path, 'utf8');
      const detect = '(globalThis as { setImmediate?: unknown }).setImmediate';
      if (!text.includes(detect)) throw new Error('src/pace.ts no longer detects setImmediate as this script expects');
      return { contents: text.replace(detect, 'undefined'), loader: 'ts' };
    });
  },
};
const cache = join(ROOT, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const dir = mkdtempSync(join(cache, 'row-scan-'));
async function bundle(name, plugins) {
  const outfile = join(dir, `${name}.mjs`);
  await build({ stdin: { contents: ENTRY, resolveDir: ROOT, loader: 'ts' }, bundle: true, platform: 'node', format: 'esm', outfile, plugins, logLevel: 'warning', external: ['@deepseek-ai/*', 'miniflare', 'ws', 'esbuild', 'playwright'] });
  return import(pathToFileURL(outfile).href);
}
// Turns of the event loop, counted: zero-delay timers and immediates (wrapped before the library
// binds `setImmediate`, so its own turns are counted too).
const turns = { immediate: 0, timeout: 0 };
const { setImmediate: realImmediate, setTimeout: realTimeout } = globalThis;
globalThis.setImmediate = (callback, ...rest) => (turns.immediate++, realImmediate(callback, ...rest));
globalThis.setTimeout = (callback, delay, ...rest) => (delay ? 0 : turns.timeout++, realTimeout(callback, delay, ...rest));
let wasm, js, timeout;
try {
  wasm = await bundle('wasm', []);
  js = await bundle('js', [noWasm]);
  timeout = await bundle('timeout', [timeoutTurns]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (!wasm.wasmScanRuns()) throw new Error('the WebAssembly scan does not run here');
if (js.wasmScanRuns()) throw new Error('the JavaScript-only build runs WebAssembly');

// ---------------------------------------------------------------------------------------------
// The log, plain and (with the zstd CLI) in dsh's frames.

const [header, ...rows] = readFileSync(SAMPLE, 'utf8').split('\n').filter((line) => line.length > 0);
const lines = [header];
for (let size = 0; size < mib * CHUNK; ) for (const row of rows) (lines.push(row), (size += row.length + 1));
const log = new TextEncoder().encode(`${lines.join('\n')}\n`);

/** dsh's layout: a frame for the header, then one per 8 lines (each distinct group compressed once). */
function dshFrames() {
  const groups = [[lines[0]]];
  for (let i = 1; i < lines.length; i += 8) groups.push(lines.slice(i, i + 8));
  const compressed = new Map();
  const frames = [];
  for (const group of groups) {
    const text = `${group.join('\n')}\n`;
    let frame = compressed.get(text);
    if (frame === undefined) {
      const run = spawnSync('zstd', ['-3', '-q', '-c', '--check'], { input: text });
      if (run.status !== 0) return undefined;
      compressed.set(text, (frame = run.stdout));
    }
    frames.push(frame);
  }
  return new Uint8Array(Buffer.concat(frames));
}
const zstdLog = spawnSync('zstd', ['--version']).status === 0 ? dshFrames() : undefined;

async function* chunksOf(bytes) {
  for (let at = 0; at < bytes.length; at += CHUNK) yield bytes.slice(at, at + CHUNK);
}

// ---------------------------------------------------------------------------------------------
// What is measured.

/** The rows a surface read scans, as views of 1 MiB chunks cut on line ends. */
const chunks = [];
for (let from = 0; from < log.length; ) {
  const to = log.lastIndexOf(0x0a, Math.min(log.length, from + CHUNK) - 1) + 1;
  const chunk = log.subarray(from, to);
  const scanned = [];
  for (let start = 0; start < chunk.length; ) {
    const end = chunk.indexOf(0x0a, start);
    const type = wasm.dshType(chunk.subarray(start, end));
    if (start > 0 || from > 0) if (type !== undefined && !/\/message$/.test(type)) scanned.push([start, end]);
    start = end + 1;
  }
  chunks.push({ chunk, scanned });
  from = to;
}

/** The parse floor of bench/store-real.ts (its own code). */
const floor = (bytes, zstd) => wasm.floorRead(chunksOf(bytes), zstd);

const surfaceRead = (lib, bytes) => () => lib.collect(chunksOf(bytes), new lib.LogCollector(lib.surfaceEntry, lib.foldSurface, undefined, lib.readsProjected));

/** `prepare` of the log through the object store of `lib`, its body a stream of 1 MiB chunks. */
const prepare = (lib) => async () => {
  const bucket = {
    list: async () => ({ objects: [{ key: 'k', size: log.length }], truncated: false }),
    get: async (key, options) => {
      const range = options?.range;
      if (range) return { size: log.length, arrayBuffer: async () => log.slice(range.offset, range.offset + range.length).buffer };
      let at = 0;
      const body = new ReadableStream({
        pull(controller) {
          if (at >= log.length) return controller.close();
          controller.enqueue(log.subarray(at, (at += CHUNK)));
        },
      });
      return { size: log.length, body, arrayBuffer: async () => log.slice().buffer };
    },
  };
  const references = lib.createSessionReferences({ sessionQuery: lib.createObjectStoreSessionQuery(bucket) });
  const { context } = await references.prepare({ id: 'measure', cwd: '/work' }, [{ type: 'text', text: 'continue' }], [{ sessionId: JSON.parse(header).id }]);
  if (!context) throw new Error('no context');
};

const cases = {
  floor: () => floor(log, false),
  scanJs: () => {
    for (const { chunk, scanned } of chunks) for (const [start, end] of scanned) if (js.scanRow(chunk.subarray(start, end)) === undefined) throw new Error('refused');
  },
  scanWasm: () => {
    const scanner = new wasm.ChunkScanner();
    for (const { chunk, scanned } of chunks) {
      scanner.setChunk(chunk);
      for (const [start, end] of scanned) if (scanner.vouch(chunk.subarray(start, end)) === undefined) throw new Error('not vouched');
      scanner.setChunk(undefined);
    }
  },
  readJs: surfaceRead(js, log),
  readWasm: surfaceRead(wasm, log),
  prepareJs: prepare(js),
  prepareWasm: prepare(wasm),
  readTimeout: surfaceRead(timeout, log),
  prepareTimeout: prepare(timeout),
  ...(zstdLog && {
    floorZstd: () => floor(zstdLog, true),
    readZstdJs: surfaceRead(js, zstdLog),
    readZstdWasm: surfaceRead(wasm, zstdLog),
    readZstdTimeout: surfaceRead(timeout, zstdLog),
  }),
};

/** CPU and wall milliseconds of one run. */
async function time(run) {
  const before = process.cpuUsage();
  const start = performance.now();
  await run();
  const wall = performance.now() - start;
  const used = process.cpuUsage(before);
  return { cpu: (used.user + used.system) / 1000, wall };
}
const best = Object.fromEntries(Object.keys(cases).map((name) => [name, Infinity]));
const bestWall = Object.fromEntries(Object.keys(cases).map((name) => [name, Infinity]));
for (let run = 0; run < runs; run++) {
  for (const [name, fn] of Object.entries(cases)) {
    const { cpu, wall } = await time(fn);
    best[name] = Math.min(best[name], cpu);
    bestWall[name] = Math.min(bestWall[name], wall);
  }
}

/** Turns one run of `name` takes, and the wall ms a turn costs each way (median of 200, interleaved). */
async function turnsOf(name) {
  const before = { ...turns };
  await cases[name]();
  return `${turns.immediate - before.immediate} by setImmediate, ${turns.timeout - before.timeout} by setTimeout(0)`;
}
const perTurn = { immediate: [], timeout: [] };
for (let i = 0; i < 200; i++) {
  for (const [kind, turn] of [['immediate', (resolve) => realImmediate(resolve)], ['timeout', (resolve) => realTimeout(resolve, 0)]]) {
    const start = performance.now();
    await new Promise(turn);
    perTurn[kind].push(performance.now() - start);
  }
}
const median = (values) => values.sort((a, b) => a - b)[values.length >> 1];

const figures = (table, ours, base) => `${String(Math.round(table[ours])).padStart(5)} / ${String(Math.round(table[base])).padStart(5)} ms  ${(table[ours] / table[base]).toFixed(2)}×`;
const row = (name, ours, base) => console.log(`${name.padEnd(64)} ${figures(best, ours, base)}   ${figures(bestWall, ours, base)}`);
console.log(`${(log.length / CHUNK).toFixed(1)} MiB plain, ${lines.length} lines${zstdLog ? `; ${(zstdLog.length / CHUNK).toFixed(1)} MiB in dsh's zstd frames` : ' (no zstd CLI: zstd rows left out)'}; best of ${runs}: CPU ms, then wall ms`);
row('scan of the skipped rows, JavaScript, vs floor', 'scanJs', 'floor');
row('scan of the skipped rows, WebAssembly, vs floor', 'scanWasm', 'floor');
row('scan, WebAssembly vs JavaScript', 'scanWasm', 'scanJs');
row('surface read, plain, JavaScript scan, vs floor', 'readJs', 'floor');
row('surface read, plain, WebAssembly, vs floor', 'readWasm', 'floor');
row('prepare, object store, plain, JavaScript scan, vs floor', 'prepareJs', 'floor');
row('prepare, object store, plain, WebAssembly, vs floor', 'prepareWasm', 'floor');
row('surface read, plain, WebAssembly, setTimeout turns, vs floor', 'readTimeout', 'floor');
row('prepare, object store, plain, WebAssembly, setTimeout turns, vs floor', 'prepareTimeout', 'floor');
if (zstdLog) {
  row('surface read, zstd, JavaScript scan, vs floor with libzstd', 'readZstdJs', 'floorZstd');
  row('surface read, zstd, WebAssembly, vs floor with libzstd', 'readZstdWasm', 'floorZstd');
  row('surface read, zstd, WebAssembly, setTimeout turns, vs floor', 'readZstdTimeout', 'floorZstd');
}
console.log(`turns per read: surface read plain ${await turnsOf('readWasm')}; with setTimeout turns ${await turnsOf('readTimeout')}`);
if (zstdLog) console.log(`turns per read: surface read zstd ${await turnsOf('readZstdWasm')}; with setTimeout turns ${await turnsOf('readZstdTimeout')}`);
console.log(`wall ms per turn (median of 200, interleaved): setImmediate ${median(perTurn.immediate).toFixed(3)}, setTimeout(0) ${median(perTurn.timeout).toFixed(3)}`);
