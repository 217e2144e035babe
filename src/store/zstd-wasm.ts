/**
 * Complete zstd frames decoded by the reference decoder, libzstd, compiled to WebAssembly (the
 * npm package `zstddec`), where the runtime may compile WebAssembly from bytes (SPEC §11.2).
 *
 * A dsh log is mostly small frames (the header line, then one frame per write batch), and
 * `fzstd`, in JavaScript, allocates and fills its Huffman and FSE tables for each of them: a
 * listing of 10,000 sessions spent most of its own time there. libzstd decodes such a frame
 * in about a third of the time. Where WebAssembly cannot be compiled from bytes (Cloudflare
 * workerd, a page whose Content-Security-Policy lacks `'wasm-unsafe-eval'`), or until the module
 * is compiled, {@link wasmZstd} is `undefined` and `fzstd` decodes every frame: the same bytes,
 * slower. Streamed frames (a long log in one frame) always go through `fzstd`'s streaming decoder.
 *
 * Loaded with a dynamic `import()` by the zstd module, so only apps that meet a zstd log fetch it.
 * @module
 */

/**
 * Decodes one complete zstd frame (and nothing else) into exactly `size` bytes (its declared
 * content size), verifying its content checksum when it has one.
 * @returns The decoded bytes (a fresh array), or `undefined` when libzstd reports an error of
 * any kind (corrupt frame, wrong content checksum, more than `size` bytes) or the frame is
 * empty or over 16 MiB: the caller then decodes the frame with `fzstd`, which names the fault
 * as every runtime does.
 */
export type WasmFrameDecoder = (frame: Uint8Array, size: number) => Uint8Array | undefined;

/**
 * Frames that decode to more bytes, or hold more, are left to `fzstd` (a store decodes complete
 * frames of at most 8 MiB at once): the module's memory never grows past a few times this.
 */
const MAX_FRAME_BYTES = 16 * 1024 * 1024;

/** `undefined`: not loaded (or still compiling); `null`: this runtime refuses it. */
let decoder: WasmFrameDecoder | null | undefined;
let loading: Promise<void> | undefined;

/**
 * Compiles the WebAssembly decoder once (later calls share the first). Never rejects: where the
 * runtime refuses it, {@link wasmZstd} stays `undefined`.
 */
export function loadWasmZstd(): Promise<void> {
  loading ??= import('zstddec')
    .then(async ({ ZSTDDecoder }) => {
      const zstddec = new ZSTDDecoder();
      await zstddec.init();
      decoder = (frame, size) => {
        // A size of 0 would make zstddec read the size from the frame itself.
        if (size === 0 || size > MAX_FRAME_BYTES || frame.length > MAX_FRAME_BYTES) return undefined;
        // zstddec returns the bytes libzstd reports written, none for an error code (a negative
        // size from the 32-bit module); a frame of `size` bytes is the only good answer.
        const out = zstddec.decode(frame, size);
        return out.length === size ? out : undefined;
      };
    })
    .catch(() => {
      decoder = null; // workerd, a strict CSP, or no WebAssembly at all: fzstd decodes.
    });
  return loading;
}

/** The WebAssembly frame decoder, once {@link loadWasmZstd} has compiled it here. */
export function wasmZstd(): WasmFrameDecoder | undefined {
  return decoder ?? undefined;
}
