/**
 * libzstd's decoder for the edge entry (SPEC §11.2, §17.2): imported as a compiled module (a
 * `.wasm` import, which wrangler bundles as a `CompiledWasm` module by default) and given to the
 * store before the first zstd log, so a Worker needs no `provideZstdWasm` call of its own.
 * @module
 */
import libzstd from '../store/libzstd.wasm';
import { zstdWasm } from '../store/libzstd-provide.js';

/** Provides libzstd's module once per isolate (every edge entry point calls it). */
export function provideEdgeWasm(): void {
  if (zstdWasm.provided === undefined) zstdWasm.provide(libzstd);
}
