/**
 * How an app gives the library libzstd's decoder as a compiled module (SPEC §11.2): kept apart
 * from the decoder itself (libzstd.ts), so the entry that exports {@link provideZstdWasm} does not
 * load the decoder up front.
 * @module
 */
import { describeValue, fail } from '../errors.js';

/** The module given by {@link provideZstdWasm}. */
let provided: WebAssembly.Module | undefined;

/**
 * Gives the library libzstd's decoder as a compiled WebAssembly module, for runtimes that refuse
 * to compile WebAssembly from bytes (Cloudflare workerd): call it once, before the first zstd
 * read, with the module of `dsh-session-reference/libzstd.wasm`. Elsewhere it is optional (the
 * module is then compiled from bytes on the first zstd log).
 * @example
 * // A Cloudflare Worker (wrangler and esbuild import a .wasm file as a compiled module):
 * import libzstd from 'dsh-session-reference/libzstd.wasm';
 * import { provideZstdWasm } from 'dsh-session-reference/store';
 * provideZstdWasm(libzstd);
 * @param wasmModule The default import of `dsh-session-reference/libzstd.wasm`.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `wasmModule` is not a
 * `WebAssembly.Module`, or not libzstd's (it lacks the decoder's exports).
 */
export function provideZstdWasm(wasmModule: WebAssembly.Module): void {
  if (!(wasmModule instanceof WebAssembly.Module)) {
    throw fail('INVALID_ARGUMENT', `provideZstdWasm needs a WebAssembly.Module (the default import of dsh-session-reference/libzstd.wasm), got ${describeValue(wasmModule)}`);
  }
  const names = new Set(WebAssembly.Module.exports(wasmModule).map((entry) => entry.name));
  const missing = ['memory', 'malloc', 'free', 'ZSTD_createDCtx', 'ZSTD_freeDCtx', 'ZSTD_decompressStream'].filter((name) => !names.has(name));
  if (missing.length > 0) {
    throw fail('INVALID_ARGUMENT', `provideZstdWasm needs the module of dsh-session-reference/libzstd.wasm; this one lacks ${missing.join(', ')}`);
  }
  provided = wasmModule;
}

/** The module given to {@link provideZstdWasm}, if any. */
export function providedZstdWasm(): WebAssembly.Module | undefined {
  return provided;
}
