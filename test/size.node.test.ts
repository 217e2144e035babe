/**
 * The size budget, checked with every Node test run (and so in CI): `scripts/size.mjs` bundles each
 * Web entry with esbuild (minified), gzips it, and compares with its budget — every row of
 * `BUDGETS` (the root entry at most 10 KB min+gzip, the wire functions alone 2.5 KB, `./store` 19.75 KB,
 * `./editor` 6 KB, `./editor/dom` 7.5 KB). The measured sizes are part
 * of the test names, so they show in the test summary.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { BUDGETS } from '../scripts/size.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

interface EntrySize {
  name: string;
  entry: string;
  budget: number;
  minified: number;
  gzip: number;
  ok: boolean;
  modules: Array<{ path: string; minified: number }>;
}

const run = spawnSync(process.execPath, [join(ROOT, 'scripts/size.mjs'), '--json'], { cwd: ROOT, encoding: 'utf8' });
const sizes: EntrySize[] = run.stdout ? (JSON.parse(run.stdout) as EntrySize[]) : [];

describe('size budget (scripts/size.mjs)', () => {
  it('measures the root entry and ./store', () => {
    expect(run.stderr).toBe('');
    expect(sizes.map((s) => [s.name, s.budget])).toEqual(BUDGETS.map((b) => [b.name, b.budget]));
    expect(sizes.find((s) => s.name === '.')?.budget).toBe(11.25 * 1024);
    // The script's exit status agrees with the budgets (CI's `npm run size` fails the same way).
    expect(run.status).toBe(sizes.every((s) => s.ok) ? 0 : 1);
    console.log(sizes.map((s) => `${s.name.padEnd(8)} ${String(s.gzip).padStart(6)} B min+gzip  (budget ${s.budget} B)`).join('\n'));
  });

  it('an app that never searches does not ship the engine: the root loads the search chunk lazily (SPEC §16.5)', () => {
    const root = sizes.find((s) => s.name === '.')!;
    const chunk = sizes.find((s) => s.name.startsWith('search chunk'))!;
    // Up front: the loader and the root functions it hands over (kit.ts), nothing of the engine.
    // and provideSqliteWasm (src/search/sqlite-provide.ts), which a Worker calls before any search.
    expect(root.modules.filter((m) => m.path.includes('sqlite-wasm') || m.path.startsWith('src/search/')).map((m) => m.path).sort()).toEqual(
      ['src/search/kit.ts', 'src/search/sqlite-provide.ts'].filter((path) => root.modules.some((m) => m.path === path)),
    );
    expect(root.modules.some((m) => m.path === 'src/search/sqlite-provide.ts')).toBe(true);
    expect(chunk.modules.some((m) => m.path.includes('@sqlite.org/sqlite-wasm'))).toBe(true);
    // SQLite's module (base64url) is not even in the chunk: a lazy chunk of its own (workerd never loads it).
    expect(chunk.modules.some((m) => m.path === 'src/search/sqlite-wasm.ts')).toBe(false);
  });

  for (const size of sizes) {
    it(`${size.name} ${size.gzip} B ≤ ${size.budget} B`, () => {
      const heaviest = size.modules
        .slice(0, 3)
        .map((m) => `${m.path} ${m.minified} B`)
        .join(', ');
      const message = `${size.name} is over its budget by ${size.gzip - size.budget} B; heaviest modules: ${heaviest}`;
      expect(size.gzip, message).toBeLessThanOrEqual(size.budget);
    });
  }

  it('./editor/dom carries the composer and the edit model; ./editor carries no DOM code', () => {
    const dom = sizes.find((s) => s.name === './editor/dom')!.modules.map((m) => m.path);
    expect(dom).toEqual(expect.arrayContaining(['src/editor/dom/editor.ts', 'src/editor/dom/view.ts', 'src/editor/edit.ts']));
    expect(sizes.find((s) => s.name === './editor')!.modules.map((m) => m.path).filter((path) => path.includes('/dom/'))).toEqual([]);
  });

  it('./store carries libzstd (for the synchronous parseSessionLog) and the object-store query', () => {
    const store = sizes.find((s) => s.name === './store')!;
    const paths = store.modules.map((m) => m.path);
    expect(paths).toContain('src/store/libzstd-wasm.ts');
    expect(paths).toContain('src/store/object-store.ts');
    expect(paths).not.toContain('src/store/libzstd-js.ts'); // the JavaScript form stays lazy
  });

  it('a streaming app loads libzstd lazily: neither its module nor its JavaScript form up front', () => {
    const streaming = sizes.find((s) => s.name.startsWith('./store streaming'))!;
    const paths = streaming.modules.map((m) => m.path);
    expect(paths).toContain('src/store/object-store.ts');
    for (const lazy of ['src/store/libzstd-wasm.ts', 'src/store/libzstd-js.ts', 'src/store/libzstd.ts', 'src/store/zstd.ts']) expect(paths).not.toContain(lazy);
    expect(streaming.lazy).toBeGreaterThan(60 * 1024);
  });
});
