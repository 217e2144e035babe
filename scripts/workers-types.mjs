#!/usr/bin/env node
// The Workers runtime types the edge entry (src/edge, SPEC §17) is checked and built against:
// `wrangler types --include-env=false`, for the compatibility date and flags of
// examples/edge-worker/wrangler.toml, written to .types/workers-runtime.d.ts (gitignored) and
// regenerated only when wrangler.toml or the installed workerd changed (it takes seconds).
// tsconfig.edge.json and tsconfig.build.edge.json list it in "types".
//
// Usage: node scripts/workers-types.mjs   (npm run typecheck and npm run build run it)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, '.types', 'workers-runtime.d.ts');
const STAMP = join(ROOT, '.types', 'workers-runtime.stamp');
const CONFIG = join(ROOT, 'examples', 'edge-worker', 'wrangler.toml');

const require = createRequire(import.meta.url);
const workerd = JSON.parse(readFileSync(require.resolve('workerd/package.json'), 'utf8')).version;
const stamp = `${workerd}\n${readFileSync(CONFIG, 'utf8')}`;
if (existsSync(OUT) && existsSync(STAMP) && readFileSync(STAMP, 'utf8') === stamp) process.exit(0);

mkdirSync(dirname(OUT), { recursive: true });
execFileSync(join(ROOT, 'node_modules', '.bin', 'wrangler'), ['types', '--include-env=false', '-c', CONFIG, OUT], {
  cwd: ROOT,
  stdio: ['ignore', 'ignore', 'inherit'],
  env: { ...process.env, WRANGLER_SEND_METRICS: 'false' },
});
writeFileSync(STAMP, stamp);
