import { beforeAll, describe, expect, it } from 'vitest';
import realLog from '../samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl?raw';
import { parseSessionLog, parseSessionLogHeader } from '../src/store/index.js';
import { decodeZstdFrame, decodeZstdFrames, isZstd, ready, scanZstdFrame, zstdUsesWasm } from '../src/store/zstd.js';
import fc from 'fast-check';
import { inject } from 'vitest';
import { Xxh64, xxh64, xxh64UsesWasm } from '../src/store/xxhash64.js';
import { concatBytes, decodeBase64 } from './fixtures/base64.js';
import {
  CHECKSUM_FRAMES,
  CHECKSUM_SOURCE,
  REAL_LOG_ZSTD_FRAMES,
  REAL_LOG_ZSTD_FRAME_LINES,
  RLE_FRAME,
  RLE_FRAME_BLOCK_TYPES,
  TAIL_FRAME,
  TAIL_FRAME_LINES,
} from './fixtures/zstd-fixtures.js';
import { expectCode } from './helpers.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const utf8 = (text: string) => encoder.encode(text);

const frames = REAL_LOG_ZSTD_FRAMES.map(decodeBase64);
const zstdLog = concatBytes(...frames);
const tail = decodeBase64(TAIL_FRAME);
const plain = parseSessionLog(realLog);

const HEADER = '{"type":"session","version":3,"id":"z-1","createdAt":1700000000000}\n';

/** A 3-byte little-endian block header. */
function blockHeader(last: boolean, type: number, size: number): number[] {
  const value = (size << 3) | (type << 1) | (last ? 1 : 0);
  return [value & 0xff, (value >> 8) & 0xff, (value >> 16) & 0xff];
}

/**
 * A hand-made zstd frame of raw (type 0) and RLE (type 1) blocks: single segment, 4-byte frame
 * content size (`contentSize`, default the real size), no checksum.
 */
function handFrame(blocks: Array<{ raw: Uint8Array } | { rle: number; size: number }>, contentSize?: number): Uint8Array {
  const bytes = [0x28, 0xb5, 0x2f, 0xfd, 0xa0];
  const size = contentSize ?? blocks.reduce((total, b) => total + ('raw' in b ? b.raw.length : b.size), 0);
  bytes.push(size & 0xff, (size >>> 8) & 0xff, (size >>> 16) & 0xff, (size >>> 24) & 0xff);
  blocks.forEach((block, i) => {
    const last = i === blocks.length - 1;
    if ('raw' in block) bytes.push(...blockHeader(last, 0, block.raw.length), ...block.raw);
    else bytes.push(...blockHeader(last, 1, block.size), block.rle);
  });
  return new Uint8Array(bytes);
}

/** A skippable frame with magic `0x184D2A5n` and `payload`. */
function skippable(n: number, payload: Uint8Array): Uint8Array {
  const size = payload.length;
  return concatBytes(new Uint8Array([0x50 + n, 0x2a, 0x4d, 0x18, size & 0xff, (size >> 8) & 0xff, 0, 0]), payload);
}

const headerFrame = handFrame([{ raw: utf8(HEADER) }]);
const eventLine = (seq: number) => `{"type":"step/start","seq":${seq},"time":0,"data":{}}\n`;

describe('XXH64, the zstd content checksum', () => {
  it('matches the reference vectors', () => {
    const hex = (text: string) => xxh64(utf8(text)).map((half) => half.toString(16).padStart(8, '0')).join('');
    expect(hex('')).toBe('ef46db3751d8e999');
    expect(hex('a')).toBe('d24ec4f1a98c6e5b');
    expect(hex('abc')).toBe('44bc2cf5ad770999');
    expect(hex('Nobody inspects the spammish repetition')).toBe('fbcea83c8a378bf1');
  });

  /** `length` bytes `(31 i + 7) mod 256`: spans past the WebAssembly threshold and piece size. */
  const ramp = (length: number) => Uint8Array.from({ length }, (_, i) => (i * 31 + 7) & 255);
  // Reference values from xxhash-wasm 1.1.0 (an independent implementation).
  const LONG_VECTORS: Array<[number, string]> = [
    [511, 'a316a70d395e7bb2'],
    [512, '17bd9866c1c8ce58'],
    [513, '1ada06ae4bba4fa7'],
    [1000, '99594f4828043d35'],
    [65605, '0ecce87a3e130631'],
    [200003, 'a30178594c2451d8'],
  ];

  it.each(LONG_VECTORS)('matches the reference for %i bytes, with and without WebAssembly', (length, expected) => {
    const hex = (digest: [number, number]) => digest.map((half) => half.toString(16).padStart(8, '0')).join('');
    expect(hex(xxh64(ramp(length)))).toBe(expected);
    expect(hex(xxh64(ramp(length), false))).toBe(expected);
  });

  it('runs the WebAssembly stripe loop where the runtime allows it (not in workerd)', () => {
    expect(xxh64UsesWasm()).toBe(inject('expectedRuntime') !== 'workerd');
  });

  it('gives the same digest for any chunking, WebAssembly or not (property)', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 3000 }), fc.array(fc.nat(3000), { maxLength: 6 }), fc.boolean(), (bytes, cuts, useWasm) => {
        const hash = new Xxh64(useWasm);
        let at = 0;
        for (const cut of [...cuts].sort((a, b) => a - b)) {
          const end = Math.min(cut, bytes.length);
          hash.update(bytes.subarray(at, Math.max(at, end)));
          at = Math.max(at, end);
        }
        hash.update(bytes.subarray(at));
        expect(hash.digest()).toEqual(xxh64(bytes, false));
      }),
      { numRuns: 200 },
    );
  });

  it('verifies real frames of every length 0..80 (all tail paths of the hash)', () => {
    CHECKSUM_FRAMES.forEach((frame, n) => {
      const bytes = decodeBase64(frame);
      expect(scanZstdFrame(bytes, 0)?.hasChecksum).toBe(true);
      expect(decoder.decode(decodeZstdFrames(bytes))).toBe(CHECKSUM_SOURCE.slice(0, n));
    });
  });
});

describe('zstd session logs (SPEC §11.2)', () => {
  it('recognizes the zstd magic 28 B5 2F FD (and a leading skippable frame)', () => {
    expect(isZstd(zstdLog)).toBe(true);
    expect(isZstd(skippable(9, new Uint8Array(2)))).toBe(true);
    expect(isZstd(utf8(realLog))).toBe(false);
    expect(isZstd(new Uint8Array([0x28, 0xb5, 0x2f]))).toBe(false);
  });

  it('decodes every frame of a multi-frame log: same result as the plain log', () => {
    expect(frames.length).toBe(REAL_LOG_ZSTD_FRAME_LINES.length);
    expect(frames.length).toBeGreaterThan(10);
    expect(REAL_LOG_ZSTD_FRAME_LINES.reduce((a, b) => a + b, 0)).toBe(100);
    expect(decoder.decode(decodeZstdFrames(zstdLog))).toBe(realLog);
    expect(parseSessionLog(zstdLog)).toEqual(plain);
    expect(parseSessionLog(zstdLog.buffer.slice(zstdLog.byteOffset, zstdLog.byteOffset + zstdLog.byteLength) as ArrayBuffer)).toEqual(plain);
  });

  it('yields each prefix of whole frames as the matching prefix of the log', () => {
    let lines = 0;
    for (let k = 1; k <= frames.length; k++) {
      lines += REAL_LOG_ZSTD_FRAME_LINES[k - 1]!;
      const parsed = parseSessionLog(concatBytes(...frames.slice(0, k)));
      expect(parsed.events).toHaveLength(lines - 1);
    }
  });

  it('reads the header from the first frame only', () => {
    expect(parseSessionLogHeader(zstdLog)).toEqual(plain.header);
    expect(parseSessionLogHeader(frames[0]!)).toEqual(plain.header);
    // The rest is never decoded: a corrupt second frame does not matter to the header reader.
    const corrupt = concatBytes(frames[0]!, new Uint8Array([0x28, 0xb5, 0x2f, 0xfd, 0x08, 0, 0, 0]));
    expect(parseSessionLogHeader(corrupt)).toEqual(plain.header);
    expectCode(() => parseSessionLog(corrupt), 'SESSION_REFERENCE_INVALID_LOG');
  });

  it('reads a header line that spans several frames', () => {
    const [a, b] = [HEADER.slice(0, 20), HEADER.slice(20)];
    const bytes = concatBytes(handFrame([{ raw: utf8(a) }]), handFrame([{ raw: utf8(b + eventLine(1)) }]), new Uint8Array([0xff]));
    expect(parseSessionLogHeader(bytes).id).toBe('z-1');
  });

  it('ignores a truncated final frame (a crash mid-write) at every cut', () => {
    const small = concatBytes(headerFrame, handFrame([{ raw: utf8(eventLine(1)) }]));
    for (let cut = 1; cut < tail.length; cut++) {
      const parsed = parseSessionLog(concatBytes(small, tail.subarray(0, cut)));
      expect(parsed.events.map((e) => e.seq)).toEqual([1]);
    }
    const whole = parseSessionLog(concatBytes(small, tail));
    expect(whole.events.map((e) => e.seq)).toEqual([1, 1000, 1001]);
  });

  it('ignores a torn last batch of the real log, keeps it once complete', () => {
    const torn = parseSessionLog(concatBytes(zstdLog, tail.subarray(0, Math.floor(tail.length / 2))));
    expect(torn).toEqual(plain);
    const complete = parseSessionLog(concatBytes(zstdLog, tail));
    expect(complete.events).toHaveLength(plain.events.length + TAIL_FRAME_LINES.length);
    expect(complete.events.at(-2)).toMatchObject({ type: 'session/title', seq: 1000, data: { title: 'Torn write' } });
  });

  it('ignores a truncated real frame in the middle of being written, even inside its blocks', () => {
    const last = frames.at(-1)!;
    const before = concatBytes(...frames.slice(0, -1));
    const expected = parseSessionLog(before);
    for (const cut of [1, 3, 4, 5, 6, 8, 12, Math.floor(last.length / 2), last.length - 4, last.length - 1]) {
      expect(parseSessionLog(concatBytes(before, last.subarray(0, cut)))).toEqual(expected);
    }
  });

  it('skips skippable frames 0x184D2A50..5F anywhere, and a truncated one at the end', () => {
    const withSkippable = concatBytes(
      skippable(0, utf8('not a log line\n')),
      frames[0]!,
      skippable(15, new Uint8Array([0xff, 0x00, 0x0a])),
      ...frames.slice(1, 5),
      skippable(7, new Uint8Array(0)),
      ...frames.slice(5),
      skippable(3, new Uint8Array(20)).subarray(0, 12),
    );
    expect(parseSessionLog(withSkippable)).toEqual(plain);
    expect(parseSessionLogHeader(withSkippable)).toEqual(plain.header);
  });

  it('decodes RLE blocks', () => {
    expect(RLE_FRAME_BLOCK_TYPES).toContain(1);
    const parsed = parseSessionLog(concatBytes(frames[0]!, decodeBase64(RLE_FRAME)));
    expect(parsed.events).toHaveLength(1);
    expect(parsed.events[0]).toMatchObject({ type: 'note/padded', seq: 2000 });
    expect((parsed.events[0]!.data as { pad: string }).pad).toBe('a'.repeat(200_000));
  });

  it('decodes hand-made frames of raw and RLE blocks', () => {
    const frame = handFrame([{ raw: utf8(eventLine(1).slice(0, 10)) }, { rle: 0x20, size: 1000 }, { raw: utf8(eventLine(1).slice(10)) }]);
    const parsed = parseSessionLog(concatBytes(headerFrame, frame));
    expect(parsed.events.map((e) => e.seq)).toEqual([1]);
  });

  it('ignores a leading BOM inside the decoded text', () => {
    const bom = handFrame([{ raw: concatBytes(new Uint8Array([0xef, 0xbb, 0xbf]), utf8(HEADER)) }]);
    expect(parseSessionLog(concatBytes(bom, handFrame([{ raw: utf8(eventLine(1)) }]))).events).toHaveLength(1);
    expect(parseSessionLogHeader(bom).id).toBe('z-1');
  });
});

describe('corrupt zstd logs (SPEC §11.2, §10)', () => {
  const invalid = (bytes: Uint8Array) => expectCode(() => parseSessionLog(bytes), 'SESSION_REFERENCE_INVALID_LOG');

  it('rejects a complete frame whose compressed data is damaged', () => {
    // Frame 1 has a checksum; frame 2 has none. Damage the middle of each.
    for (const index of [1, 2, 3, 5]) {
      const damaged = frames.map((frame) => frame.slice());
      const frame = damaged[index]!;
      for (let i = Math.floor(frame.length / 2); i < Math.floor(frame.length / 2) + 4; i++) frame[i] = frame[i]! ^ 0x5a;
      const error = invalid(concatBytes(...damaged));
      expect(error.message).toMatch(/zstd|line|UTF-8/);
    }
  });

  it('rejects a frame whose content checksum does not match', () => {
    const frame = frames[1]!.slice();
    frame[frame.length - 1] = frame[frame.length - 1]! ^ 1;
    const error = invalid(concatBytes(frames[0]!, frame, ...frames.slice(2)));
    expect(error.message).toMatch(/checksum/);
  });

  it('keeps the decoder error as cause', () => {
    const frame = frames[3]!.slice();
    frame.fill(0xff, 20, 60);
    const error = invalid(concatBytes(frames[0]!, frame));
    expect(error.message).toMatch(/zstd frame at byte \d+/);
  });

  it('rejects bytes after the frames that are not a frame', () => {
    const error = invalid(concatBytes(zstdLog, utf8('{"type":"x","seq":1}\n')));
    expect(error.message).toMatch(/magic/);
    invalid(concatBytes(zstdLog, new Uint8Array([0x28, 0xb5, 0x00])));
    invalid(concatBytes(zstdLog, new Uint8Array([0x00])));
  });

  it('ignores trailing bytes that start a frame magic (a torn frame start)', () => {
    for (const start of [[0x28], [0x28, 0xb5], [0x28, 0xb5, 0x2f], [0x5c, 0x2a, 0x4d]]) {
      expect(parseSessionLog(concatBytes(zstdLog, new Uint8Array(start)))).toEqual(plain);
    }
  });

  it('rejects malformed frame headers and block headers', () => {
    const magic = [0x28, 0xb5, 0x2f, 0xfd];
    const cases: number[][] = [
      [...magic, 0x28, 4, ...blockHeader(true, 0, 4), 1, 2, 3, 4], // reserved descriptor bit
      [...magic, 0x20, 4, ...blockHeader(true, 3, 4), 1, 2, 3, 4], // reserved block type
      [...magic, 0x20, 4, ...blockHeader(true, 0, 131073)], // block larger than 128 KiB
      [...magic, 0x00, 0x90, ...blockHeader(true, 0, 1), 0x0a], // 256 MiB window
      [...magic, 0x21, 7, 1, ...blockHeader(true, 0, 1), 0x0a], // needs dictionary 7
      [...magic, 0xa0, 0x00, 0x00, 0x10, 0x00, ...blockHeader(true, 0, 1), 0x0a], // 1 MiB from one block
    ];
    for (const frame of cases) invalid(concatBytes(headerFrame, new Uint8Array(frame)));
  });

  it('rejects a frame whose declared content size does not fit its output', () => {
    invalid(concatBytes(headerFrame, handFrame([{ raw: utf8(eventLine(1)) }], 0)));
  });

  it('rejects decoded bytes that are not UTF-8, and non-JSON lines, with line numbers', () => {
    invalid(concatBytes(headerFrame, handFrame([{ raw: new Uint8Array([0xc3, 0x28, 0x0a]) }])));
    const error = invalid(concatBytes(headerFrame, handFrame([{ raw: utf8(eventLine(1) + 'oops\n' + eventLine(3)) }])));
    expect(error.message).toMatch(/\bline 3\b/);
  });

  it('rejects a zstd log without a header frame as INVALID_LOG line 1', () => {
    expect(invalid(tail.subarray(0, 10)).message).toMatch(/\bline 1\b/);
    expect(invalid(handFrame([{ raw: utf8(eventLine(1)) }])).message).toMatch(/\bline 1\b/);
    expectCode(() => parseSessionLogHeader(tail.subarray(0, 10)), 'SESSION_REFERENCE_INVALID_LOG');
  });
});

describe('complete frames in WebAssembly (libzstd, SPEC §11.2), fzstd where it is refused', () => {
  beforeAll(() => ready());

  /** Every real libzstd frame the fixtures hold: the real log's, the checksum frames, RLE, a torn write's tail. */
  const realFrames = [...frames, ...CHECKSUM_FRAMES.map(decodeBase64), decodeBase64(RLE_FRAME), tail];

  /** What decoding one frame gives: its bytes, or the error's code and message. */
  function outcome(bytes: Uint8Array, useWasm: boolean, verify = true): unknown {
    try {
      const frame = scanZstdFrame(bytes, 0);
      if (frame?.kind !== 'data') return 'not a complete frame';
      return decodeZstdFrame(bytes, frame, verify, useWasm);
    } catch (error) {
      return { code: (error as { code?: unknown }).code, message: (error as Error).message };
    }
  }

  it('runs where the runtime may compile WebAssembly from bytes (not in workerd)', () => {
    expect(zstdUsesWasm()).toBe(inject('expectedRuntime') !== 'workerd');
  });

  it('decodes every real frame exactly as fzstd does', () => {
    for (const bytes of realFrames) {
      const decoded = outcome(bytes, true);
      expect(decoded).toBeInstanceOf(Uint8Array);
      expect(decoded).toEqual(outcome(bytes, false));
    }
  });

  it('rejects, as fzstd does, a wrong content checksum; without verification both decode it', () => {
    for (const source of CHECKSUM_FRAMES.slice(1)) {
      const bytes = decodeBase64(source);
      bytes[bytes.length - 1]! ^= 0x40;
      expect(outcome(bytes, true)).toEqual(outcome(bytes, false));
      expect(outcome(bytes, true)).toMatchObject({ code: 'SESSION_REFERENCE_INVALID_LOG', message: expect.stringMatching(/checksum/) });
      expect(outcome(bytes, true, false)).toEqual(outcome(bytes, false, false));
      expect(outcome(bytes, true, false)).toBeInstanceOf(Uint8Array);
    }
  });

  it('property: any damage to a real frame gives what fzstd gives (its bytes, or the same error)', () => {
    fc.assert(
      fc.property(fc.nat(realFrames.length - 1), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })), { minLength: 1, maxLength: 4 }), (index, edits) => {
        const bytes = realFrames[index]!.slice();
        for (const [at, flip] of edits) bytes[4 + (at % (bytes.length - 4))]! ^= flip;
        expect(outcome(bytes, true)).toEqual(outcome(bytes, false));
      }),
      // A fixed seed: fzstd spends up to seconds on some damaged compressed blocks (sequences
      // whose matches run far past the 128 KiB a block may hold; frames without a declared size
      // never reach libzstd), which made a random run stall a CI worker in Bun. Left as found:
      // see README "Limits" (a damaged frame's CPU cost in fzstd).
      { numRuns: 600, seed: 1 },
    );
  });

  it('leaves empty frames and a declared size that does not fit to fzstd', () => {
    const empty = handFrame([{ raw: new Uint8Array(0) }]);
    const short = handFrame([{ raw: utf8(eventLine(1)) }], 3);
    for (const bytes of [empty, short]) expect(outcome(bytes, true)).toEqual(outcome(bytes, false));
    expect(outcome(empty, true)).toEqual(new Uint8Array(0));
    expect(outcome(short, true)).toMatchObject({ code: 'SESSION_REFERENCE_INVALID_LOG', message: expect.stringMatching(/does not decode/) });
  });
});
