#!/usr/bin/env node
// Size budget of the package's Web entries: each entry is bundled with its dependencies by
// esbuild (ESM, minified, tree-shaken, as an app bundler would ship it), then gzipped (level 9,
// node:zlib). Prints a table, plus the modules that weigh most in each bundle, and exits 1 when
// an entry is over its budget.
//
// Usage: npm run size            (table)
//        node scripts/size.mjs --json   (machine-readable, used by test/size.node.test.ts)
import { build } from 'esbuild';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Budgets in bytes of min+gzip (1 KB = 1024 bytes), enforced (exit 1 above them). A row measures
 * either a whole entry (`entry`) or what a front end imports from it (`imports`: the source of a
 * module that imports only those names, bundled and tree-shaken like an app would).
 * @type {Array<{ name: string; entry?: string; imports?: string; budget: number }>}
 */
export const BUDGETS = [
  { name: '.', entry: 'src/index.ts', budget: 7.5 * 1024 },
  {
    name: '. wire functions (URI, format, parse, scan)',
    imports: `export { encodeSessionReferenceUri, decodeSessionReferenceUri, formatSessionReferenceMention, parseSessionReferenceText, scanSessionReferenceText } from './src/index.ts';`,
    budget: 2.5 * 1024,
  },
  { name: './store', entry: 'src/store/index.ts', budget: 14 * 1024 },
  { name: './editor', entry: 'src/editor/index.ts', budget: 3.5 * 1024 },
];

/** How many of the heaviest modules to show per entry. */
const TOP_MODULES = 6;

/**
 * Bundles, minifies and gzips every entry.
 * @returns {Promise<Array<{ name: string; entry: string; budget: number; minified: number; gzip: number; ok: boolean; modules: Array<{ path: string; minified: number }> }>>}
 */
export async function measure() {
  const results = [];
  for (const { name, entry, imports, budget } of BUDGETS) {
    const input = entry !== undefined ? { entryPoints: [join(ROOT, entry)] } : { stdin: { contents: imports, resolveDir: ROOT, loader: 'ts' } };
    const out = await build({
      ...input,
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      conditions: ['browser', 'import'],
      target: 'es2022',
      minify: true,
      legalComments: 'none',
      metafile: true,
      write: false,
      logLevel: 'silent',
    });
    const code = out.outputFiles[0].contents;
    const output = Object.values(out.metafile.outputs)[0];
    const modules = Object.entries(output.inputs)
      .map(([path, { bytesInOutput }]) => ({ path: relative(ROOT, join(ROOT, path)), minified: bytesInOutput }))
      .filter((module) => module.minified > 0)
      .sort((a, b) => b.minified - a.minified);
    const gzip = gzipSync(code, { level: 9 }).length;
    results.push({ name, entry: entry ?? 'imports', budget, minified: code.length, gzip, ok: gzip <= budget, modules });
  }
  return results;
}

const kb = (bytes) => `${(bytes / 1024).toFixed(2)} KB`;

/** The report as text: one row per entry, then the heaviest modules. */
export function formatReport(results) {
  const lines = ['Size budget (esbuild bundle + minify, gzip -9; 1 KB = 1024 B):', ''];
  lines.push('| entry | minified | min+gzip | budget | status |', '|---|---:|---:|---:|---|');
  for (const r of results) {
    const status = r.ok ? `ok (${kb(r.budget - r.gzip)} left)` : `OVER by ${r.gzip - r.budget} B`;
    lines.push(`| \`${r.name}\` (${r.entry}) | ${r.minified} B | ${r.gzip} B (${kb(r.gzip)}) | ${r.budget} B (${kb(r.budget)}) | ${status} |`);
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
