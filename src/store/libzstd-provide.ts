/**
 * How an app gives the library libzstd's decoder as a compiled module (SPEC §11.2): kept apart
 * from the decoder itself (libzstd.ts), so the entry that exports {@link provideZstdWasm} does not
 * load the decoder up front.
 * @module
 */
import { ProvidedWasm } from '../wasm-provide.js';

/** libzstd's module as the app gives it (see {@link provideZstdWasm}). */
export const zstdWasm = new ProvidedWasm('provideZstdWasm', 'dsh-session-reference/libzstd.wasm', [
  'memory',
  'malloc',
  'free',
  'ZSTD_createDCtx',
  'ZSTD_freeDCtx',
  'ZSTD_decompressStream',
]);

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
  zstdWasm.provide(wasmModule);
}
