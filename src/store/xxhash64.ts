/**
 * XXH64 (seed 0) over bytes, for the zstd frame content checksum (SPEC §11.2).
 *
 * 64-bit arithmetic is done on pairs of unsigned 32-bit halves (no `BigInt`), so hashing is
 * linear in the input with a small constant factor.
 * @module
 */

// The five XXH64 primes, as [high 32 bits, low 32 bits].
const P1H = 0x9e3779b1, P1L = 0x85ebca87;
const P2H = 0xc2b2ae3d, P2L = 0x27d4eb4f;
const P3H = 0x165667b1, P3L = 0x9e3779f9;
const P4H = 0x85ebca77, P4L = 0xc2b2ae63;
const P5H = 0x27d4eb2f, P5L = 0x165667c5;

/** Scratch result of the 64-bit helpers below: one u64 as two unsigned 32-bit halves. */
let rh = 0;
let rl = 0;

/** `rh:rl = (ah:al) * (bh:bl) mod 2^64`. */
function mul(ah: number, al: number, bh: number, bl: number): void {
  const a0 = al & 0xffff, a1 = al >>> 16, b0 = bl & 0xffff, b1 = bl >>> 16;
  const p00 = a0 * b0, p01 = a0 * b1, p10 = a1 * b0;
  const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
  const carry = a1 * b1 + (p01 >>> 16) + (p10 >>> 16) + (mid >>> 16);
  rl = (((mid & 0xffff) << 16) | (p00 & 0xffff)) >>> 0;
  rh = (carry + Math.imul(ah, bl) + Math.imul(al, bh)) >>> 0;
}

/** `rh:rl = (ah:al) + (bh:bl) mod 2^64`. */
function add(ah: number, al: number, bh: number, bl: number): void {
  const low = al + bl;
  rl = low >>> 0;
  rh = (ah + bh + (low > 0xffffffff ? 1 : 0)) >>> 0;
}

/** `rh:rl = rotl64(h:l, n)` for `0 < n < 64`. */
function rotl(h: number, l: number, n: number): void {
  if (n >= 32) {
    const t = h;
    h = l;
    l = t;
    n -= 32;
  }
  if (n === 0) {
    rh = h >>> 0;
    rl = l >>> 0;
    return;
  }
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
 * The XXH64 hash (seed 0) of `bytes`, as `[high 32 bits, low 32 bits]` (both unsigned).
 * The zstd content checksum is the low half, stored little-endian after the last block.
 */
export function xxh64(bytes: Uint8Array): [number, number] {
  const n = bytes.length;
  let i = 0;
  let hh: number, hl: number;
  if (n >= 32) {
    add(P1H, P1L, P2H, P2L);
    let v1h = rh, v1l = rl;
    let v2h = P2H, v2l = P2L;
    let v3h = 0, v3l = 0;
    let v4h = ~P1H >>> 0, v4l = (~P1L + 1) >>> 0; // -P1 mod 2^64 (P1L is not 0)
    for (; i + 32 <= n; i += 32) {
      round(v1h, v1l, u32(bytes, i + 4), u32(bytes, i)); v1h = rh; v1l = rl;
      round(v2h, v2l, u32(bytes, i + 12), u32(bytes, i + 8)); v2h = rh; v2l = rl;
      round(v3h, v3l, u32(bytes, i + 20), u32(bytes, i + 16)); v3h = rh; v3l = rl;
      round(v4h, v4l, u32(bytes, i + 28), u32(bytes, i + 24)); v4h = rh; v4l = rl;
    }
    rotl(v1h, v1l, 1); hh = rh; hl = rl;
    rotl(v2h, v2l, 7); add(hh, hl, rh, rl); hh = rh; hl = rl;
    rotl(v3h, v3l, 12); add(hh, hl, rh, rl); hh = rh; hl = rl;
    rotl(v4h, v4l, 18); add(hh, hl, rh, rl); hh = rh; hl = rl;
    merge(hh, hl, v1h, v1l); merge(rh, rl, v2h, v2l); merge(rh, rl, v3h, v3l); merge(rh, rl, v4h, v4l);
    hh = rh; hl = rl;
  } else {
    hh = P5H; hl = P5L;
  }
  add(hh, hl, Math.floor(n / 0x100000000) >>> 0, n >>> 0);
  hh = rh; hl = rl;
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
  return avalanche(hh, hl);
}

/** Final mix: `h ^= h >> 33; h *= P2; h ^= h >> 29; h *= P3; h ^= h >> 32`. */
function avalanche(hh: number, hl: number): [number, number] {
  hl = (hl ^ (hh >>> 1)) >>> 0;
  mul(hh, hl, P2H, P2L);
  hh = rh; hl = rl;
  hl = (hl ^ ((hl >>> 29) | (hh << 3))) >>> 0;
  hh = (hh ^ (hh >>> 29)) >>> 0;
  mul(hh, hl, P3H, P3L);
  hh = rh; hl = rl;
  return [hh, (hl ^ hh) >>> 0];
}
