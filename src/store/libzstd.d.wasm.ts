/**
 * `dsh-session-reference/libzstd.wasm`: libzstd's decoder module, imported as a compiled
 * `WebAssembly.Module` (wrangler, esbuild for workerd, vitest-pool-workers) and given to
 * `provideZstdWasm` (SPEC §11.2: libzstd in workerd through a module import).
 */
declare const module: WebAssembly.Module;
export default module;
