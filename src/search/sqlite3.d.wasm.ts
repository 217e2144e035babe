/**
 * `dsh-session-reference/sqlite3.wasm`: SQLite's WebAssembly module (from `@sqlite.org/sqlite-wasm`),
 * imported as a compiled `WebAssembly.Module` (wrangler, esbuild for workerd, vitest-pool-workers)
 * and given to `provideSqliteWasm` (SPEC §16.5: search in workerd through a module import).
 */
declare const module: WebAssembly.Module;
export default module;
