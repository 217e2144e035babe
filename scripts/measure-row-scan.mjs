#!/usr/bin/env node
// Measures the row scan of SPEC §11.2.6 alone, in CPU time (process.cpuUsage, best of N runs,
// interleaved, one process): the WebAssembly scan (src/store/chunk-scanner.ts: json-scan.wat, lines
// cut from 1 MiB chunks as the splitter cuts them) and the JavaScript scan (src/store/json-scan.ts)
// over every row a surface read skips, against the parse floor (decode and JSON.parse every line) of
// the real v3 log of samples/ repeated to about 25 MiB. Then the same through the pipeline: a
// surface read as `prepare` runs it (src/store/pipeline.ts collectSync, the log as one buffer),
// once as the library is and once built with the module's bytes left out (the JavaScript scan,
// as in workerd), both in this process, against the same floor; and `prepare` through the object
// store (the log as a stream of 1 MiB chunks), both builds.
//
// Usage: node scripts/measure-row-scan.mjs [MiB] [runs]   (defaults 25 and 7)
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
const SAMPLE = join(ROOT, 'samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl');
const mib = Number(process.argv[2] ?? 25);
const runs = Number(process.argv[3] ?? 7);

const cache = join(ROOT, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const dir = mkdtempSync(join(cache, 'row-scan-'));
const ENTRY = `export { scanRow } from './src/store/json-scan.ts'; export { ChunkScanner, wasmScanRuns } from './src/store/chunk-scanner.ts'; export { dshType } from './src/store/classify.ts';
export { createSessionReferences } from './src/index.ts'; export { createObjectStoreSessionQuery } from './src/store/index.ts';
export { collectSync } from './src/store/pipeline.ts'; export { LogCollector } from './src/store/collect.ts'; export { readsProjected, surfaceEntry } from './src/store/surface-read.ts'; export { foldSurface } from './src/surface.ts';`;
/** Without the module's bytes: compiling fails, so every scan is the JavaScript one. */
const noWasm = {
  name: 'no-wasm',
  setup(b) {
    b.onLoad({ filter: /json-scan-wasm\.ts$/ }, () => ({ contents: `export const JSON_SCAN_WASM_BASE64URL = '';`, loader: 'ts' }));
  },
};
async function bundle(name, plugins) {
  const outfile = join(dir, `${name}.mjs`);
  await build({ stdin: { contents: ENTRY, resolveDir: ROOT, loader: 'ts' }, bundle: true, platform: 'neutral', format: 'esm', outfile, plugins, logLevel: 'warning' });
  return import(pathToFileURL(outfile).href);
}
let scans, jsOnly;
try {
  scans = await bundle('wasm', []);
  jsOnly = await bundle('js', [noWasm]);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const { scanRow, ChunkScanner, wasmScanRuns, dshType } = scans;
if (!wasmScanRuns()) throw new Error('the WebAssembly scan does not run here');
if (jsOnly.wasmScanRuns()) throw new Error('the JavaScript-only build runs WebAssembly');

const encoder = new TextEncoder();
const [header, ...rows] = readFileSync(SAMPLE, 'utf8').split('\n').filter((line) => line.length > 0);
let text = `${header}\n`;
while (text.length < mib * 1048576) text += `${rows.join('\n')}\n`;
const log = encoder.encode(text);

/** The log in 1 MiB chunks, each with the lines it holds whole (start, end) and which of them a surface read scans. */
const chunks = [];
for (let from = 0; from < log.length; ) {
  let to = Math.min(log.length, from + 1048576);
  to = log.lastIndexOf(0x0a, to - 1) + 1;
  const chunk = log.subarray(from, to);
  const lines = [];
  for (let start = 0; start < chunk.length; ) {
    const end = chunk.indexOf(0x0a, start);
    const bytes = chunk.subarray(start, end);
    const type = dshType(bytes);
    lines.push({ bytes, scanned: type !== undefined && !/\/message$|^session/.test(type) });
    start = end + 1;
  }
  chunks.push({ chunk, lines });
  from = to;
}
const scanned = chunks.flatMap((c) => c.lines.filter((l) => l.scanned));
const scannedBytes = scanned.reduce((sum, l) => sum + l.bytes.length, 0);

async function cpu(run) {
  const before = process.cpuUsage();
  await run();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1000;
}

const decoder = new TextDecoder('utf-8', { fatal: true });
const cases = {
  floor: () => {
    for (const { lines } of chunks) for (const { bytes } of lines) JSON.parse(decoder.decode(bytes));
  },
  js: () => {
    for (const line of scanned) if (scanRow(line.bytes) === undefined) throw new Error('refused');
  },
  wasm: () => {
    const scanner = new ChunkScanner();
    for (const { chunk, lines } of chunks) {
      scanner.setChunk(chunk);
      for (const line of lines) if (line.scanned && scanner.vouch(line.bytes) === undefined) throw new Error('not vouched');
      scanner.setChunk(undefined);
    }
  },
};
/** A surface read of the whole log through the pipeline of `lib`. */
const surfaceRead = (lib) => () => lib.collectSync(log, new lib.LogCollector(lib.surfaceEntry, lib.foldSurface, undefined, lib.readsProjected), undefined);
cases.readWasm = surfaceRead(scans);
cases.readJs = surfaceRead(jsOnly);
/** `prepare` of the log through the object store of `lib`, its body a stream of 1 MiB chunks. */
const prepare = (lib) => async () => {
  const bucket = {
    list: async () => ({ objects: [{ key: 'k', size: log.length }], truncated: false }),
    get: async (key, options) => {
      if (options?.range) return { size: log.length, arrayBuffer: async () => log.slice(options.range.offset, options.range.offset + options.range.length).buffer };
      let at = 0;
      const body = new ReadableStream({
        pull(controller) {
          if (at >= log.length) return controller.close();
          controller.enqueue(log.subarray(at, (at += 1048576)));
        },
      });
      return { size: log.length, body, arrayBuffer: async () => log.slice().buffer };
    },
  };
  const id = JSON.parse(header).id;
  const { context } = await lib.createSessionReferences({ sessionQuery: lib.createObjectStoreSessionQuery(bucket) }).prepare({ id: 'bench-target', cwd: '/work/bench' }, [{ type: 'text', text: 'continue' }], [{ sessionId: id }]);
  if (!context) throw new Error('no context');
};
cases.prepareWasm = prepare(scans);
cases.prepareJs = prepare(jsOnly);
const best = Object.fromEntries(Object.keys(cases).map((name) => [name, Infinity]));
for (let run = 0; run < runs; run++) for (const [name, fn] of Object.entries(cases)) best[name] = Math.min(best[name], await cpu(fn));
const ms = (value) => Math.round(value);
console.log(
  JSON.stringify({
    logMiB: +(log.length / 1048576).toFixed(1),
    lines: chunks.reduce((sum, c) => sum + c.lines.length, 0),
    scannedLines: scanned.length,
    scannedMiB: +(scannedBytes / 1048576).toFixed(1),
    cpuMs: { floor: ms(best.floor), js: ms(best.js), wasm: ms(best.wasm) },
    ofFloor: { js: +(best.js / best.floor).toFixed(3), wasm: +(best.wasm / best.floor).toFixed(3) },
    wasmOverJs: +(best.wasm / best.js).toFixed(3),
    surfaceReadCpuMs: { wasm: ms(best.readWasm), js: ms(best.readJs) },
    surfaceReadOfFloor: { wasm: +(best.readWasm / best.floor).toFixed(3), js: +(best.readJs / best.floor).toFixed(3) },
    objectStorePrepareCpuMs: { wasm: ms(best.prepareWasm), js: ms(best.prepareJs) },
    objectStorePrepareOfFloor: { wasm: +(best.prepareWasm / best.floor).toFixed(3), js: +(best.prepareJs / best.floor).toFixed(3) },
  }),
);
