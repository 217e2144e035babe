/**
 * XXH64 (seed 0) over bytes, for the zstd frame content checksum (SPEC §11.2), one-shot or
 * streamed.
 *
 * The hash runs as a 657-byte WebAssembly module (src/store/xxhash64.wat: native 64-bit
 * multiplies; the stripe loop about 13× the JavaScript one) where the runtime may compile
 * WebAssembly from bytes. Where it may not (Cloudflare workerd, a page whose
 * Content-Security-Policy lacks `'wasm-unsafe-eval'`), the JavaScript code below runs instead:
 * same result, slower. 64-bit values are pairs of unsigned 32-bit halves (no `BigInt`); the
 * JavaScript stripe loop has its multiplications inlined (`Math.imul` and one double product each)
 * and keeps its four lanes in local variables.
 * @module
 */
import { decodeBase64url } from '../base64url.js';
import { XXH64_WASM_BASE64URL } from './xxhash64-wasm.js';

// The five XXH64 primes, as [high 32 bits, low 32 bits].
const P1H = 0x9e3779b1, P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d, P2L = 0x27d4eb4f;
const P3H = 0x165667b1, P3L = 0x9e3779f9;
const P4H = 0x85ebca77, P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f, P5L = 0x165667c5;
/** 2^-32: scales a product to its high 32-bit half, exactly. */
const TWO_TO_MINUS_32 = 2 ** -32;

/** Scratch result of the 64-bit helpers below (tail and finish only): one u64 as two halves. */
let rh = 0;
let rl = 0;

/** `rh:rl = (ah:al) * (bh:bl) mod 2^64`. */
function mul(ah: number, al: number, bh: number, bl: number): void {
  const a0 = al & 0xffff, a1 = al >>> 16, b0 = bl & 0xffff, b1 = bl >>> 16;
  const p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  rl = (((mid & 0xffff) << 16) | (p00 & 0xffff)) >>> 0;
  rh = (a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16) + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0;
}

/** `rh:rl = (ah:al) + (bh:bl) mod 2^64`. */
function add(ah: number, al: number, bh: number, bl: number): void {
  const low = al + bl;
  rl = low >>> 0;
  rh = (ah + bh + (low > 0xffffffff ? 1 : 0)) >>> 0;
}

/** `rh:rl = rotl64(h:l, n)` for `0 < n < 32`. */
function rotl(h: number, l: number, n: number): void {
  rh = ((h << n) | (l >>> (32 - n))) >>> 0;
  rl = ((l << n) | (h >>> (32 - n))) >>> 0;
}

/** XXH64 round: `rh:rl = rotl(acc + input * P2, 31) * P1`. */
function round(acch: number, accl: number, inh: number, inl: number): void {
  mul(inh, inl, P2H, P2L);
  add(acch, accl, rh, rl);
  rotl(rh, rl, 31);
  mul(rh, rl, P1H, P1L);
}

/** XXH64 merge round: `rh:rl = (acc ^ round(0, val)) * P1 + P4`. */
function merge(acch: number, accl: number, valh: number, vall: number): void {
  round(0, 0, valh, vall);
  mul((acch ^ rh) >>> 0, (accl ^ rl) >>> 0, P1H, P1L);
  add(rh, rl, P4H, P4L);
}

function u32(bytes: Uint8Array, i: number): number {
  return (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24)) >>> 0;
}

/**
 * Runs the four lanes `v` (`[v1h, v1l, … v4h, v4l]`) over the 32-byte stripes of
 * `bytes[start, end)` (`end - start` a multiple of 32). One lane step is
 * `v = rotl(v + input * P2, 31) * P1`. Each 32 × 32-bit product takes its low half from
 * `Math.imul` and its high half from the product as a double: that is within 2^13 of the exact
 * product, so `(product - low) / 2^32` rounds to the exact high half.
 */
function stripes(v: Uint32Array, bytes: Uint8Array, start: number, end: number): void {
  for (let lane = 0; lane < 4; lane++) {
    let h = v[2 * lane]!, l = v[2 * lane + 1]!;
    for (let i = start + 8 * lane; i < end; i += 32) {
      const il = (bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24)) >>> 0;
      const ih = (bytes[i + 4]! | (bytes[i + 5]! << 8) | (bytes[i + 6]! << 16) | (bytes[i + 7]! << 24)) >>> 0;
      // t = input * P2
      const tl = Math.imul(il, P2L) >>> 0;
      const th = Math.round((il * P2L - tl) * TWO_TO_MINUS_32) + Math.imul(ih, P2L) + Math.imul(il, P2H);
      // v += t
      const low = l + tl;
      const sl = low >>> 0;
      const sh = (h + th + (low > 0xffffffff ? 1 : 0)) >>> 0;
      // v = rotl(v, 31)
      const rH = ((sh << 31) | (sl >>> 1)) >>> 0;
      const rL = ((sl << 31) | (sh >>> 1)) >>> 0;
      // v *= P1
      l = Math.imul(rL, P1L) >>> 0;
      h = (Math.round((rL * P1L - l) * TWO_TO_MINUS_32) + Math.imul(rH, P1L) + Math.imul(rL, P1H)) >>> 0;
    }
    v[2 * lane] = h;
    v[2 * lane + 1] = l;
  }
}

/** The WebAssembly XXH64 (see the module): lanes at bytes 0..31, digest at 32..39, input from byte 64. */
interface WasmXxh64 {
  /** The module's memory as bytes and as 32-bit words (it never grows, so the views stay valid). */
  bytes: Uint8Array;
  words: Uint32Array;
  stripes(length: number): void;
  digest(total: number, tailLength: number): void;
}

/** Input bytes per call of the WebAssembly stripe loop (its memory is 128 KiB). */
const WASM_PIECE = 65536;

/** Spans shorter than this run through the JavaScript stripe loop: copying the lanes would cost more. */
const WASM_MIN_BYTES = 512;

/** `undefined`: not tried yet; `null`: this runtime may not compile WebAssembly from bytes. */
let wasm: WasmXxh64 | null | undefined;

/** The WebAssembly XXH64, compiled on first use; `null` where the runtime refuses it. */
function wasmXxh64(): WasmXxh64 | null {
  if (wasm !== undefined) return wasm;
  try {
    const binary = decodeBase64url(XXH64_WASM_BASE64URL, 0)!.slice(); // a copy: the codec's buffer is shared
    // The Web's constructor; Workers' types declare `Module` abstract, as workerd refuses to
    // compile bytes (it throws, and the catch below falls back).
    const Module = WebAssembly.Module as unknown as new (bytes: Uint8Array) => WebAssembly.Module;
    const { exports: api } = new WebAssembly.Instance(new Module(binary));
    const { buffer } = api.memory as WebAssembly.Memory;
    wasm = {
      bytes: new Uint8Array(buffer),
      words: new Uint32Array(buffer, 0, 10),
      stripes: api.stripes as WasmXxh64['stripes'],
      digest: api.digest as WasmXxh64['digest'],
    };
  } catch {
    wasm = null; // workerd, a strict CSP, or no WebAssembly at all: the JavaScript code.
  }
  return wasm;
}

/** Whether this runtime runs the WebAssembly XXH64 (compiles it on first call). */
export function xxh64UsesWasm(): boolean {
  return wasmXxh64() !== null;
}

/** Copies the lanes (`[high, low]` pairs here, little-endian u64 there) into the module's memory. */
function lanesIn(engine: WasmXxh64, v: Uint32Array): void {
  for (let lane = 0; lane < 4; lane++) {
    engine.words[2 * lane] = v[2 * lane + 1]!;
    engine.words[2 * lane + 1] = v[2 * lane]!;
  }
}

/** Copies the lanes back out of the module's memory (see {@link lanesIn}). */
function lanesOut(engine: WasmXxh64, v: Uint32Array): void {
  for (let lane = 0; lane < 4; lane++) {
    v[2 * lane] = engine.words[2 * lane + 1]!;
    v[2 * lane + 1] = engine.words[2 * lane]!;
  }
}

/** {@link stripes} through the WebAssembly loop, the input copied in pieces of {@link WASM_PIECE} bytes. */
function wasmStripes(engine: WasmXxh64, v: Uint32Array, bytes: Uint8Array, start: number, end: number): void {
  lanesIn(engine, v);
  for (let at = start; at < end; at += WASM_PIECE) {
    const length = Math.min(WASM_PIECE, end - at);
    engine.bytes.set(bytes.subarray(at, at + length), 64);
    engine.stripes(length);
  }
  lanesOut(engine, v);
}

/** The digest of `total` bytes: lanes `v`, and the last `tail` (under 32) bytes, through the module. */
function wasmDigest(engine: WasmXxh64, v: Uint32Array, total: number, tail: Uint8Array): [number, number] {
  lanesIn(engine, v);
  engine.bytes.set(tail, 64);
  engine.digest(total, tail.length);
  return [engine.words[9]!, engine.words[8]!];
}

/** The lanes of a new hash (seed 0): `P1 + P2`, `P2`, `0`, `-P1 mod 2^64`, as `[high, low]` pairs. */
const INITIAL_LANES = (() => {
  add(P1H, P1L, P2H, P2L);
  return Uint32Array.of(rh, rl, P2H, P2L, 0, 0, ~P1H >>> 0, (~P1L + 1) >>> 0);
})();

/** Incremental XXH64 (seed 0): {@link Xxh64.update} with the bytes in order, then {@link Xxh64.digest}. */
export class Xxh64 {
  private readonly lanes = new Uint32Array(8);
  /** Bytes of an unfinished stripe. */
  private readonly tail = new Uint8Array(32);
  private tailLength = 0;
  private total = 0;
  private readonly engine: WasmXxh64 | null;

  /** @param useWasm Use the WebAssembly code when the runtime allows it (default `true`). */
  constructor(useWasm = true) {
    this.engine = useWasm ? wasmXxh64() : null;
    this.reset();
  }

  /** Starts over: the state of a new hash. */
  reset(): void {
    this.lanes.set(INITIAL_LANES);
    this.tailLength = 0;
    this.total = 0;
  }

  update(bytes: Uint8Array): void {
    this.total += bytes.length;
    let i = 0;
    if (this.tailLength > 0) {
      i = Math.min(32 - this.tailLength, bytes.length);
      this.tail.set(bytes.subarray(0, i), this.tailLength);
      this.tailLength += i;
      if (this.tailLength < 32) return;
      stripes(this.lanes, this.tail, 0, 32);
      this.tailLength = 0;
    }
    const end = i + ((bytes.length - i) & ~31);
    if (this.engine !== null && end - i >= WASM_MIN_BYTES) wasmStripes(this.engine, this.lanes, bytes, i, end);
    else if (end > i) stripes(this.lanes, bytes, i, end);
    this.tail.set(bytes.subarray(end), 0);
    this.tailLength = bytes.length - end;
  }

  /** The hash of everything passed to {@link Xxh64.update}, as `[high 32 bits, low 32 bits]`. */
  digest(): [number, number] {
    if (this.engine !== null) return wasmDigest(this.engine, this.lanes, this.total, this.tail.subarray(0, this.tailLength));
    const n = this.total;
    const v = this.lanes;
    let hh: number, hl: number;
    if (n >= 32) {
      rotl(v[0]!, v[1]!, 1); hh = rh; hl = rl;
      rotl(v[2]!, v[3]!, 7); add(hh, hl, rh, rl); hh = rh; hl = rl;
      rotl(v[4]!, v[5]!, 12); add(hh, hl, rh, rl); hh = rh; hl = rl;
      rotl(v[6]!, v[7]!, 18); add(hh, hl, rh, rl); hh = rh; hl = rl;
      merge(hh, hl, v[0]!, v[1]!); merge(rh, rl, v[2]!, v[3]!); merge(rh, rl, v[4]!, v[5]!); merge(rh, rl, v[6]!, v[7]!);
      hh = rh; hl = rl;
    } else {
      hh = P5H; hl = P5L;
    }
    add(hh, hl, Math.floor(n / 0x100000000) >>> 0, n >>> 0);
    return finish(rh, rl, this.tail, this.tailLength);
  }
}

/** The last (under 32) bytes and the final mix. */
function finish(hh: number, hl: number, bytes: Uint8Array, n: number): [number, number] {
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    round(0, 0, u32(bytes, i + 4), u32(bytes, i));
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 27);
    mul(rh, rl, P1H, P1L);
    add(rh, rl, P4H, P4L);
    hh = rh; hl = rl;
  }
  if (i + 4 <= n) {
    mul(0, u32(bytes, i), P1H, P1L);
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 23);
    mul(rh, rl, P2H, P2L);
    add(rh, rl, P3H, P3L);
    hh = rh; hl = rl;
    i += 4;
  }
  for (; i < n; i++) {
    mul(0, bytes[i]!, P5H, P5L);
    rotl((hh ^ rh) >>> 0, (hl ^ rl) >>> 0, 11);
    mul(rh, rl, P1H, P1L);
    hh = rh; hl = rl;
  }
  // Avalanche: h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32.
  hl = (hl ^ (hh >>> 1)) >>> 0;
  mul(hh, hl, P2H, P2L);
  hh = rh; hl = rl;
  hl = (hl ^ ((hl >>> 29) | (hh << 3))) >>> 0;
  hh = (hh ^ (hh >>> 29)) >>> 0;
  mul(hh, hl, P3H, P3L);
  hh = rh; hl = rl;
  return [hh, (hl ^ hh) >>> 0];
}

/**
 * The XXH64 hash (seed 0) of `bytes`, as `[high 32 bits, low 32 bits]` (both unsigned).
 * The zstd content checksum is the low half, stored little-endian after the last block.
 * @param useWasm See {@link Xxh64}.
 */
export function xxh64(bytes: Uint8Array, useWasm = true): [number, number] {
  // One hash per engine serves every call: a call runs to its end synchronously (zstd checks one
  // small frame per header read of a listing, thousands of times).
  const hash = useWasm ? (oneShotHash ??= new Xxh64(true)) : (oneShotJsHash ??= new Xxh64(false));
  hash.reset();
  hash.update(bytes);
  return hash.digest();
}

let oneShotHash: Xxh64 | undefined;
let oneShotJsHash: Xxh64 | undefined;
