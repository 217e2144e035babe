/**
 * The Durable Object path of search bundles no SQLite (SPEC §17.2, §17.5): what an edge catalog
 * imports of the engine — the engine, its hits and the SQL seam — pulls in neither SQLite's
 * WebAssembly build nor its JavaScript, so a Worker never uploads them.
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

describe('the engine without a SQLite of its own', () => {
  it('engine.ts, hits.ts, sql-host.ts and engine-kit.ts bundle without @sqlite.org/sqlite-wasm or its module', async () => {
    const contents = ['engine', 'hits', 'sql-host', 'engine-kit', 'root'].map((name) => `export * from ${JSON.stringify(join(ROOT, `src/search/${name}.ts`))};`).join('\n');
    const result = await build({ stdin: { contents, resolveDir: ROOT, loader: 'ts' }, bundle: true, format: 'esm', platform: 'neutral', mainFields: ['module', 'main'], write: false, metafile: true, logLevel: 'silent' });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((path) => /sqlite|service/i.test(path))).toEqual([]);
    const text = result.outputFiles[0]!.text;
    expect(text).not.toMatch(/sqlite3InitModule|SQLITE_WASM_BASE64URL|AGFzbQ/);
  });
});
