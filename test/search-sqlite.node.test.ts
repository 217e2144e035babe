/**
 * SQLite's module as the library carries it (src/search/sqlite-wasm.ts, written by
 * scripts/make-sqlite-wasm.mjs) is the installed @sqlite.org/sqlite-wasm's own dist/sqlite3.wasm,
 * the file the package exports as `./sqlite3.wasm` for Workers: one module in every runtime.
 */
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { output, SQLITE_WASM } from '../scripts/make-sqlite-wasm.mjs';
import { SQLITE_WASM_BASE64URL } from '../src/search/sqlite-wasm.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

describe('SQLite module carried as base64url (scripts/make-sqlite-wasm.mjs)', () => {
  it('is what the script writes from the installed package (run `node scripts/make-sqlite-wasm.mjs` after an upgrade)', () => {
    expect(readFileSync(join(ROOT, 'src/search/sqlite-wasm.ts'), 'utf8')).toBe(output());
  });

  it('decodes to the package file byte for byte, a module with the exports provideSqliteWasm checks', () => {
    const bytes = Buffer.from(SQLITE_WASM_BASE64URL, 'base64url');
    expect(bytes.equals(readFileSync(SQLITE_WASM))).toBe(true);
    const names = WebAssembly.Module.exports(new WebAssembly.Module(bytes)).map((entry) => entry.name);
    expect(names).toEqual(expect.arrayContaining(['sqlite3_open_v2', 'sqlite3_prepare_v3', 'sqlite3_serialize', 'sqlite3_deserialize']));
  });
});

describe('a kept index given as a Node Buffer', () => {
  it('loads from a Buffer slice (a Uint8Array subclass with an offset) as from a plain copy', async () => {
    const { createIndex, indexFromBytes, indexToBytes } = await import('../src/search/index-bytes.js');
    (await import('../src/search/root.js')).useRoot(await import('../src/search/kit.js'));
    const bytes = await indexToBytes(await createIndex(256 * 1024));
    const pooled = Buffer.concat([Buffer.from('padding'), bytes]).subarray(7);
    expect(pooled.byteOffset).toBe(7);
    expect(await indexFromBytes(pooled, 256 * 1024)).toBeDefined();
    expect(await indexFromBytes(new Uint8Array(bytes), 256 * 1024)).toBeDefined();
  });
});
