#!/usr/bin/env node
// Runs an example from examples/ against the library source (no build needed): bundles it with
// esbuild, resolving `dsh-session-reference` and its subpaths to src/, and runs it with Node.
// Usage: node scripts/run-example.mjs examples/quickstart.ts
import { build } from 'esbuild';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(import.meta.url), '../..');
const entries = { 'dsh-session-reference': 'src/index.ts', 'dsh-session-reference/store': 'src/store/index.ts', 'dsh-session-reference/node': 'src/node/index.ts' };

const result = await build({
  entryPoints: [resolve(process.argv[2] ?? 'examples/quickstart.ts')],
  bundle: true,
  format: 'esm',
  platform: 'node',
  write: false,
  logLevel: 'error',
  plugins: [{
    name: 'self',
    setup(b) {
      b.onResolve({ filter: /^dsh-session-reference(\/\w+)?$/ }, (args) => ({ path: join(root, entries[args.path]) }));
    },
  }],
});
const dir = mkdtempSync(join(tmpdir(), 'dsh-example-'));
try {
  const file = join(dir, 'example.mjs');
  writeFileSync(file, result.outputFiles[0].text);
  const run = spawnSync(process.execPath, [file], { stdio: 'inherit' });
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
