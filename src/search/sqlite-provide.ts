/**
 * How an app gives the library SQLite's WebAssembly module, the engine of search (SPEC §16.5), as
 * a compiled module. Part of the root entry (the search chunk reads it through `kit.ts`), so the
 * entry that exports {@link provideSqliteWasm} loads nothing of the engine up front.
 * @module
 */
import { ProvidedWasm } from '../wasm-provide.js';

/** SQLite's module as the app gives it (see {@link provideSqliteWasm}). */
export const sqliteWasm = new ProvidedWasm('provideSqliteWasm', 'dsh-session-reference/sqlite3.wasm', [
  'sqlite3_open_v2',
  'sqlite3_prepare_v3',
  'sqlite3_serialize',
  'sqlite3_deserialize',
]);

/**
 * Gives the library SQLite's WebAssembly module, the full-text engine of `searchSessions`
 * (SPEC §16.5), compiled, for runtimes that refuse to compile WebAssembly from bytes (Cloudflare
 * workerd): call it once, before the first search, with the module of
 * `dsh-session-reference/sqlite3.wasm`. Elsewhere it is optional (the module is then compiled from
 * bytes on the first search).
 * @example
 * // A Cloudflare Worker (wrangler and esbuild import a .wasm file as a compiled module):
 * import sqlite3 from 'dsh-session-reference/sqlite3.wasm';
 * import { provideSqliteWasm } from 'dsh-session-reference';
 * provideSqliteWasm(sqlite3);
 * @param wasmModule The default import of `dsh-session-reference/sqlite3.wasm`.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `wasmModule` is not a
 * `WebAssembly.Module`, or not SQLite's (it lacks SQLite's exports).
 */
export function provideSqliteWasm(wasmModule: WebAssembly.Module): void {
  sqliteWasm.provide(wasmModule);
}
