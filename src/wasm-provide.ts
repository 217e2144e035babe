/**
 * A WebAssembly module an app gives the library compiled (`provideZstdWasm`, `provideSqliteWasm`):
 * see `wasm.ts` for how it is used. Apart from the compiling, so an entry that exports a `provide…`
 * function ships none of it up front.
 * @module
 */
import { describeValue, fail } from './errors.js';

/** A module an app may provide: the function that takes it, its package file and the exports it must have. */
export class ProvidedWasm {
  private module: WebAssembly.Module | undefined;

  /**
   * @param provider The public function that provides it (`provideZstdWasm`), for messages.
   * @param file The package export holding the module (`dsh-session-reference/libzstd.wasm`).
   * @param requiredExports Names the module must export.
   */
  constructor(
    private readonly provider: string,
    private readonly file: string,
    private readonly requiredExports: readonly string[],
  ) {}

  /**
   * Keeps `wasmModule` for every later load.
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when it is not a
   * `WebAssembly.Module`, or lacks one of the exports.
   */
  provide(wasmModule: unknown): void {
    if (typeof WebAssembly === 'undefined' || !(wasmModule instanceof WebAssembly.Module)) {
      throw fail('INVALID_ARGUMENT', `${this.provider} needs a WebAssembly.Module (the default import of ${this.file}), got ${describeValue(wasmModule)}`);
    }
    const names = new Set(WebAssembly.Module.exports(wasmModule).map((entry) => entry.name));
    const missing = this.requiredExports.filter((name) => !names.has(name));
    if (missing.length > 0) throw fail('INVALID_ARGUMENT', `${this.provider} needs the module of ${this.file}; this one lacks ${missing.join(', ')}`);
    this.module = wasmModule;
  }

  /** The module provided, if any. */
  get provided(): WebAssembly.Module | undefined {
    return this.module;
  }
}
