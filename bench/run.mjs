#!/usr/bin/env node
// `npm run bench`: bundles bench/index.ts (and the src/ it measures) with esbuild into a temporary
// .mjs — Node 20 cannot run TypeScript directly — and runs it with `node --expose-gc` so the
// harness can collect garbage between samples. Arguments are passed through (see bench/index.ts).
// The dsh host packages (`@deepseek-ai/*`, the `dsh` section) stay external — they read their own
// package.json at run time — and so do Miniflare (the `store-edge` section: it starts workerd from
// its own package) and ws (CommonJS, its inspector client), so the bundle is written under
// node_modules/.cache, from where Node resolves them in this project's node_modules.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const BENCH = dirname(fileURLToPath(import.meta.url));
const cache = join(BENCH, '..', 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const dir = mkdtempSync(join(cache, 'dsh-bench-'));
const outfile = join(dir, 'bench.mjs');
try {
  await build({
    entryPoints: [join(BENCH, 'index.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    external: ['@deepseek-ai/*', 'miniflare', 'ws', 'esbuild', 'playwright'],
    logLevel: 'warning',
  });
  const result = spawnSync(
    process.execPath,
    ['--expose-gc', '--max-old-space-size=8192', outfile, ...process.argv.slice(2)],
    { stdio: 'inherit', env: { ...process.env, BENCH_DIR: BENCH } },
  );
  process.exitCode = result.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
