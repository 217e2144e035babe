/**
 * libzstd's decoder, the reference implementation, as every runtime runs it (SPEC §11.2,
 * §11.2.1.1): one module, taken from the `zstddec` package's streaming build (see
 * scripts/make-libzstd.mjs), in one of three forms.
 *
 * - **A compiled module given to `provideZstdWasm`** (libzstd-provide.ts): Cloudflare workerd refuses to compile
 *   WebAssembly from bytes at run time, so a Worker imports `dsh-session-reference/libzstd.wasm`
 *   (wrangler and esbuild turn `import wasm from '….wasm'` into a compiled `WebAssembly.Module`) and
 *   passes it here before its first read.
 * - **The module compiled from its bytes** (base64url in libzstd-wasm.ts), wherever WebAssembly may
 *   be compiled: Node, Deno, Bun, browsers (a page's CSP must allow `'wasm-unsafe-eval'`).
 * - **The same module translated to JavaScript** (binaryen's wasm2js, libzstd-js.ts), where neither
 *   can run: a page whose CSP forbids WebAssembly. Slower, but the same libzstd: the same bytes,
 *   the same error codes, the same 128 KiB bound on what one block yields.
 *
 * Why this and not another decoder (compared in issue 21):
 * - `zstddec` 0.3.4 (MIT AND BSD-3-Clause, maintained, used by three.js): decoder only, 59 KB of
 *   WebAssembly with `ZSTD_decompressStream`, one import. Its own JavaScript glue has no error
 *   codes (a failure reads as an empty result) and compiles from a `data:` URL, so only its module
 *   is used, through this binding.
 * - `@bokuweb/zstd-wasm`: encoder and decoder (~300 KB), one-shot `decompress` only, Emscripten
 *   glue that loads its own `.wasm`; no streaming, errors as exceptions without codes.
 * - `zstd-codec`: an Emscripten build from 2019 (~1 MB with asm.js), unmaintained.
 * - `@oneidentity/zstd-js`: encoder and decoder with asm.js and wasm builds embedded, streaming
 *   through its own buffers, no way to pass a compiled module; errors as strings.
 * - `@foxglove/wasm-zstd`, `@hpcc-js/wasm-zstd`: one-shot decoders needing the output size (or
 *   whole-buffer only), Emscripten glue.
 * - The runtime's own `DecompressionStream('zstd')`: only Bun has it (not Node 20, Deno 2.9 or
 *   Chromium 153); it is asynchronous, gives no error codes, and browsers cap its window at 8 MiB,
 *   so its outcome would differ from libzstd's.
 * - `fzstd` (pure JavaScript, used before): executes a damaged block's sequences far past the
 *   format's 128 KiB block maximum (seconds of CPU for a 150-byte frame) and verifies no checksum;
 *   a guard would have meant patching it, and its errors never match libzstd's.
 * @module
 */
import { raceAbort } from '../abort.js';
import { fail } from '../errors.js';
import { MAX_WINDOW_BYTES } from './zstd-window.js';
import { compileWasm, compileWasmSync } from '../wasm.js';
import { zstdWasm } from './libzstd-provide.js';

/** The exports of libzstd's decoder module this binding calls (WebAssembly or wasm2js). */
interface LibZstdExports {
  memory: { buffer: ArrayBuffer };
  malloc(size: number): number;
  free(pointer: number): void;
  ZSTD_createDCtx(): number;
  ZSTD_freeDCtx(dctx: number): number;
  ZSTD_decompressStream(dctx: number, output: number, input: number): number;
}

/** Where libzstd runs: WebAssembly, or its JavaScript translation. */
export type LibZstdKind = 'wasm' | 'js';

/**
 * Compressed bytes handed to libzstd per call, and the most one call may write: one block's
 * maximum (`ZSTD_BLOCKSIZE_MAX`), so one call costs at most one block's work.
 */
export const STEP_BYTES = 128 * 1024;

/** Imports of the module: it only reports memory growth, which {@link LibZstd} notices by itself. */
const IMPORTS = { env: { emscripten_notify_memory_growth: () => {} } };

/** A libzstd error: its `ZSTD_ErrorCode` (zstd_errors.h). */
export class LibZstdError {
  constructor(readonly code: number) {}
}

/** What one {@link ZstdDecoder.step} did. */
export interface ZstdStep {
  /** Compressed bytes of `input` consumed. */
  consumed: number;
  /** Bytes written: a view of the module's memory, valid until the next call. */
  output: Uint8Array;
  /** The frame being decoded ended and its output is all written. */
  frameEnded: boolean;
}

/**
 * Decoding contexts that asynchronous reads hold at once (SPEC §11.2.2): each holds a window buffer
 * of up to {@link MAX_WINDOW_BYTES} plus two blocks, and WebAssembly memory never shrinks, so
 * concurrent reads take turns rather than each growing the module's memory by a window. A read
 * waits for a context ({@link LibZstd.whenAvailable}) only when its bytes turn out to be zstd; a
 * synchronous parse takes one at once (it ends before any other read runs), so at most
 * `MAX_LIVE_CONTEXTS + 1` exist: libzstd's memory stays under about 3 × 8.4 MiB plus its own.
 */
export const MAX_LIVE_CONTEXTS = 2;

/** Idle decoding contexts kept for the next read (each keeps its window buffer); freed ones go back to libzstd's allocator for the next. */
const MAX_IDLE_CONTEXTS = MAX_LIVE_CONTEXTS;

/**
 * libzstd, instantiated once per runtime. Every stream has a decoding context of its own; the
 * input and output buffers of a call are shared (a call's bytes are copied in and its output read
 * out before any other call).
 */
export class LibZstd {
  private heap: Uint8Array;
  private view: DataView;
  /** Decoding contexts whose last frame ended, kept for the next stream. */
  private readonly idle: number[] = [];
  /** Contexts in use by a stream. */
  private live = 0;
  /** Reads waiting for a context, first come first served. */
  private readonly waiting: (() => void)[] = [];
  /** {@link STEP_BYTES} of input, then of output, then the `ZSTD_inBuffer` and `ZSTD_outBuffer` structs. */
  private readonly input: number;

  constructor(
    private readonly api: LibZstdExports,
    readonly kind: LibZstdKind,
  ) {
    this.heap = new Uint8Array(api.memory.buffer);
    this.view = new DataView(api.memory.buffer);
    this.input = this.malloc(2 * STEP_BYTES + 24);
  }

  /**
   * A new streaming decoder (see {@link ZstdDecoder}), whether or not a context is
   * {@link LibZstd.available}: an asynchronous read waits for one first.
   */
  open(): ZstdDecoder {
    return new ZstdDecoder(this);
  }

  /** Fewer than {@link MAX_LIVE_CONTEXTS} contexts are in use: a read may open a decoder now. */
  get available(): boolean {
    return this.live < MAX_LIVE_CONTEXTS;
  }

  /**
   * Resolves once a context is {@link LibZstd.available} (at once when one is); callers check
   * again, since another read may take it first.
   * @throws SessionReferenceError `SESSION_REFERENCE_CANCELLED` when `signal` aborts while waiting.
   */
  async whenAvailable(signal?: AbortSignal): Promise<void> {
    if (this.available) return;
    let wake!: () => void;
    const turn = new Promise<void>((resolve) => (wake = resolve));
    this.waiting.push(wake);
    try {
      await raceAbort(turn, signal);
    } finally {
      const at = this.waiting.indexOf(wake);
      if (at !== -1) this.waiting.splice(at, 1);
      // A wake-up this read cannot use goes to the next in line.
      else if (signal?.aborted) this.waiting.shift()?.();
    }
  }

  /** Contexts in use by streams now (at most {@link MAX_LIVE_CONTEXTS} for asynchronous reads, one more during a synchronous parse). */
  get liveContexts(): number {
    return this.live;
  }

  /** Bytes of the module's memory (it grows, never shrinks): what its reads have cost at most. */
  get memoryBytes(): number {
    return this.api.memory.buffer.byteLength;
  }

  /**
   * One `ZSTD_decompressStream` call of `context` over the first bytes of `input` (at most
   * {@link STEP_BYTES}), writing at most {@link STEP_BYTES}.
   * @throws LibZstdError for a libzstd error.
   */
  step(context: number, input: Uint8Array): ZstdStep {
    const size = Math.min(input.length, STEP_BYTES);
    const output = this.input + STEP_BYTES;
    const inStruct = output + STEP_BYTES;
    const outStruct = inStruct + 12;
    this.refresh();
    this.heap.set(size === input.length ? input : input.subarray(0, size), this.input);
    const view = this.view;
    view.setUint32(inStruct, this.input, true);
    view.setUint32(inStruct + 4, size, true);
    view.setUint32(inStruct + 8, 0, true);
    view.setUint32(outStruct, output, true);
    view.setUint32(outStruct + 4, STEP_BYTES, true);
    view.setUint32(outStruct + 8, 0, true);
    const result = this.api.ZSTD_decompressStream(context, outStruct, inStruct);
    // ZSTD_isError: a size_t above (size_t)-ZSTD_error_maxCode (120), here a negative i32.
    if (result < 0 && result > -120) throw new LibZstdError(-result);
    this.refresh();
    const consumed = this.view.getUint32(inStruct + 8, true);
    const written = this.view.getUint32(outStruct + 8, true);
    return { consumed, output: this.heap.subarray(output, output + written), frameEnded: result === 0 };
  }

  /** Sees the module's memory afresh after it grew. */
  private refresh(): void {
    if (this.heap.buffer !== this.api.memory.buffer) {
      this.heap = new Uint8Array(this.api.memory.buffer);
      this.view = new DataView(this.api.memory.buffer);
    }
  }

  private malloc(size: number): number {
    const pointer = this.api.malloc(size);
    if (pointer === 0) throw fail('INVALID_LOG', `dsh session log: the zstd decoder ran out of memory (${size} bytes)`);
    return pointer;
  }

  /** A decoding context: an idle one (between frames), else a new one. */
  createContext(): number {
    const context = this.idle.pop() ?? this.api.ZSTD_createDCtx();
    if (context === 0) throw fail('INVALID_LOG', 'dsh session log: the zstd decoder ran out of memory');
    this.live++;
    return context;
  }

  /**
   * Gives a context back: kept when `clean` (its last frame ended: it starts the next one afresh),
   * else freed; the first read waiting for a context is woken.
   */
  releaseContext(context: number, clean: boolean): void {
    this.live--;
    if (clean && this.idle.length < MAX_IDLE_CONTEXTS) this.idle.push(context);
    else this.api.ZSTD_freeDCtx(context);
    this.waiting.shift()?.();
  }
}

/**
 * One `ZSTD_DCtx` decoding a sequence of data frames (no skippable frames: the caller skips
 * those) with `ZSTD_decompressStream`, at most {@link STEP_BYTES} in and out per call. Frame
 * validation, content size and checksum checks are libzstd's own.
 */
export class ZstdDecoder {
  private readonly context: number;
  /** Mid-frame (between the first byte of a frame given and its end). */
  private inFrame = false;
  private closed = false;

  constructor(private readonly lib: LibZstd) {
    this.context = lib.createContext();
  }

  /**
   * One `ZSTD_decompressStream` call over the first bytes of `input` (at most {@link STEP_BYTES}).
   * @throws LibZstdError for a libzstd error: the decoder is then only closed (libzstd's context
   * is left mid-frame, and the module exports no `ZSTD_DCtx_reset`).
   */
  step(input: Uint8Array): ZstdStep {
    if (input.length > 0) this.inFrame = true;
    const step = this.lib.step(this.context, input);
    if (step.frameEnded) this.inFrame = false;
    return step;
  }

  /** Gives the context back (kept for the next stream when between frames); idempotent. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.lib.releaseContext(this.context, !this.inFrame);
  }
}

// ---------------------------------------------------------------------------------------------
// Loading

let loaded: LibZstd | undefined;
let loading: Promise<LibZstd> | undefined;

function fromModule(compiled: WebAssembly.Module): LibZstd {
  const instance = new WebAssembly.Instance(compiled, IMPORTS);
  return new LibZstd(instance.exports as unknown as LibZstdExports, 'wasm');
}

/**
 * libzstd, synchronously (the synchronous `parseSessionLog`): the one loaded already, else the
 * provided module, else the module compiled from `base64url`.
 * @returns `undefined` where WebAssembly cannot run and the JavaScript form is not loaded yet.
 */
export function libZstdSync(base64url: string): LibZstd | undefined {
  if (loaded) return loaded;
  try {
    loaded = fromModule(compileWasmSync(zstdWasm.provided, base64url));
  } catch {
    return undefined;
  }
  return loaded;
}

/**
 * libzstd, loaded on first use (later calls share the first): the provided module, else the
 * module compiled from its bytes, else its JavaScript form. Only the forms needed are fetched
 * (dynamic `import()`).
 */
export function loadLibZstd(): Promise<LibZstd> {
  loading ??= (async () => {
    if (loaded) return loaded;
    try {
      const compiled = await compileWasm(zstdWasm.provided, async () => (await import('./libzstd-wasm.js')).LIBZSTD_WASM_BASE64URL);
      loaded ??= fromModule(compiled); // a synchronous parse may have instantiated it meanwhile
    } catch {
      // No WebAssembly here (a CSP without 'wasm-unsafe-eval', workerd without a provided module).
      loaded ??= await loadLibZstdJs();
    }
    return loaded;
  })();
  return loading;
}

/**
 * A new instance of libzstd in its JavaScript form (what runs where WebAssembly cannot): also
 * for tests and the bench, which compare it with the WebAssembly form.
 */
export async function loadLibZstdJs(): Promise<LibZstd> {
  const { instantiate } = (await import('./libzstd-js.js')) as unknown as { instantiate(imports: typeof IMPORTS): LibZstdExports };
  return new LibZstd(instantiate(IMPORTS), 'js');
}
