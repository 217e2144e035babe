/**
 * The zstd window cap and the decoding contexts of concurrent reads (SPEC §11.2, §11.2.2; issue 28
 * item 4): a frame declaring a window over 8 MiB is `SESSION_REFERENCE_INVALID_LOG` naming the
 * window and the cap, in libzstd's WebAssembly and JavaScript forms alike, and concurrent reads
 * take turns on at most `MAX_LIVE_CONTEXTS` decoding contexts, so six reads at the cap do not grow
 * libzstd's memory six windows.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseSessionLog, readSessionLog } from '../src/store/index.js';
import { loadLibZstd, loadLibZstdJs, MAX_LIVE_CONTEXTS, type LibZstd } from '../src/store/libzstd.js';
import { decodeZstdFrames } from '../src/store/zstd.js';
import { frameWindowBytes, MAX_WINDOW_BYTES } from '../src/store/zstd-window.js';
import { SessionReferenceError } from '../src/errors.js';
import { concatBytes } from './fixtures/base64.js';
import { expectCode } from './helpers.js';

const encoder = new TextEncoder();
const HEADER = '{"type":"session","version":3,"id":"w-1","createdAt":1700000000000}\n';
const EVENT = (seq: number) => `{"type":"user/message","seq":${seq},"time":1,"data":{"id":"m${seq}","role":"user","content":[{"type":"text","text":"hi ${seq}"}],"source":{"kind":"user"}}}\n`;

/** A frame of one raw block holding `text` (at most 128 KiB), its window given by the `Window_Descriptor` byte `descriptor`. */
function windowFrame(text: string, descriptor: number): Uint8Array {
  const bytes = encoder.encode(text);
  const block = (bytes.length << 3) | 1; // raw, last
  return concatBytes(Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0x00, descriptor, block & 0xff, (block >> 8) & 0xff, (block >> 16) & 0xff), bytes);
}

/** A single-segment frame: its window is its 4-byte content size (`declared`), whatever it holds. */
function singleSegmentFrame(text: string, declared: number): Uint8Array {
  const bytes = encoder.encode(text);
  const block = (bytes.length << 3) | 1;
  const size = [declared & 0xff, (declared >>> 8) & 0xff, (declared >>> 16) & 0xff, (declared >>> 24) & 0xff];
  return concatBytes(Uint8Array.of(0x28, 0xb5, 0x2f, 0xfd, 0xa0, ...size, block & 0xff, (block >> 8) & 0xff, (block >> 16) & 0xff), bytes);
}

/** The window of descriptor byte `d` (RFC 8878 §3.1.1.1.2). */
function descriptorWindow(d: number): number {
  const base = 2 ** (10 + (d >> 3));
  return base + (base / 8) * (d & 7);
}

/** The `Window_Descriptor` of exactly 8 MiB (windowLog 23) and of 2 MiB (what dsh's level 3 writes at most). */
const AT_CAP = 13 << 3;
const DSH_WINDOW = 11 << 3;

let wasm: LibZstd;
let js: LibZstd;
beforeAll(async () => {
  wasm = await loadLibZstd();
  js = await loadLibZstdJs();
}, 120_000);

function outcome(lib: LibZstd, bytes: Uint8Array): Uint8Array | { code: string; message: string } {
  try {
    return decodeZstdFrames(lib, bytes);
  } catch (error) {
    if (!(error instanceof SessionReferenceError)) throw error;
    return { code: error.code, message: error.message };
  }
}

describe('the zstd window cap (SPEC §11.2.2, issue 28 item 4)', () => {
  it('is 8 MiB: dsh\'s 2 MiB and the cap itself are read, one window step over it is not', () => {
    expect(MAX_WINDOW_BYTES).toBe(8 * 1024 * 1024);
    for (const descriptor of [DSH_WINDOW, AT_CAP]) {
      const log = parseSessionLog(concatBytes(windowFrame(HEADER, DSH_WINDOW), windowFrame(EVENT(1), descriptor)));
      expect(log.events.map((event) => event.seq)).toEqual([1]);
    }
    const error = expectCode(() => parseSessionLog(concatBytes(windowFrame(HEADER, DSH_WINDOW), windowFrame(EVENT(1), AT_CAP + 1))), 'SESSION_REFERENCE_INVALID_LOG');
    const headerBytes = windowFrame(HEADER, DSH_WINDOW).length;
    expect(error.message).toBe(
      `dsh session log: corrupt zstd frame at byte ${headerBytes}: window of 9 MiB (9437184 bytes) over the 8 MiB (8388608 bytes) a read accepts (ZSTD_d_windowLogMax 23)`,
    );
  });

  it('refuses what `zstd --long` declares (128 MiB) in a 3 KB log before libzstd allocates it', () => {
    const before = wasm.memoryBytes;
    const log = concatBytes(windowFrame(HEADER, DSH_WINDOW), windowFrame(EVENT(1).repeat(20), 17 << 3));
    expect(log.length).toBeLessThan(4096);
    expectCode(() => parseSessionLog(log), 'SESSION_REFERENCE_INVALID_LOG');
    expect(wasm.memoryBytes - before).toBeLessThan(MAX_WINDOW_BYTES);
  });

  it('property: any window descriptor, in both forms of libzstd: read when at most the cap, else refused naming window and cap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 255 }), fc.boolean(), (descriptor, javascript) => {
        const lib = javascript ? js : wasm;
        const window = descriptorWindow(descriptor);
        const bytes = concatBytes(windowFrame(HEADER, DSH_WINDOW), windowFrame(EVENT(1), descriptor));
        expect(frameWindowBytes(windowFrame(EVENT(1), descriptor))).toBe(window);
        const result = outcome(lib, bytes);
        if (window <= MAX_WINDOW_BYTES) {
          expect(result).toEqual(encoder.encode(HEADER + EVENT(1)));
        } else {
          expect(result).toMatchObject({ code: 'SESSION_REFERENCE_INVALID_LOG', message: expect.stringContaining(`(${window} bytes) over the 8 MiB (8388608 bytes)`) });
        }
      }),
      { numRuns: 120, seed: 28 },
    );
  });

  it('property: a single-segment frame\'s window is its declared content size (libzstd\'s rule)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 0, max: 2 ** 32 - 1 }), fc.constant(encoder.encode(EVENT(1)).length)), (declared) => {
        const frame = singleSegmentFrame(EVENT(1), declared);
        expect(frameWindowBytes(frame)).toBe(Math.max(1024, declared));
        const result = outcome(wasm, concatBytes(windowFrame(HEADER, DSH_WINDOW), frame));
        // Over the cap it is refused by its window; at most, libzstd checks the size it declared.
        if (declared > MAX_WINDOW_BYTES) expect(result).toMatchObject({ message: expect.stringMatching(new RegExp(`window of (\\d+ [KMG]iB \\()?${declared} bytes\\)? over the 8 MiB`)) });
        else if (declared === encoder.encode(EVENT(1)).length) expect(result).toEqual(encoder.encode(HEADER + EVENT(1)));
        else expect(result).toMatchObject({ code: 'SESSION_REFERENCE_INVALID_LOG', message: expect.not.stringContaining('window of') });
      }),
      { numRuns: 60, seed: 29 },
    );
  });
});

/** An async source yielding `bytes` in `pieces` chunks with a turn of the event loop between them, noting the contexts in use. */
async function* slowly(bytes: Uint8Array, pieces: number, seen: number[]): AsyncGenerator<Uint8Array> {
  const size = Math.ceil(bytes.length / pieces);
  for (let at = 0; at < bytes.length; at += size) {
    seen.push(wasm.liveContexts);
    await new Promise((resolve) => setTimeout(resolve, 1));
    yield bytes.slice(at, at + size);
  }
}

describe('decoding contexts of concurrent reads (SPEC §11.2.2)', () => {
  /** A log of frames at the cap: every read needs a window of 8 MiB. */
  const atCap = (id: number) =>
    concatBytes(windowFrame(HEADER.replace('w-1', `w-${id}`), AT_CAP), ...Array.from({ length: 6 }, (_, i) => windowFrame(EVENT(i + 1), AT_CAP)));

  it(`property: any number of concurrent reads at the cap hold at most ${MAX_LIVE_CONTEXTS} contexts, and memory grows by at most that many windows`, async () => {
    const before = wasm.memoryBytes;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 8 }), fc.integer({ min: 1, max: 9 }), async (reads, pieces) => {
        const seen: number[] = [];
        const logs = await Promise.all(Array.from({ length: reads }, (_, i) => readSessionLog(slowly(atCap(i), pieces, seen))));
        logs.forEach((log, i) => {
          expect(log.header.id).toBe(`w-${i}`);
          expect(log.events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6]);
        });
        expect(Math.max(...seen)).toBeLessThanOrEqual(MAX_LIVE_CONTEXTS);
        expect(wasm.liveContexts).toBe(0);
      }),
      { numRuns: 12, seed: 30 },
    );
    // Each context holds at most a window and two blocks (plus libzstd's own ~100 KiB).
    expect(wasm.memoryBytes - before).toBeLessThanOrEqual((MAX_LIVE_CONTEXTS + 1) * (MAX_WINDOW_BYTES + 1024 * 1024));
  }, 120_000);

  it('a read waiting for a context stops on abort, and the others finish', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    /** Stalls after the first frame, holding its context, until the gate opens. */
    async function* held(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
      const first = windowFrame(HEADER, AT_CAP).length;
      yield bytes.slice(0, first + 3);
      await gate;
      yield bytes.slice(first + 3);
    }
    const holders = Array.from({ length: MAX_LIVE_CONTEXTS }, (_, i) => readSessionLog(held(atCap(i))));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(wasm.liveContexts).toBe(MAX_LIVE_CONTEXTS);
    const controller = new AbortController();
    const waiting = readSessionLog(atCap(99), { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 5));
    controller.abort(new Error('stop'));
    await expect(waiting).rejects.toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
    const later = readSessionLog(atCap(100));
    release();
    const logs = await Promise.all([...holders, later]);
    expect(logs.map((log) => log.header.id)).toEqual([...Array.from({ length: MAX_LIVE_CONTEXTS }, (_, i) => `w-${i}`), 'w-100']);
    expect(wasm.liveContexts).toBe(0);
  });
});
