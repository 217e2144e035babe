#!/usr/bin/env node
// Measures the row scan of SPEC §11.2.6 alone, in CPU time (process.cpuUsage, best of N runs,
// interleaved, one process): the WebAssembly scan (src/store/row-scanner.ts: json-scan.wat, lines
// cut from 1 MiB chunks as the splitter cuts them) and the JavaScript scan (src/store/json-scan.ts)
// over every row a surface read skips, against the parse floor (decode and JSON.parse every line) of
// the real v3 log of samples/ repeated to about 25 MiB.
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
let scans;
try {
  await build({
    stdin: {
      contents: `export { scanRow } from './src/store/json-scan.ts'; export { RowScanner, wasmScanRuns } from './src/store/row-scanner.ts'; export { dshType } from './src/store/classify.ts';`,
      resolveDir: ROOT,
      loader: 'ts',
    },
    bundle: true,
    platform: 'neutral',
    format: 'esm',
    outfile: join(dir, 'scan.mjs'),
    logLevel: 'warning',
  });
  scans = await import(pathToFileURL(join(dir, 'scan.mjs')).href);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const { scanRow, RowScanner, wasmScanRuns, dshType } = scans;
if (!wasmScanRuns()) throw new Error('the WebAssembly scan does not run here');

const encoder = new TextEncoder();
const rows = readFileSync(SAMPLE, 'utf8').split('\n').filter((line) => line.length > 0).slice(1);
let text = '';
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

function cpu(run) {
  const before = process.cpuUsage();
  run();
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
    const scanner = new RowScanner();
    for (const { chunk, lines } of chunks) {
      scanner.setChunk(chunk);
      for (const line of lines) if (line.scanned && scanner.vouch(line.bytes) === undefined) throw new Error('not vouched');
      scanner.setChunk(undefined);
    }
  },
};
const best = { floor: Infinity, js: Infinity, wasm: Infinity };
for (let run = 0; run < runs; run++) for (const [name, fn] of Object.entries(cases)) best[name] = Math.min(best[name], cpu(fn));
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
  }),
);
