/**
 * XXH64 against an independent BigInt reference (SPEC §11.2): streamed instances updated
 * alternately (they share the WebAssembly module's memory, as concurrent zstd reads do), digests
 * taken between updates, sizes at the WebAssembly threshold (512) and piece size (65,536), and
 * totals of 2^32 bytes and more (the digest's length term), with and without WebAssembly.
 */
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { Xxh64, xxh64 } from '../src/store/xxhash64.js';

const M = (1n << 64n) - 1n;
const P1 = 0x9e3779b185ebca87n, P2 = 0xc2b2ae3d27d4eb4fn, P3 = 0x165667b19e3779f9n, P4 = 0x85ebca77c2b2ae63n, P5 = 0x27d4eb2f165667c5n;
const rotl = (x: bigint, r: bigint) => ((x << r) | (x >> (64n - r))) & M;
const round = (acc: bigint, input: bigint) => (rotl((acc + input * P2) & M, 31n) * P1) & M;
const merge = (h: bigint, v: bigint) => (((h ^ round(0n, v)) * P1) & M) + P4 & M;
const u64 = (b: Uint8Array, i: number) => new DataView(b.buffer, b.byteOffset + i, 8).getBigUint64(0, true);
const u32 = (b: Uint8Array, i: number) => BigInt(new DataView(b.buffer, b.byteOffset + i, 4).getUint32(0, true));
/** The reference digest of lanes `v`, `total` bytes in all and their last `tail` (under 32) bytes. */
function refDigest(v: bigint[], total: bigint, tail: Uint8Array): bigint {
  let h: bigint;
  if (total >= 32n) {
    h = (rotl(v[0]!, 1n) + rotl(v[1]!, 7n) + rotl(v[2]!, 12n) + rotl(v[3]!, 18n)) & M;
    for (const x of v) h = merge(h, x);
  } else h = P5;
  h = (h + total) & M;
  let i = 0;
  for (; i + 8 <= tail.length; i += 8) h = ((rotl(h ^ round(0n, u64(tail, i)), 27n) * P1) & M) + P4 & M;
  if (i + 4 <= tail.length) { h = ((rotl(h ^ ((u32(tail, i) * P1) & M), 23n) * P2) & M) + P3 & M; i += 4; }
  for (; i < tail.length; i++) h = (rotl(h ^ ((BigInt(tail[i]!) * P5) & M), 11n) * P1) & M;
  h = ((h ^ (h >> 33n)) * P2) & M;
  h = ((h ^ (h >> 29n)) * P3) & M;
  return h ^ (h >> 32n);
}
/** The reference XXH64 (seed 0) of `bytes`. */
function ref(bytes: Uint8Array): bigint {
  const v = [(P1 + P2) & M, P2, 0n, (-P1) & M];
  let i = 0;
  for (; i + 32 <= bytes.length; i += 32) for (let l = 0; l < 4; l++) v[l] = round(v[l]!, u64(bytes, i + 8 * l));
  return refDigest(v, BigInt(bytes.length), bytes.subarray(i));
}
const big = ([h, l]: [number, number]) => (BigInt(h) << 32n) | BigInt(l);

it('matches the reference at and around 32, 512 and 65,536 bytes', () => {
  for (const n of [0, 1, 31, 32, 33, 511, 512, 513, 543, 544, 545, 65535, 65536, 65537, 65567, 65568, 65600, 131072, 131104, 131136, 200003]) {
    const b = Uint8Array.from({ length: n }, (_, i) => (i * 131 + 17) & 255);
    expect(big(xxh64(b))).toBe(ref(b));
    expect(big(xxh64(b, false))).toBe(ref(b));
  }
});

/** `n` pseudo-random bytes. */
const fill = (n: number) => Uint8Array.from({ length: n }, (_, i) => (Math.imul(i + n, 2654435761) >>> 13) & 255);

/** Cut points in `[0, length]`, ascending, ending at `length`. */
const cutsOf = (cuts: number[], length: number) => [...cuts.map((cut) => Math.min(cut, length)).sort((a, b) => a - b), length];

it('two instances updated alternately, digests taken between updates, give each its own hash (property)', () => {
  const cut = fc.oneof(fc.nat(140_000), fc.constantFrom(0, 511, 512, 513, 544, 65_536, 65_537, 65_568));
  fc.assert(
    fc.property(
      fc.integer({ min: 0, max: 140_000 }).map(fill),
      fc.integer({ min: 0, max: 3000 }).map(fill),
      fc.array(cut, { maxLength: 8 }),
      fc.array(fc.nat(3000), { maxLength: 8 }),
      fc.boolean(),
      (a, b, cutsA, cutsB, bUsesWasm) => {
        const ha = new Xxh64(true);
        const hb = new Xxh64(bUsesWasm);
        const [endsA, endsB] = [cutsOf(cutsA, a.length), cutsOf(cutsB, b.length)];
        for (let k = 0; k < Math.max(endsA.length, endsB.length); k++) {
          if (k < endsA.length) ha.update(a.subarray(endsA[k - 1] ?? 0, endsA[k]));
          hb.digest();
          if (k < endsB.length) hb.update(b.subarray(endsB[k - 1] ?? 0, endsB[k]));
          ha.digest();
        }
        expect(big(ha.digest())).toBe(ref(a));
        expect(big(hb.digest())).toBe(ref(b));
      },
    ),
    { numRuns: 60 },
  );
});

it('folds totals of 2^32 bytes and more into the digest exactly (up to 2^53 - 1)', () => {
  // A fake total over real lanes and tail: the length term is the only part that differs.
  const data = fill(1013);
  for (const useWasm of [true, false]) {
    for (const total of [2 ** 32 - 1, 2 ** 32, 2 ** 32 + 13, 2 ** 40 + 5, 2 ** 52 + 3, 2 ** 53 - 19, 2 ** 53 - 1]) {
      const hash = new Xxh64(useWasm);
      hash.update(data);
      const state = hash as unknown as { lanes: Uint32Array; total: number };
      const lanes = [0, 1, 2, 3].map((lane) => (BigInt(state.lanes[2 * lane]!) << 32n) | BigInt(state.lanes[2 * lane + 1]!));
      state.total = total;
      expect([useWasm, total, big(hash.digest())]).toEqual([useWasm, total, refDigest(lanes, BigInt(total), data.subarray(992))]);
    }
  }
});
