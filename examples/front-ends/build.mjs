#!/usr/bin/env node
// Builds the three example composers (React, Svelte 5, Vue 3) with Vite, each against the built
// package (`npm run build` first: the examples import `dsh-session-reference/*` through its exports
// map, see shared/package-from-dist.mjs). `npm run build:examples` runs both steps.
//
// Usage: node examples/front-ends/build.mjs [react|svelte|vue ...]   → examples/front-ends/<name>/dist
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const EXAMPLES = ['react', 'svelte', 'vue'];
const HERE = fileURLToPath(new URL('.', import.meta.url));

/**
 * Builds one example into `outDir` (default `<name>/dist`).
 * @param {string} name
 * @param {{ outDir?: string }} [options]
 * @returns {Promise<string>} the output directory
 */
export async function buildExample(name, { outDir = join(HERE, name, 'dist') } = {}) {
  const { build } = await import('vite');
  await build({ configFile: join(HERE, name, 'vite.config.mjs'), logLevel: 'warn', build: { outDir, emptyOutDir: true } });
  return outDir;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const names = process.argv.slice(2);
  for (const name of names.length > 0 ? names : EXAMPLES) console.log(`${name}: ${await buildExample(name)}`);
}
