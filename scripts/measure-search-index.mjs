#!/usr/bin/env node
// Measures the search index of SPEC §16.7 on real technical text: the Markdown, JavaScript and
// TypeScript declaration files under node_modules, cut into sessions of 20 KB (two items of 10 KB,
// a title and a cwd each), indexed with SessionSearchIndex (src/search/engine.ts, on SQLite's WebAssembly build) directly.
// Prints one JSON object: the indexed text (UTF-8 bytes), the index's memory — the JavaScript heap
// after GC plus the growth of SQLite's WebAssembly memory, or the database's pages when larger (the
// first 8 MiB of WebAssembly memory are allocated when SQLite loads, and a small index fits in
// them; the database holds the text kept for snippets too, compressed) — against the text, and
// with all of SQLite's WebAssembly memory, the build time, a few warm queries, and the exported bytes.
//
// Usage: node scripts/measure-search-index.mjs [sessions]   (default 500; 2000 is about 40 MB)
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
const sessions = Number(process.argv[2] ?? 500);

/** The files of the corpus, in a stable order: *.md, *.js and *.d.ts under node_modules. */
function corpusFiles(dir, out = [], depth = 0) {
  let names;
  try {
    names = readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const name of names) {
    const path = join(dir, name);
    let stat;
    try {
      stat = statSync(path);
    } catch {
      continue;
    }
    if (stat.isDirectory()) {
      if (name !== '.cache' && name !== '.bin' && depth < 8) corpusFiles(path, out, depth + 1);
    } else if (/\.(md|js|d\.ts)$/.test(name) && stat.size < 2_000_000) out.push(path);
  }
  return out;
}

const MEASURE = `
import { readFileSync } from 'node:fs';
import * as kit from ${JSON.stringify(join(ROOT, 'src/search/kit.ts'))};
import { useRoot } from ${JSON.stringify(join(ROOT, 'src/search/root.ts'))};
import { createIndex, indexFromBytes, indexToBytes } from ${JSON.stringify(join(ROOT, 'src/search/index-bytes.ts'))};
import { loadSqlite } from ${JSON.stringify(join(ROOT, 'src/search/sqlite.ts'))};
import { queryWords } from ${JSON.stringify(join(ROOT, 'src/search/words.ts'))};
useRoot(kit);
const [files, count] = JSON.parse(readFileSync(process.env.MEASURE_INPUT, 'utf8'));
const B = 20_000;
let all = '';
for (const file of files) { if (all.length > count * B) break; all += readFileSync(file, 'utf8') + '\\n'; }
const sessions = [];
let bytes = 0;
for (let i = 0; i < count && (i + 1) * B <= all.length; i++) {
  const text = all.slice(i * B, (i + 1) * B);
  const items = [{ role: 'user', text: (' ' + text.slice(0, B / 2)).slice(1) }, { role: 'assistant', text: (' ' + text.slice(B / 2)).slice(1) }];
  const session = { id: 's' + i, identity: 'i' + i, seq: 1, title: 'session ' + i + ' title', cwd: '/work/p' + (i % 20), items };
  for (const t of [session.title, session.cwd, ...items.map((item) => item.text)]) bytes += Buffer.byteLength(t);
  sessions.push(session);
}
all = '';
const sqlite = await loadSqlite(); // a cost per realm, not per index
const memory = () => sqlite.wasm.memory.buffer.byteLength;
gc(); gc();
const heap0 = process.memoryUsage().heapUsed, wasm0 = memory();
let t = performance.now();
const index = await createIndex(1 << 30);
for (let k = 0; k < sessions.length; k += 64) await index.put(sessions.slice(k, k + 64));
await index.search(['x'], '');
const buildMs = performance.now() - t;
gc(); gc();
const heap = process.memoryUsage().heapUsed - heap0, wasmTotal = memory(), wasm = wasmTotal - wasm0;
const db = index.sql.all('SELECT (SELECT page_count FROM pragma_page_count) * (SELECT page_size FROM pragma_page_size)')[0][0];
const indexBytes = heap + Math.max(wasm, db);
const queries = {};
for (const q of ['function return', 'modle', 'typescript', 'parser optoins', 'const', 'zeppelin']) {
  const parts = (await queryWords(q, async () => {})).flat();
  await index.search(parts, '');
  t = performance.now();
  const found = (await index.search(parts, '')).length;
  queries[q] = (performance.now() - t).toFixed(1) + ' ms, ' + found + ' sessions';
}
t = performance.now();
const exported = await indexToBytes(index);
const exportMs = performance.now() - t;
t = performance.now();
const loaded = await indexFromBytes(exported, 1 << 30);
const loadMs = performance.now() - t;
const mb = (n) => +(n / 1e6).toFixed(2);
console.log(JSON.stringify({
  sessions: sessions.length,
  indexedTextMB: mb(bytes),
  jsHeapMB: mb(heap),
  wasmGrowthMB: mb(wasm),
  databaseMB: mb(db),
  // The database holds the snippet text too (compressed): the index is all there is.
  indexVsText: +(indexBytes / bytes).toFixed(2),
  withAllOfSqlitesWasmMemoryVsText: +((heap + wasmTotal) / bytes).toFixed(2),
  buildMs: Math.round(buildMs),
  queries,
  exportMB: mb(exported.length),
  exportMs: Math.round(exportMs),
  loadMs: Math.round(loadMs),
  loaded: loaded !== undefined,
}, null, 1));
`;

const dir = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'measure-search-'));
try {
  const outfile = join(dir, 'measure.mjs');
  await build({ stdin: { contents: MEASURE, resolveDir: ROOT, loader: 'ts' }, bundle: true, platform: 'node', format: 'esm', outfile, logLevel: 'warning' });
  const input = join(dir, 'input.json');
  writeFileSync(input, JSON.stringify([corpusFiles(join(ROOT, 'node_modules')), sessions]));
  const result = spawnSync(process.execPath, ['--expose-gc', '--max-old-space-size=8192', outfile], { stdio: 'inherit', env: { ...process.env, MEASURE_INPUT: input } });
  if (result.error) throw result.error;
  process.exitCode = result.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
