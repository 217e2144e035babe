/**
 * The one way this library gets a compiled WebAssembly module (libzstd's decoder, SPEC §11.2;
 * SQLite for search, §16.5): the module an app provided, else the module compiled from the bytes
 * the library carries (base64url). Cloudflare workerd refuses to compile WebAssembly from bytes at
 * run time, so a Worker imports the package's `.wasm` file (wrangler and esbuild turn
 * `import wasm from '….wasm'` into a compiled `WebAssembly.Module`) and provides it; everywhere
 * else (Node, Deno, Bun, browsers whose CSP allows `'wasm-unsafe-eval'`) providing is optional.
 * @module
 */
import { decodeBase64url } from './base64url.js';

/**
 * Compiling from bytes, typed as the Web platform has it: Cloudflare's Workers types declare
 * neither (workerd refuses both at run time, and callers then take their fallbacks). Read at each
 * call, never when this module loads: a realm without a `WebAssembly` global (some locked-down
 * browsers) still loads the library, and only the calls that need WebAssembly fail.
 */
function compiler(): { Module: new (bytes: BufferSource) => WebAssembly.Module; compile(bytes: BufferSource): Promise<WebAssembly.Module> } {
  return WebAssembly as never;
}

/** The bytes of a module carried as base64url (a fresh buffer: the codec's scratch is shared). */
function moduleBytes(base64url: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(decodeBase64url(base64url, 0)!);
}

/**
 * The provided module, else the module compiled synchronously from `base64url`.
 * @throws whatever the runtime throws where WebAssembly may not be compiled from bytes.
 */
export function compileWasmSync(provided: WebAssembly.Module | undefined, base64url: string): WebAssembly.Module {
  return provided ?? new (compiler().Module)(moduleBytes(base64url));
}

/**
 * The provided module, else the module compiled from the base64url that `load` gives (loaded only
 * then: a dynamic `import()` keeps the bytes out of bundles that never need them).
 * @throws whatever the runtime throws where WebAssembly may not be compiled from bytes.
 */
export async function compileWasm(provided: WebAssembly.Module | undefined, load: () => Promise<string>): Promise<WebAssembly.Module> {
  return provided ?? compiler().compile(moduleBytes(await load()));
}
