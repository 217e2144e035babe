/**
 * The row scan of SPEC §11.2.6 as the line classifier runs it: the WebAssembly scan
 * (json-scan.wat, 128-bit SIMD) where it can run, the JavaScript scan (json-scan.ts) for every row
 * it does not vouch for and everywhere it cannot run, so the outcome is always the JavaScript
 * scan's.
 *
 * The WebAssembly module is compiled from its bytes (json-scan-wasm.ts) on the first scan, once
 * per realm, synchronously. Where that fails (Cloudflare workerd forbids compiling WebAssembly from
 * bytes, a page's CSP may too, an engine may lack SIMD) every scan is the JavaScript one, silently:
 * the results are the same. The bytes scanned are copied into the module's memory a window of a
 * chunk at a time (the lines the splitter cuts from one chunk are views into it), not line by line.
 * @module
 */
import { compileWasmSync } from '../wasm.js';
import { scanRow, TOP_LEVEL_KEYS, type ScannedRow } from './json-scan.js';
import { JSON_SCAN_WASM_BASE64URL } from './json-scan-wasm.js';

/** The module's exports (see json-scan.wat). */
interface ScanExports {
  memory: WebAssembly.Memory;
  /** 1 when bytes `[start, end)` of memory are a row it vouches for (results at `[0, 36)`), 0 else. */
  scan(start: number, end: number): number;
}

/** Where copied bytes start in the module's memory (below: results and the container stack). */
const DATA = 4096;
/** Bytes the module may read after a row's end (one 16-byte vector). */
const SLACK = 16;
/** Bytes of a chunk copied at once, from the line being scanned on. */
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
/** The chunk whose bytes `[residentFrom, residentTo)` are in memory at {@link DATA}, if any. */
let resident: Uint8Array | undefined;
let residentFrom = 0;
let residentTo = 0;

/** `true` when the WebAssembly scan runs in this realm (compiling it on the first call). */
export function wasmScanRuns(): boolean {
  return instance() !== null;
}

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

/** Copies `bytes` into memory at {@link DATA}, growing it as needed. */
function copyIn(exports: ScanExports, bytes: Uint8Array): void {
  const { memory } = exports;
  const needed = DATA + bytes.length + SLACK;
  if (memory.buffer.byteLength < needed) memory.grow(Math.ceil((needed - memory.buffer.byteLength) / 65536));
  if (heap.buffer !== memory.buffer) {
    heap = new Uint8Array(memory.buffer);
    words = new Int32Array(memory.buffer, 0, 9);
  }
  heap.set(bytes, DATA);
}

/** The one result of a WebAssembly scan, reused: read it before the next scan. */
const SCANNED: ScannedRow = { starts: new Int32Array(TOP_LEVEL_KEYS.length), ends: new Int32Array(TOP_LEVEL_KEYS.length), types: 0 };

/**
 * Scans the rows of one read (see the module's documentation). Not exported from the package.
 */
export class RowScanner {
  /** The chunk the splitter is cutting lines from, while it does. */
  private chunk: Uint8Array | undefined;

  /**
   * The lines scanned next may be views into `chunk` (`undefined`: the chunk is done with; its
   * buffer may be reused and refilled, so what memory holds of it is forgotten).
   */
  setChunk(chunk: Uint8Array | undefined): void {
    if (resident === chunk || resident === this.chunk) resident = undefined;
    this.chunk = chunk;
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
    const exports = bytes.length <= MAX_WASM_LINE_BYTES ? instance() : null;
    if (exports === null) return undefined;
    const start = this.place(exports, bytes);
    if (exports.scan(start, start + bytes.length) !== 1) return undefined;
    const { starts, ends } = SCANNED;
    for (let k = 0; k < TOP_LEVEL_KEYS.length; k++) {
      const at = words[k]!;
      starts[k] = at < 0 ? -1 : at - start;
      ends[k] = at < 0 ? -1 : words[k + 4]! - start;
    }
    SCANNED.types = words[8]!;
    return SCANNED;
  }

  /** Where `bytes` are in the module's memory: in the window of the chunk copied, else copied alone. */
  private place(exports: ScanExports, bytes: Uint8Array): number {
    const { chunk } = this;
    const offset = chunk === undefined || bytes.buffer !== chunk.buffer ? -1 : bytes.byteOffset - chunk.byteOffset;
    if (chunk === undefined || offset < 0 || offset + bytes.length > chunk.length) {
      resident = undefined;
      copyIn(exports, bytes);
      return DATA;
    }
    if (resident !== chunk || offset < residentFrom || offset + bytes.length > residentTo) {
      residentTo = Math.min(chunk.length, offset + Math.max(WINDOW, bytes.length));
      residentFrom = offset;
      copyIn(exports, chunk.subarray(offset, residentTo));
      resident = chunk;
    }
    return DATA + offset - residentFrom;
  }
}
