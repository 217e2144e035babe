#!/usr/bin/env node
// Size budget of the package's Web entries: each entry is bundled with its dependencies by
// esbuild (ESM, minified, tree-shaken, code splitting on, as an app bundler would ship it), then
// gzipped (level 9, node:zlib). What counts is what loads up front: the entry's chunk and the
// chunks it imports statically; chunks reached only through a dynamic `import()` (the zstd
// decoder of `readSessionLog`) load when needed and are shown apart, as `lazy`. Prints a table,
// plus the modules that weigh most in each bundle, and exits 1 when an entry is over its budget.
//
// Usage: npm run size            (table)
//        node scripts/size.mjs --json   (machine-readable, used by test/size.node.test.ts)
import { build } from 'esbuild';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { edgeBuildOptions } from './edge-bundle.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Budgets in bytes of min+gzip (1 KB = 1024 bytes), enforced (exit 1 above them). A row measures
 * either a whole entry (`entry`) or what a front end imports from it (`imports`: the source of a
 * module that imports only those names, bundled and tree-shaken like an app would).
 * @type {Array<{ name: string; entry?: string; imports?: string; budget: number; edge?: boolean }>}
 */
export const BUDGETS = [
  // `.`: 9 KB since issue 21 (was 7.5 KB): every caller argument is read once into a private
  // plain copy (SPEC §10.4, src/caller-data.ts, ~1 KB: structuredClone refused framework state
  // such as Svelte `$state` and read getters twice), labels drop every Cc/Cf (§6.6), error
  // messages describe unsafe integers, and parsePositiveInteger (the one parser of counts given as
  // text that the CLI's flags and the edge Worker's [vars] and ?limit= share; ~0.14 KB).
  // 9.5 KB since search (issue 23, SPEC §16.5): the loader only — searchSessions/exportSearchIndex,
  // the dynamic import and the root functions handed to the chunk (~0.45 KB); the engine is the
  // lazy `search chunk` row below.
  // 10 KB since search runs on SQLite (issue 23, SPEC §16.5): provideSqliteWasm, which a Worker
  // calls at startup (workerd compiles no WebAssembly from bytes), the provided-module check it
  // shares with provideZstdWasm (src/wasm-provide.ts, ~0.25 KB), and compileWasm/compileWasmSync,
  // the one loader of WebAssembly modules, handed to the search chunk (~0.1 KB).
  // 10.5 KB since word matching (issue 29, SPEC §15.10): candidateMatch's matcher and the §16.3
  // folding it shares with search (src/candidate-match.ts, src/fold.ts; ~0.22 KB).
  // 11 KB since ASCII is segmented by UAX #29's own rules in every runtime (src/ascii-words.ts,
  // ~0.25 KB: Chromium's ICU, in Deno, workerd and browsers, splits `seeds.py`; word matching uses it).
  // 11.25 KB since a host names its word segmentation (issue 30 item 3, src/host-segmenter.ts: the
  // hook the Node store fills, handed to the search chunk with the other root functions, ~35 B):
  // a cached index loaded under the same name skips segmenting the signature sample (~13 ms of a
  // warm CLI search).
  { name: '.', entry: 'src/index.ts', budget: 11.25 * 1024 },
  {
    name: '. wire functions (URI, format, parse, scan)',
    imports: `export { encodeSessionReferenceUri, decodeSessionReferenceUri, formatSessionReferenceMention, parseSessionReferenceText, scanSessionReferenceText } from './src/index.ts';`,
    // 2.75 KB since issue 21 (was 2.5 KB): formatSessionReferenceMention reads its argument once
    // (SPEC §10.4), malformed tokens carry stackless errors, and the URI decoder refuses a payload
    // whose JSON is not a string before JSON.parse (a paste of many malformed URIs).
    budget: 2.75 * 1024,
  },
  // ./store: 15 KB since the streaming pipeline (issue 14: fzstd's streaming decoder, streamed
  // frames, the line splitter and the source readers; the synchronous parseSessionLog keeps the
  // zstd decoder in the entry), 16 KB since the WebAssembly XXH64 (a 657-byte module as base64,
  // about 0.6 KB gzipped, which makes checksum verification cost far less than decoding), 17.5 KB
  // since surface reads at a reference budget (readRetainedSurface, SPEC §11.2.2: the projection
  // runs in the store to size each message, and a second pass reads back the kept ones; ~1.1 KB),
  // 18 KB since small frames decode in WebAssembly (libzstd via zstddec, issue 14's listing: the
  // loader and fallback ~0.2 KB here; zstddec itself, ~28 KB gzipped, is a lazy chunk fetched
  // only when a zstd log is met) and reads at a budget keep a window of the newest texts.
  // 19.75 KB since issue 21: the store's arguments (logs, options, id lists) are read once through
  // the caller-data copy of SPEC §10.4 (~0.7 KB), and the hardening of the pipeline (~1 KB): every
  // stream item checked (SPEC §11.2.3, errors naming the index), the pending line held in blocks
  // (memory independent of chunking), short reads (SizedSource, the object store's size checks,
  // §11.2.4), pace() (turns of the event loop for always-ready sources, §10.3) and the
  // 100,000-page limit of listings.
  // 48 KB since every frame decodes with libzstd (issue 21: fzstd's damaged-block CPU stall): the
  // synchronous parseSessionLog needs the decoder at hand, and libzstd's module is 59 KB of
  // WebAssembly (about 31 KB gzipped as base64) where fzstd and the XXH64 code were ~8 KB; the
  // rest of the entry shrank to ~14 KB. Apps that do not call parseSessionLog never load it up
  // front (the next row); its JavaScript form (wasm2js, ~38 KB gzipped) is a lazy chunk, loaded
  // only where WebAssembly cannot run.
  // 50 KB since reads below the parse floor (SPEC §11.2.6, issue 30): the validating byte scan of
  // JSON Lines rows (src/store/json-scan.ts) and the line classifier (~1.5 KB), and the zstd
  // window cap checked on frame headers (issue 28, src/store/zstd-window.ts, ~0.4 KB).
  // 51 KB since the row scan runs in WebAssembly (issue 30: src/store/json-scan.wat, 128-bit SIMD,
  // a ~1.8 KB module carried as base64url, ~1.2 KB gzipped, and src/store/chunk-scanner.ts, which
  // runs it and the splitter's newline search over each chunk copied once): skipped rows scan in
  // about 0.4x the JavaScript scan's CPU time.
  // 51.5 KB since the edge isolate's memory (issue 30, 1 GiB never-compacted log within 128 MiB):
  // byte streams read through a BYOB reader into one reused buffer (src/store/source.ts), the
  // fold's seq index in a typed array (src/surface.ts), and the classifier's type lookup by byte
  // hash without a string per row (src/store/classify.ts); ~0.2 KB together.
  // 52 KB since a truncated final zstd frame is ignored whatever its lines hold (the probe of issue
  // 30, finding 3): a line's error is held until the frame ends, the rest of the frame walked by
  // its block headers, not decoded (src/store/zstd-extent.ts, ~0.2 KB). 52.25 KB since a header
  // read's line 1 stands only once its frame has ended (that walk again; the second probe, finding 2).
  { name: './store', entry: 'src/store/index.ts', budget: 52.25 * 1024 },
  // What an app that streams logs ships up front (object store, readSessionLog; a Worker): libzstd
  // is a lazy chunk, fetched on the first zstd log (in workerd the app gives the compiled module).
  // 11.5 KB with the rest of issue 21's hardening of ./store (caller-data copies, strict streams).
  // 11.75 KB since provideZstdWasm checks its module through the provided-module class it shares
  // with provideSqliteWasm (src/wasm-provide.ts: one copy of the check, ~0.08 KB more here).
  {
    name: './store streaming (createObjectStoreSessionQuery, readSessionLog, provideZstdWasm)',
    imports: `export { createObjectStoreSessionQuery, readSessionLog, provideZstdWasm } from './src/store/index.ts';`,
    // 13.25 KB since reads below the parse floor (SPEC §11.2.6): the byte scan and the line
    // classifier every read runs (~1.5 KB).
    // 13.5 KB since the scan checks string content 8 bytes a step (SWAR words through a DataView,
    // ~0.2 KB: skipped lines cost about 0.3× the parse floor instead of 0.5×, issue 30).
    // 16 KB since the row scan runs in WebAssembly (issue 30, ~2.35 KB): the module as
    // base64url (~1.2 KB gzipped), its runner, and the shared compile-from-bytes path
    // (src/wasm.ts, the base64url decoder) that this row did not ship before. Compiled on the first
    // scan, synchronously: a lazy chunk would leave the first reads to the JavaScript scan.
    // 16.5 KB since the BYOB reads, the typed-array seq index and the byte-hash type lookup (the
    // ./store row above, ~0.17 KB here).
    budget: 16.5 * 1024,
  },
  // ./editor: 3.5 KB for the trigger, insertion, chip range and replay helpers (SPEC §15.1–§15.4);
  // 5 KB since the edit model with atomic chips (SPEC §15.6–§15.7: segments, selection
  // normalization, deletion and moves by grapheme and word through Intl.Segmenter, the chip-join
  // rule; ~1.4 KB). An app that imports only some functions ships less (tree-shaken).
  // 6 KB since issue 21: describeReferencedMessage and insertMention read their arguments through
  // the caller-data copy of SPEC §10.4 (~0.85 KB) instead of structuredClone.
  // 6.25 KB since issue 29: the trigger's allowSpaces option, mentionQueryPassedEmpty (SPEC §15.10)
  // and offsets inside a surrogate pair read as its start everywhere (§15.5; ~0.1 KB).
  { name: './editor', entry: 'src/editor/index.ts', budget: 6.25 * 1024 },
  // ./editor/dom: the contenteditable composer (SPEC §15.8: drawing and DOM ↔ offset mapping,
  // beforeinput/clipboard/drag/IME handling, undo history, ~3.7 KB of its own) with the edit model
  // it drives and the mention scanner; an app that does not import it ships none of it.
  // 7.75 KB since issue 29's headless trigger changes above (allowSpaces, §15.5 offsets; ~0.07 KB).
  // 12.5 KB since the composer owns the `@` menu (issue 29, SPEC §15.9, ~4.2 KB): the menu's
  // behaviour (src/editor/dom/suggest.ts: debounced, aborting, cached fetches, active row, keys,
  // the answers read once; ~1.3 KB), the combobox ARIA and attributes restored exactly on destroy
  // (attributes.ts), named and activatable chips, the options' checks (options.ts), and the edit
  // made and redrawn over the stretch around it (local.ts and the view's piece map, issue 29.3).
  // The default menu and @floating-ui/dom are a lazy chunk (the `lazy` column), loaded only by a
  // composer whose `suggest` has no `render`.
  // 13 KB since long drafts stay fast (issue 29.3, ~0.9 KB): the view draws one block per line,
  // lines grouped 64 to a block, keeps the text as a rope of block texts, and reuses the nodes an
  // edit does not change (src/editor/dom/view.ts).
  { name: './editor/dom', entry: 'src/editor/dom/index.ts', budget: 13 * 1024 },
  // ./edge/client: the edge service's client for front ends (SPEC §17.9): requests, the answer
  // checks and the error mapping, with the core's argument checks, caller-data copy, mention
  // parsing and composition it reuses (so a front end that already ships `.` ships little more).
  { name: './edge/client', entry: 'src/edge/client.ts', budget: 8 * 1024 },
  // What a front end that reads only plain .jsonl logs ships: the whole root, the in-memory query
  // and the streaming reader; the zstd decoder and checksum are a lazy chunk (loaded on the first
  // zstd log). Issue 14 asked for 8 KB; the root alone is 7 KB (budget 7.5 KB), so the row holds
  // the store part to about 4 KB on top of the root's budget. 12 KB since zstd decodes in slices
  // with the signal checked between them and header reads bound the bytes they read (issue 21:
  // the pipeline's read requests and slices, ~0.3 KB).
  {
    name: '. + createMemorySessionQuery + readSessionLog (plain .jsonl apps)',
    imports: `export * from './src/index.ts'; export { createMemorySessionQuery, readSessionLog } from './src/store/index.ts';`,
    // 13.25 KB since issue 21 (~1.8 KB): the root's caller-data copy (SPEC §10.4, ~1 KB) and
    // parsePositiveInteger, and the strict stream reading, block-held lines and pace() of the
    // ./store row above; 13.75 KB with zstd decoded in slices and header reads bounded in bytes
    // read (read requests, ~0.3 KB).
    // 14.25 KB since search: the root's loader (above) and the memory store's listing identities.
    // 14.75 KB since search runs on SQLite: the root's provideSqliteWasm and compileWasm (above).
    // 15.25 KB since word matching: the root's candidateMatch matcher and folding (above, ~0.24 KB
    // here; the row was then 14.99 KB).
    // 16.75 KB since reads below the parse floor (SPEC §11.2.6): the byte scan and the line
    // classifier of the ./store rows above (~1.5 KB).
    // 17 KB since the scan's 8-byte string steps (above, ~0.2 KB).
    // 19 KB since the row scan runs in WebAssembly (the streaming row above, ~1.75 KB here).
    // 19.5 KB since ASCII words by UAX #29's own rules (row `.` above, ~0.26 KB).
    // 20 KB since the BYOB reads, the typed-array seq index and the byte-hash type lookup (the
    // ./store rows above, ~0.24 KB here).
    // 20.25 KB since a header read is bounded by its own 1 MiB, not by maxLogBytes (SPEC §11.2.1:
    // a log past maxLogBytes is listed), and the lines within maxLogBytes are split before the
    // limit fails a read, so its error does not depend on the chunking, nor on whether the log
    // came as text or bytes (the stop-37 probes); the row was then 20.10 KB.
    budget: 20.25 * 1024,
  },
  // The search chunk alone (SPEC §16.5): the engine, segmentation and folding, snippets, the
  // incremental index and its checksummed bytes (SHA-256 by Web Crypto). It imports nothing of the
  // root (the loader hands it the root's functions), so it is what the first search fetches.
  // 12 KB with MiniSearch (~6 KB). 74 KB since the engine is SQLite FTS5 (issue 23: MiniSearch's
  // index took 3.2–3.9× the indexed text, SPEC §16.7 allows 2×): sqlite's JavaScript loader and
  // API (@sqlite.org/sqlite-wasm's index.mjs, ~70 KB gzipped, one function that bundlers cannot
  // tree-shake) is ~95% of the row. SQLite's WebAssembly module itself (879 KB; ~500 KB gzipped
  // as the base64url of src/search/sqlite-wasm.ts, ~400 KB as a .wasm file) is a further lazy
  // chunk (the `lazy` column), fetched by the first search only where the app did not provide
  // the compiled module (provideSqliteWasm; a Worker always does).
  // 77 KB with fflate's raw deflate (~1.7 KB gzipped): each session's kept snippet text is stored
  // compressed in the index's database (src/search/stored.ts), which keeps the index under SPEC
  // §16.7's 2× the indexed text where sessions hold a few KB of conversation.
  // 79 KB with the hardening of issues 28 and 30 (~1.2 KB gzipped): fflate's streaming inflate
  // (kept items unpacked within their bound, stopped while inflating), the check of hits' matched
  // columns against their kept text, query segmentation in paced slices, and the SQL seam that
  // runs the same engine on a Durable Object's SQLite (src/search/sql-host.ts).
  // 79.5 KB since the build's cheaper words (issue 30 item 2, ~0.36 KB gzipped): the table-driven
  // scan of word chunks, the memo of short segmented chunks (src/search/words.ts), encodeWord's
  // scan before its regular expression and the stored block for short items (src/search/stored.ts).
  // 80 KB with ASCII words by UAX #29's own rules in every runtime (src/ascii-words.ts, ~0.3 KB,
  // shared with the core) and the best hits chosen inside SQLite (issue 27, ~0.55 KB gzipped: the
  // ranking's SQL, the parts joined, windows of the best scores with their ties, at most 16 parts a
  // statement with the earlier parts' matches carried, and the walk of windows). fflate is a lazy
  // chunk of its own since a warm search without hits skips it (src/search/deflate.ts): ~76 KB.
  { name: 'search chunk (lazy, loaded by searchSessions)', entry: 'src/search/search.ts', budget: 80 * 1024 },
  // ./edge (SPEC §17.2): the whole Worker's JavaScript as wrangler uploads it — the routes, hono,
  // jose, the catalog Durable Object, the search engine (run on the Durable Object's SQLite) and
  // the core — bundled as scripts/edge-bundle.mjs does (libzstd's wasm2js and base64 forms and
  // SQLite's JavaScript left out; libzstd.wasm, 59 KB, ~28 KB gzipped, is a module of its own).
  // SPEC §17.2 / issue 27 cap the whole upload at 800 KiB gzipped; this row holds the JavaScript
  // far below that.
  { name: './edge (the Worker: routes, hono, jose, catalog, core)', entry: 'src/edge/index.ts', edge: true, budget: 80 * 1024 },
];

/** The virtual entry module of an `imports` row. */
const VIRTUAL = 'size-budget-entry';

/** Serves an `imports` row's source as an entry module resolved from the project root. */
function virtualEntry(contents) {
  return {
    name: 'virtual-entry',
    setup(build) {
      build.onResolve({ filter: new RegExp(`^${VIRTUAL}$`) }, () => ({ path: VIRTUAL, namespace: VIRTUAL }));
      build.onLoad({ filter: /.*/, namespace: VIRTUAL }, () => ({ contents, resolveDir: ROOT, loader: 'ts' }));
    },
  };
}

/** The output files an entry loads up front: its chunk and, transitively, the chunks it imports statically. */
function initialOutputs(metafile) {
  const outputs = metafile.outputs;
  const entry = Object.keys(outputs).find((path) => outputs[path].entryPoint !== undefined);
  const initial = new Set();
  const visit = (path) => {
    if (initial.has(path)) return;
    initial.add(path);
    for (const imported of outputs[path].imports) if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
  };
  visit(entry);
  return initial;
}

/** How many of the heaviest modules to show per entry. */
const TOP_MODULES = 6;

/**
 * Bundles, minifies and gzips every entry.
 * @returns {Promise<Array<{ name: string; entry: string; budget: number; minified: number; gzip: number; ok: boolean; modules: Array<{ path: string; minified: number }> }>>}
 */
export async function measure() {
  const results = [];
  for (const { name, entry, imports, budget, edge } of BUDGETS) {
    const input = entry !== undefined ? { entryPoints: [join(ROOT, entry)] } : { entryPoints: [VIRTUAL], plugins: [virtualEntry(imports)] };
    // The edge row is one workerd module (no splitting: wrangler inlines dynamic imports).
    const target = edge ? { ...edgeBuildOptions(ROOT), splitting: false } : {};
    const out = await build({
      ...input,
      bundle: true,
      splitting: true,
      outdir: join(ROOT, 'size-out'), // never written (write: false)
      absWorkingDir: ROOT,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      conditions: ['browser', 'import'],
      target: 'es2022',
      minify: true,
      legalComments: 'none',
      ...target,
      metafile: true,
      write: false,
      logLevel: 'silent',
    });
    const initial = initialOutputs(out.metafile);
    const files = out.outputFiles.filter((file) => file.path.endsWith('.js'));
    const isInitial = (file) => initial.has(relative(ROOT, file.path));
    const code = Buffer.concat(files.filter(isInitial).map((file) => file.contents));
    const lazyCode = files.filter((file) => !isInitial(file)).map((file) => file.contents);
    const lazy = lazyCode.reduce((sum, contents) => sum + gzipSync(contents, { level: 9 }).length, 0);
    const modules = [...initial]
      .flatMap((path) => Object.entries(out.metafile.outputs[path].inputs))
      .map(([path, { bytesInOutput }]) => ({ path: relative(ROOT, join(ROOT, path)), minified: bytesInOutput }))
      .filter((module) => module.minified > 0)
      .sort((a, b) => b.minified - a.minified);
    const gzip = gzipSync(code, { level: 9 }).length;
    results.push({ name, entry: entry ?? 'imports', budget, minified: code.length, gzip, lazy, ok: gzip <= budget, modules });
  }
  return results;
}

const kb = (bytes) => `${(bytes / 1024).toFixed(2)} KB`;

/** The report as text: one row per entry, then the heaviest modules. */
export function formatReport(results) {
  const lines = ['Size budget (esbuild bundle + minify, gzip -9; 1 KB = 1024 B):', ''];
  lines.push('| entry | minified | min+gzip | budget | status | lazy (min+gzip) |', '|---|---:|---:|---:|---|---:|');
  for (const r of results) {
    const status = r.ok ? `ok (${kb(r.budget - r.gzip)} left)` : `OVER by ${r.gzip - r.budget} B`;
    lines.push(`| \`${r.name}\` (${r.entry}) | ${r.minified} B | ${r.gzip} B (${kb(r.gzip)}) | ${r.budget} B (${kb(r.budget)}) | ${status} | ${r.lazy > 0 ? `${r.lazy} B` : '—'} |`);
  }
  for (const r of results) {
    lines.push('', `Heaviest modules of \`${r.name}\` (minified bytes in the bundle):`);
    for (const m of r.modules.slice(0, TOP_MODULES)) {
      lines.push(`  ${String(m.minified).padStart(6)} B  ${((m.minified / r.minified) * 100).toFixed(0).padStart(3)}%  ${m.path}`);
    }
  }
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const results = await measure();
  if (process.argv.includes('--json')) console.log(JSON.stringify(results, null, 2));
  else console.log(formatReport(results));
  const over = results.filter((r) => !r.ok);
  if (over.length > 0) {
    if (!process.argv.includes('--json')) console.error(`\nover budget: ${over.map((r) => `${r.name} (${r.gzip} B > ${r.budget} B)`).join(', ')}`);
    process.exitCode = 1;
  }
}
