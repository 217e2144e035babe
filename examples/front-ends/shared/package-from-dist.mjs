// A Vite plugin for the examples: `dsh-session-reference` and its subpaths resolve through the
// package's `exports` map to the built files (`npm run build` → dist/), exactly what an app that
// installed the package gets. `DSH_SESSION_REFERENCE_DIST` points at another build (the test
// builds one in a temporary folder).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** @returns {import('vite').Plugin} */
export function packageFromDist() {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const dist = resolve(process.env.DSH_SESSION_REFERENCE_DIST ?? join(ROOT, 'dist'));
  return {
    name: 'dsh-session-reference-from-dist',
    enforce: 'pre',
    resolveId(id) {
      if (id !== manifest.name && !id.startsWith(`${manifest.name}/`)) return null;
      const target = manifest.exports[`.${id.slice(manifest.name.length)}`];
      const file = typeof target === 'string' ? target : target?.import;
      if (typeof file !== 'string') this.error(`${id} is not an export of ${manifest.name} for web apps`);
      return join(dist, file.replace(/^\.\/dist\//, ''));
    },
  };
}
