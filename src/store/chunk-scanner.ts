/**
 * The chunk scanner of one read (SPEC §11.1, §11.2.6): the line splitter's newline search and the
 * classifier's row scan, in WebAssembly (json-scan.wat, 128-bit SIMD) where it can run. The bytes
 * of the chunk being split are copied into the module's memory a window at a time, once, and both
 * the newline search and the scan of the lines cut from it run there.
 *
 * The row scan gives exactly the JavaScript scan's result (json-scan.ts): a row the module does not
 * vouch for is scanned again in JavaScript, so errors, messages and line numbers stay the
 * JavaScript scan's. The module is compiled from its bytes (json-scan-wasm.ts) on first use, once
 * per realm, synchronously; where that fails (Cloudflare workerd forbids compiling WebAssembly from
 * bytes, a page's CSP may too, an engine may lack SIMD) the newline search is `indexOf` and the
 * scan the JavaScript one, silently: the results are the same.
 * @module
 */
import { compileWasmSync } from '../wasm.js';
import { scanRow, TOP_LEVEL_KEYS, type ScannedRow } from './json-scan.js';
import { JSON_SCAN_WASM_BASE64URL } from './json-scan-wasm.js';

/** The module's exports (see json-scan.wat). */
interface ScanExports {
  memory: WebAssembly.Memory;
  /** The address of the first LF in memory `[from, to)`, or `to`. */
  newline(from: number, to: number): number;
  /** 1 when bytes `[start, end)` of memory are a row it vouches for (results at `[0, 36)`), 0 else. */
  scan(start: number, end: number): number;
}

/** Where copied bytes start in the module's memory (below: results and the container stack). */
const DATA = 4096;
/** Bytes the module may read after the bytes it is given (one 16-byte vector). */
const SLACK = 16;
/** Bytes of a chunk copied at once. */
const WINDOW = 256 * 1024;
/**
 * Longest line the WebAssembly scan takes, in bytes; a longer one is scanned in JavaScript. The
 * module's memory never shrinks: this bounds it (with {@link WINDOW}) at about 4 MiB per realm.
 */
export const MAX_WASM_LINE_BYTES = 4 * 1024 * 1024;

/** The module's instance: `null` where it cannot run, `undefined` before the first try. */
let loaded: ScanExports | null | undefined;
/** Views of the module's memory, remade after it grows. */
let heap = new Uint8Array(0);
let words = new Int32Array(0);
/** The chunk whose bytes `[residentFrom, residentTo)` are in memory at {@link DATA}, if any (shared by every read of the realm). */
let resident: Uint8Array | undefined;
let residentFrom = 0;
let residentTo = 0;

function instance(): ScanExports | null {
  if (loaded === undefined) {
    try {
      const compiled = compileWasmSync(undefined, JSON_SCAN_WASM_BASE64URL);
      loaded = new WebAssembly.Instance(compiled, {}).exports as unknown as ScanExports;
    } catch {
      loaded = null;
    }
  }
  return loaded;
}

/** `true` when the WebAssembly scan runs in this realm (compiling it on the first call). */
export function wasmScanRuns(): boolean {
  return instance() !== null;
}

/**
 * Copies `bytes` into memory at {@link DATA}, growing it as needed.
 * @returns `false` when the memory cannot grow (the caller takes the JavaScript path).
 */
function copyIn(wasm: ScanExports, bytes: Uint8Array): boolean {
  const { memory } = wasm;
  const needed = DATA + bytes.length + SLACK;
  if (memory.buffer.byteLength < needed) {
    try {
      memory.grow(Math.ceil((needed - memory.buffer.byteLength) / 65536));
    } catch {
      resident = undefined;
      return false;
    }
  }
  if (heap.buffer !== memory.buffer) {
    heap = new Uint8Array(memory.buffer);
    words = new Int32Array(memory.buffer, 0, 9);
  }
  heap.set(bytes, DATA);
  return true;
}

/** Copies bytes `[from, to)` of `chunk` into memory: they are the resident window (`false`: see {@link copyIn}). */
function copyWindow(wasm: ScanExports, chunk: Uint8Array, from: number, to: number): boolean {
  if (!copyIn(wasm, chunk.subarray(from, to))) return false;
  resident = chunk;
  residentFrom = from;
  residentTo = to;
  return true;
}

/** The one result of a WebAssembly scan, reused: read it before the next scan. */
const SCANNED: ScannedRow = { starts: new Int32Array(TOP_LEVEL_KEYS.length), ends: new Int32Array(TOP_LEVEL_KEYS.length), types: 0 };

/** The newline search and row scan of one read (see the module). Not exported from the package. */
export class ChunkScanner {
  /** The chunk the splitter is cutting lines from, while it does. */
  private chunk: Uint8Array | undefined;

  /**
   * The chunk the next lines are cut from (`undefined`: the splitter is done with it; its buffer
   * may be reused and refilled, so what memory holds of it is forgotten).
   */
  setChunk(chunk: Uint8Array | undefined): void {
    if (resident === chunk || resident === this.chunk) resident = undefined;
    this.chunk = chunk;
  }

  /** The index of the first `\n` (0x0A) of the current chunk from `start` on, or -1. */
  newline(start: number): number {
    const chunk = this.chunk!;
    const wasm = instance();
    if (wasm === null) return chunk.indexOf(0x0a, start);
    if (start >= chunk.length) return -1;
    if (resident !== chunk || start < residentFrom || start >= residentTo) {
      if (!copyWindow(wasm, chunk, start, Math.min(chunk.length, start + WINDOW))) return chunk.indexOf(0x0a, start);
    }
    for (let from = start; ; ) {
      const to = DATA + residentTo - residentFrom;
      const found = wasm.newline(DATA + from - residentFrom, to);
      if (found < to) return found - DATA + residentFrom;
      if (residentTo === chunk.length) return -1;
      // The line goes on past the window: a window from the line's start, twice as long as what
      // was searched (so the scan finds the line in it, and a long line costs a few copies).
      from = residentTo;
      if (!copyWindow(wasm, chunk, start, Math.min(chunk.length, start + Math.max(WINDOW, 2 * (residentTo - start))))) return chunk.indexOf(0x0a, from);
    }
  }

  /**
   * {@link scanRow}'s result for `bytes` (one line without its `\n`): the same object shape,
   * reused by the next scan.
   */
  scan(bytes: Uint8Array): ScannedRow | undefined {
    return this.vouch(bytes) ?? scanRow(bytes);
  }

  /**
   * The WebAssembly scan alone: {@link scanRow}'s result for `bytes` when the module vouches for
   * them (reused by the next scan); `undefined` when it does not (a row {@link scanRow} may still
   * accept, nested deeper than 4,032 containers) or cannot run here, or `bytes` are longer than
   * {@link MAX_WASM_LINE_BYTES}.
   */
  vouch(bytes: Uint8Array): ScannedRow | undefined {
    const wasm = bytes.length <= MAX_WASM_LINE_BYTES ? instance() : null;
    if (wasm === null) return undefined;
    const start = this.place(wasm, bytes);
    if (start < 0 || wasm.scan(start, start + bytes.length) !== 1) return undefined;
    const { starts, ends } = SCANNED;
    for (let k = 0; k < TOP_LEVEL_KEYS.length; k++) {
      const at = words[k]!;
      starts[k] = at < 0 ? -1 : at - start;
      ends[k] = at < 0 ? -1 : words[k + 4]! - start;
    }
    SCANNED.types = words[8]!;
    return SCANNED;
  }

  /** Where `bytes` are in the module's memory: in the chunk's window (copied if need be), else copied alone; -1 when they cannot be copied. */
  private place(wasm: ScanExports, bytes: Uint8Array): number {
    const { chunk } = this;
    const offset = chunk === undefined || bytes.buffer !== chunk.buffer ? -1 : bytes.byteOffset - chunk.byteOffset;
    if (chunk === undefined || offset < 0 || offset + bytes.length > chunk.length) {
      resident = undefined;
      return copyIn(wasm, bytes) ? DATA : -1;
    }
    if (resident !== chunk || offset < residentFrom || offset + bytes.length > residentTo) {
      if (!copyWindow(wasm, chunk, offset, Math.min(chunk.length, offset + Math.max(WINDOW, bytes.length)))) return -1;
    }
    return DATA + offset - residentFrom;
  }
}
