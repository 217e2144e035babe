#!/usr/bin/env node
// Builds the edge entry (`dsh-session-reference/edge`, SPEC §17.2) into dist/edge/:
//   index.js      src/edge/index.ts and the core it uses, bundled by esbuild as one ES module for
//                 workerd (not minified: wrangler minifies if the app asks). hono, jose and
//                 `cloudflare:*` stay imports (the app's wrangler resolves them).
//   libzstd.wasm  libzstd's decoder, which index.js imports (`./libzstd.wasm`): wrangler's default
//                 rules upload a `.wasm` import as a compiled module, and the entry provides it.
//   *.d.ts        declarations (tsc -p tsconfig.build.edge.json).
// What a Worker never runs stays out (scripts/edge-bundle.mjs).
//
// Usage: node scripts/build-edge.mjs                 (part of npm run build)
//        node scripts/build-edge.mjs --bundle-only   (index.js and libzstd.wasm alone: the tests)
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { edgeBuildOptions } from './edge-bundle.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = join(ROOT, 'dist', 'edge');

const bundleOnly = process.argv.includes('--bundle-only');
mkdirSync(OUT_DIR, { recursive: true });
if (!bundleOnly) {
  // dist/edge/client.* is the Web-only client (`./edge/client`), built with the core by tsconfig.build.json.
  for (const name of readdirSync(OUT_DIR)) if (!name.startsWith('client.')) rmSync(join(OUT_DIR, name), { recursive: true, force: true });
  execFileSync(process.execPath, [join(ROOT, 'scripts', 'workers-types.mjs')], { stdio: 'inherit' });
  execFileSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(ROOT, 'tsconfig.build.edge.json')], { stdio: 'inherit', cwd: ROOT });
}
const options = edgeBuildOptions(ROOT);
await build({ ...options, external: [...options.external, 'hono', 'hono/*', 'jose'], outfile: join(OUT_DIR, 'index.js'), logLevel: 'warning' });
copyFileSync(join(ROOT, 'src', 'store', 'libzstd.wasm'), join(OUT_DIR, 'libzstd.wasm'));

const code = readFileSync(join(OUT_DIR, 'index.js'), 'utf8');
for (const forbidden of [/\brequire\(/, /from\s*["']node:/, /\bimport\(\s*["']node:/]) {
  if (forbidden.test(code)) {
    console.error(`dist/edge/index.js contains ${forbidden}: the edge entry must not depend on Node`);
    process.exit(1);
  }
}
// On stderr: `npm pack --json` runs this (prepare) and its stdout must stay JSON.
console.error(`wrote dist/edge/: index.js ${statSync(join(OUT_DIR, 'index.js')).size} B, libzstd.wasm ${statSync(join(OUT_DIR, 'libzstd.wasm')).size} B`);
