/**
 * The streaming log pipeline (SPEC §11.1, §11.2, §11.2.1, §11.2.2), in every runtime: streamed
 * input in any chunking reads exactly like one buffer, torn last lines at every cut (inside
 * multi-byte characters too), invalid UTF-8 naming its line, decompression bombs bounded, frames
 * larger than a whole-frame decode streamed block by block, and source failures.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemorySessionQuery, createObjectStoreSessionQuery, parseSessionLog, parseSessionLogHeader, readSessionLog, type SessionLog } from '../src/store/index.js';
import { concatBytes } from './fixtures/base64.js';
import { fakeBucket, keptForSnapshot, realLogZstd, zstdLog } from './fixtures/object-store.js';
import { rleFrame, skippableFrame, storedFrame } from './fixtures/zstd-build.js';
import { expectCode, expectRejectCode } from './helpers.js';
import { iterableOf, split } from './fixtures/chunks.js';
import { STREAM_READ_BYTES } from '../src/store/source.js';

const encoder = new TextEncoder();
const utf8 = (text: string) => encoder.encode(text);
const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const HEADER = { type: 'session', version: 3, id: 'stream', createdAt: 1 };

function message(seq: number, text: string) {
  return { type: 'user/message', seq, time: seq, surfaceOp: 'append', data: { id: `u${seq}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } } };
}

/** A log with multi-byte text everywhere: Turkish, CJK, emoji, a raw U+2028 inside a string. */
const TEXT_LOG =
  line(HEADER) +
  line(message(0, 'Dümen: şu çözüm doğru mu?')) +
  line({ type: 'tool/result', seq: 1, time: 1, surfaceOp: 'append', data: { output: '日本語の出力 \u2028 next' } }) +
  line(message(2, 'emoji 🚀 and more 𝄞'));
const LAST_LINE = line(message(3, 'son satır: ğüşıöç 漢字 🎉')).slice(0, -1);

function streamOf(pieces: readonly Uint8Array[]): ReadableStream<Uint8Array> {
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i < pieces.length) controller.enqueue(pieces[i++]!);
      else controller.close();
    },
  });
}

/**
 * A byte stream (`type: 'bytes'`, as R2 and `fetch` bodies are) giving the non-empty `pieces` (a
 * byte stream has no empty chunks; each is enqueued whole, as a copy: the stream takes its buffer), and the size of the view of every BYOB read it answered
 * (`null` for a read that was not one).
 */
function byteStreamOf(given: readonly Uint8Array[]): { stream: ReadableStream<Uint8Array>; views: Array<number | null> } {
  const pieces = given.filter((piece) => piece.length > 0);
  let i = 0;
  const views: Array<number | null> = [];
  const stream = new ReadableStream({
    type: 'bytes',
    pull(controller) {
      views.push(controller.byobRequest?.view?.byteLength ?? null);
      if (i < pieces.length) controller.enqueue(pieces[i++]!.slice());
      else {
        controller.close();
        controller.byobRequest?.respond(0);
      }
    },
  });
  return { stream, views };
}

/** The outcome of a read: its log, or its error's code and message. */
async function outcome(read: () => SessionLog | Promise<SessionLog>): Promise<unknown> {
  try {
    return { log: await read() };
  } catch (error) {
    const { code, message: text } = error as { code: string; message: string };
    return { code, message: text };
  }
}

/** `bytes` as text, a BOM kept, or `undefined` when they are not UTF-8. */
function decodeWhole(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

const SAMPLES: Record<string, Uint8Array> = {
  'plain text log': utf8(TEXT_LOG + LAST_LINE),
  'BOM, CRLF, blank lines': utf8(`\uFEFF${line(HEADER).replace('\n', '\r\n')}\n \n${line(message(0, 'x'))}`),
  'zstd, one frame per batch, skippable frames': concatBytes(skippableFrame(3), zstdLog(TEXT_LOG, 2), skippableFrame(0)),
  'zstd with checksums and a truncated final frame': concatBytes(storedFrame(TEXT_LOG, { checksum: true }), storedFrame(line(message(9, 'lost'))).subarray(0, 20)),
  'real dsh log, zstd': realLogZstd(),
  'not JSON in the middle': utf8(`${line(HEADER)}not json\n${line(message(1, 'a'))}`),
  'invalid UTF-8 in line 2': concatBytes(utf8(line(HEADER)), Uint8Array.of(0x7b, 0xc3, 0x28, 0x7d, 0x0a)),
};

describe('readSessionLog: streamed input reads exactly like one buffer (SPEC §11.2.2)', () => {
  it('property: any chunking, as a ReadableStream or an async iterable, gives parseSessionLog’s result or error', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(SAMPLES)), fc.array(fc.nat(), { maxLength: 12 }), fc.boolean(), async (name, cuts, asStream) => {
        const bytes = SAMPLES[name]!;
        const pieces = split(bytes, cuts);
        const expected = await outcome(() => parseSessionLog(bytes));
        const streamed = await outcome(() => readSessionLog(asStream ? streamOf(pieces) : iterableOf(pieces)));
        expect(streamed).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });

  it('property: with maxLogBytes, any chunking gives the outcome of the whole buffer: an error of a line within the limit stands (stop-37 probe)', async () => {
    const limited: Record<string, Uint8Array> = {
      ...SAMPLES,
      'bad line 2, then a long line': utf8(`${line(HEADER)}{"type":"tool/call","seq":3,x}\n${line(message(4, 'a'.repeat(3000)))}`),
    };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(limited)), fc.array(fc.nat(), { maxLength: 12 }), fc.constantFrom(1, 60, 100, 1000, 2000), async (name, cuts, maxLogBytes) => {
        const bytes = limited[name]!;
        const expected = await outcome(() => readSessionLog(bytes, { maxLogBytes }));
        expect(await outcome(() => readSessionLog(iterableOf(split(bytes, cuts)), { maxLogBytes }))).toEqual(expected);
        // The same log as text reads as its UTF-8 bytes do (the stop-37 second probe: text ignored the limit).
        const text = bytes[0] === 0x28 ? undefined : decodeWhole(bytes);
        if (text !== undefined) expect(await outcome(() => readSessionLog(text, { maxLogBytes }))).toEqual(expected);
      }),
      { numRuns: 300 },
    );
    const probe = limited['bad line 2, then a long line']!;
    for (const maxLogBytes of [100, 1000, probe.length - 1]) {
      expect(await outcome(() => readSessionLog(probe, { maxLogBytes }))).toEqual({ code: 'SESSION_REFERENCE_INVALID_LOG', message: expect.stringContaining('line 2 is not JSON') });
    }
    expect(await outcome(() => readSessionLog(probe, { maxLogBytes: 80 }))).toEqual({ code: 'SESSION_REFERENCE_INVALID_LOG', message: expect.stringContaining('larger than maxLogBytes (80 bytes)') });
    const big = TEXT_LOG + line(message(4, 'ğ'.repeat(5000)));
    expect(await outcome(() => readSessionLog(big, { maxLogBytes: 1 }))).toEqual({ code: 'SESSION_REFERENCE_INVALID_LOG', message: expect.stringContaining('larger than maxLogBytes (1 bytes)') });
    expect(await outcome(() => readSessionLog(big, { maxLogBytes: utf8(big).length }))).toEqual(await outcome(() => parseSessionLog(big)));
  });

  it('property: a byte stream is read into one reused buffer (BYOB reads), in any chunking, lines across reads too', async () => {
    // Lines longer than a read, and pieces larger than one: every line crosses reads somewhere.
    const long = utf8(line(HEADER) + [0, 1, 2, 3].map((seq) => line(message(seq, `çözüm ${'日本語 '.repeat(9000 * seq)}`))).join(''));
    const samples = { ...SAMPLES, 'lines longer than a read': long, 'the same, zstd': zstdLog(new TextDecoder().decode(long), 2) };
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(samples)), fc.array(fc.nat(), { maxLength: 12 }), async (name, cuts) => {
        const bytes = samples[name as keyof typeof samples]!;
        const { stream, views } = byteStreamOf(split(bytes, cuts));
        expect(await outcome(() => readSessionLog(stream))).toEqual(await outcome(() => parseSessionLog(bytes)));
        expect(views.every((size) => size === STREAM_READ_BYTES)).toBe(true);
      }),
      { seed: 1107, numRuns: 120 },
    );
  });

  it('one-byte chunks of every sample read like the whole buffer', async () => {
    for (const bytes of Object.values(SAMPLES)) {
      const pieces = Array.from(bytes, (byte) => Uint8Array.of(byte));
      expect(await outcome(() => readSessionLog(iterableOf(pieces)))).toEqual(await outcome(() => parseSessionLog(bytes)));
    }
  });

  it('accepts text, bytes and ArrayBuffers too', async () => {
    const expected = parseSessionLog(TEXT_LOG);
    expect(await readSessionLog(TEXT_LOG)).toEqual(expected);
    expect(await readSessionLog(utf8(TEXT_LOG))).toEqual(expected);
    expect(await readSessionLog(utf8(TEXT_LOG).buffer)).toEqual(expected);
    expect(expected.events[1]!.data).toEqual({ output: '日本語の出力 \u2028 next' });
  });
});

describe('torn last lines (SPEC §11.1)', () => {
  const whole = utf8(TEXT_LOG + LAST_LINE);
  const prefix = utf8(TEXT_LOG).length;
  const complete = parseSessionLog(TEXT_LOG);

  it('property: a cut anywhere in the last line — inside a multi-byte character too — drops just that line, plain or zstd, whole or streamed', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: prefix, max: whole.length - 1 }), fc.array(fc.nat(), { maxLength: 6 }), fc.boolean(), async (cut, cuts, zstd) => {
        const bytes = whole.subarray(0, cut);
        const input = zstd ? concatBytes(zstdLog(TEXT_LOG, 2), storedFrame(bytes.subarray(prefix))) : bytes;
        expect(parseSessionLog(input)).toEqual(complete);
        expect(await readSessionLog(iterableOf(split(input, cuts)))).toEqual(complete);
      }),
      { numRuns: 200 },
    );
  });

  it('every cut position, exhaustively: the cuts inside multi-byte characters included', () => {
    let insideCharacter = 0;
    for (let cut = prefix; cut < whole.length; cut++) {
      if ((whole[cut]! & 0xc0) === 0x80) insideCharacter++;
      expect(parseSessionLog(whole.subarray(0, cut))).toEqual(complete);
    }
    expect(insideCharacter).toBeGreaterThan(10);
    // Uncut, the last line is complete JSON without its newline: an event.
    expect(parseSessionLog(whole).events).toHaveLength(complete.events.length + 1);
  });

  it('property: invalid UTF-8 in any complete line is INVALID_LOG naming that line', () => {
    const lines = TEXT_LOG.split('\n').slice(0, -1);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: lines.length - 1 }), fc.nat(), fc.constantFrom(0xff, 0xc3, 0xed, 0x80), (index, at, bad) => {
        const target = utf8(lines[index]!);
        const position = at % target.length;
        const broken = concatBytes(target.subarray(0, position), Uint8Array.of(bad), bad === 0xc3 ? Uint8Array.of(0x28) : new Uint8Array(0), target.subarray(position));
        const bytes = concatBytes(utf8(lines.slice(0, index).map((l) => `${l}\n`).join('')), broken, utf8(`\n${lines.slice(index + 1).map((l) => `${l}\n`).join('')}`));
        const error = expectCode(() => parseSessionLog(bytes), 'SESSION_REFERENCE_INVALID_LOG');
        expect(error.message).toContain(`line ${index + 1}`);
      }),
      { numRuns: 100 },
    );
  });

  it('a torn header stays an error for parseSessionLogHeader, also cut inside a character', () => {
    const header = utf8(`{"type":"session","version":3,"id":"ağ","createdAt":1}\n`);
    for (let cut = 1; cut < header.length - 1; cut++) {
      expectCode(() => parseSessionLogHeader(header.subarray(0, cut)), 'SESSION_REFERENCE_INVALID_LOG');
    }
  });
});

describe('decompression bombs (SPEC §11.2.1)', () => {
  // 1 M RLE blocks of 128 KiB: 4 MiB of frame that would decode to 128 GiB.
  const HUGE = 1 << 20;

  it('a frame expanding past 1 MiB without a newline fails the header read ("header line over 1 MiB") without decoding the rest', async () => {
    const bomb = rleFrame(0x61, HUGE);
    expect(expectCode(() => parseSessionLogHeader(bomb), 'SESSION_REFERENCE_INVALID_LOG').message).toContain('header line over 1 MiB');
    const { bucket, stats } = fakeBucket({ bomb });
    const error = await expectRejectCode(createObjectStoreSessionQuery(bucket).listSessions(), 'SESSION_REFERENCE_INVALID_LOG');
    expect(error.message).toContain('header line over 1 MiB');
    expect(stats.bytes).toBeLessThan(16 * 1024);
  });

  it('a plain first line over 1 MiB is refused the same way', () => {
    const long = utf8(`{"type":"session","version":3,"id":"${'x'.repeat(1 << 20)}","createdAt":1}\n`);
    expect(expectCode(() => parseSessionLogHeader(long), 'SESSION_REFERENCE_INVALID_LOG').message).toContain('header line over 1 MiB');
  });

  it('a frame expanding hugely after the header: the header reads at once; a whole read fails at maxLogBytes, naming it', async () => {
    const log = concatBytes(storedFrame(line(HEADER)), rleFrame(0x0a, HUGE));
    expect(parseSessionLogHeader(log)).toEqual(HEADER);
    const { bucket, stats } = fakeBucket({ log });
    expect((await createObjectStoreSessionQuery(bucket).listSessions()).map((r) => r.header.id)).toEqual(['stream']);
    expect(stats.bytes).toBeLessThan(64 * 1024);
    const error = await expectRejectCode(readSessionLog(log, { maxLogBytes: 2 << 20 }), 'SESSION_REFERENCE_INVALID_LOG');
    expect(error.message).toContain('maxLogBytes (2097152 bytes)');
    const limited = createObjectStoreSessionQuery(fakeBucket({ log }).bucket, { maxLogBytes: 2 << 20 });
    const viaStore = await expectRejectCode(limited.readSurface('stream'), 'SESSION_REFERENCE_INVALID_LOG');
    expect(viaStore.message).toContain('maxLogBytes');
  });

  it('maxLogBytes bounds whole reads only: a listing reads the header of a log past it, plain and zstd (SPEC §11.2.1)', async () => {
    // The stop-37 probe: a plain log was not listed once maxLogBytes was below the first chunk read.
    const plain = utf8(TEXT_LOG + line(message(4, 'x'.repeat(20_000))));
    for (const log of [plain, zstdLog(new TextDecoder().decode(plain)), realLogZstd()]) {
      const id = parseSessionLogHeader(log).id;
      for (const maxLogBytes of [1, 100, 4095, 8192]) {
        const limited = createObjectStoreSessionQuery(fakeBucket({ log }).bucket, { maxLogBytes });
        expect((await limited.listSessions()).map((r) => r.header.id)).toEqual([id]);
        const error = await expectRejectCode(limited.readSurface(id), 'SESSION_REFERENCE_INVALID_LOG');
        expect(error.message).toContain(`maxLogBytes (${maxLogBytes} bytes)`);
      }
    }
  });

  it('rejects bad read options with INVALID_ARGUMENT', async () => {
    for (const options of [null, { maxLogBytes: 0 }, { maxLogBytes: 1.5 }, { maxLogBytes: '1' }, { verifyChecksums: 1 }, { maxBytes: 1 }, { signal: {} }]) {
      await expectRejectCode(readSessionLog(TEXT_LOG, options as never), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    }
  });
});

describe('frames larger than a whole-frame decode, streamed block by block (SPEC §11.2, §11.2.2)', () => {
  const bulk = Array.from({ length: 3000 }, (_, i) => line(message(i + 1, `${'ş'.repeat(1500)} ${i}`))).join('');
  const big = utf8(bulk); // about 9.1 MB: above the 8 MiB whole-frame bound
  const head = storedFrame(line(HEADER));

  it('decodes a big frame with its checksum, in any chunking, like the same lines in small frames', async () => {
    expect(big.length).toBeGreaterThan(8 << 20);
    const expected = parseSessionLog(line(HEADER) + bulk);
    const log = concatBytes(head, storedFrame(big, { checksum: true, contentSize: false }), storedFrame(line(message(5000, 'after'))));
    const withAfter = { ...expected, events: [...expected.events, message(5000, 'after')] };
    expect(parseSessionLog(log)).toEqual(withAfter);
    const pieces = split(log, [7, 100_000, 3_000_001, 3_000_002, 9_000_000]);
    expect(await readSessionLog(streamOf(pieces))).toEqual(withAfter);
  });

  it('a corrupt checksum fails; with verifyChecksums: false it is not checked', async () => {
    const frame = storedFrame(big, { checksum: true });
    frame[frame.length - 1] ^= 0xff;
    const log = concatBytes(head, frame);
    expect((await expectRejectCode(readSessionLog(log), 'SESSION_REFERENCE_INVALID_LOG')).message).toContain('checksum mismatch');
    expect((await readSessionLog(log, { verifyChecksums: false })).events).toHaveLength(3000);
  });

  it('a truncated big final frame is ignored like a torn line: its lines are taken back', async () => {
    const frame = storedFrame(big, { contentSize: false });
    for (const cut of [100, 4_000_000, frame.length - 1]) {
      const log = concatBytes(head, storedFrame(line(message(0, 'kept'))), frame.subarray(0, cut));
      const read = await readSessionLog(iterableOf(split(log, [cut - 50_000, cut + 10])));
      expect(read.events).toEqual([message(0, 'kept')]);
      expect(parseSessionLog(log).events).toEqual([message(0, 'kept')]);
    }
  });
});

describe('readSessionLog: sources that fail (SPEC §10)', () => {
  it('a stream that errors is READ_FAILED with the cause; a chunk that is not bytes is READ_FAILED', async () => {
    const cause = new Error('disk gone');
    const failing = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(utf8(line(HEADER)));
        controller.error(cause);
      },
    });
    expect((await expectRejectCode(readSessionLog(failing), 'SESSION_REFERENCE_READ_FAILED')).cause).toBe(cause);
    await expectRejectCode(readSessionLog(iterableOf(['text' as unknown as Uint8Array])), 'SESSION_REFERENCE_READ_FAILED');
  });

  it('inputs that are not a log source are INVALID_ARGUMENT', async () => {
    for (const bad of [undefined, null, 42, {}, [utf8(TEXT_LOG)], new Uint16Array(2)]) {
      await expectRejectCode(readSessionLog(bad as never), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    }
  });

  it('an abort while the source never answers rejects CANCELLED at once and cancels the stream', async () => {
    let cancelled: unknown;
    const stalled = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(utf8(line(HEADER)));
      },
      cancel(reason) {
        cancelled = reason ?? 'cancelled';
      },
    });
    const controller = new AbortController();
    const read = readSessionLog(stalled, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 10));
    controller.abort(new Error('stop'));
    const error = await expectRejectCode(read, 'SESSION_REFERENCE_CANCELLED');
    expect((error.cause as Error).message).toBe('stop');
    expect(cancelled).toBeDefined();
  });

  it('an endless source fails at maxLogBytes and is closed', async () => {
    let pulled = 0;
    let returned = false;
    async function* source() {
      try {
        for (;;) {
          pulled++;
          yield utf8(pulled === 1 ? line(HEADER) : line(message(pulled, 'more')));
        }
      } finally {
        returned = true;
      }
    }
    const error = await expectRejectCode(readSessionLog(source(), { maxLogBytes: 1 << 16 }), 'SESSION_REFERENCE_INVALID_LOG');
    expect(error.message).toContain('maxLogBytes (65536 bytes)');
    expect(returned).toBe(true);
    expect(pulled).toBeGreaterThan(100);
  });
});

describe('folding as the lines go by (SPEC §8.2, §11.2.2)', () => {
  const kinds = ['user/message', 'assistant/message', 'tool/result', 'tool/call', 'step/start'] as const;
  /** A log of `count` events with appends, replaces of earlier runs (compactions) and events off the surface. */
  function foldingLog(random: () => number, count: number, repeatSeqs: boolean): string {
    const lines = [line(HEADER)];
    for (let seq = 0; seq < count; seq++) {
      const type = kinds[Math.floor(random() * kinds.length)]!;
      const roll = random();
      const start = Math.floor(random() * seq);
      const surfaceOp =
        type === 'tool/call' || type === 'step/start' ? undefined : roll < 0.02 ? { op: 'replace', start, end: start + Math.floor(random() * (seq - start)) } : 'append';
      const data =
        type === 'user/message'
          ? { id: `u${seq}`, role: 'user', content: [{ type: 'text', text: `q${seq}` }], source: { kind: roll < 0.5 ? 'user' : 'plugin', plugin: 'compact' } }
          : type === 'assistant/message'
            ? { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'reasoning', text: 'r' }, { type: 'text', text: `a${seq}` }] } }
            : { n: seq };
      const written = repeatSeqs && random() < 0.05 ? Math.max(0, seq - 3) : seq;
      lines.push(line(surfaceOp === undefined ? { type, seq: written, time: seq, data } : { type, seq: written, time: seq, data, surfaceOp }));
    }
    return lines.join('');
  }

  it('property: a store surface folded while reading equals the whole log folded at the end, repeated seqs too', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer(), fc.integer({ min: 4000, max: 12_000 }), fc.boolean(), async (seed, count, repeatSeqs) => {
        let state = seed | 1;
        const random = () => ((state = (Math.imul(state, 1103515245) + 12345) | 0) >>> 0) / 2 ** 32;
        const text = foldingLog(random, count, repeatSeqs);
        const expected = keptForSnapshot(await createMemorySessionQuery([parseSessionLog(text)]).readSurface('stream'));
        const { bucket } = fakeBucket({ log: zstdLog(text, 64) });
        expect(await createObjectStoreSessionQuery(bucket).readSurface('stream')).toEqual(expected);
      }),
      { numRuns: 8 },
    );
  });

  it('a replace naming a seq written later stops folding as the lines go by (SPEC §8.2): the surface equals the whole log folded', async () => {
    // E (seq 60) names seq 5000 as its start, written later; Y (seq 5000) replaces seqs 0..10 and
    // takes the first slot, before E. Folding again after Y would let E match (5000 through 30).
    const rows: unknown[] = [];
    for (let seq = 0; seq < 14_000; seq++) {
      if (seq === 60) rows.push({ type: 'tool/result', seq, time: seq, surfaceOp: { op: 'replace', start: 5000, end: 30 }, data: {} });
      else if (seq === 5000) rows.push({ ...message(seq, 'checkpoint'), surfaceOp: { op: 'replace', start: 0, end: 10 }, data: { role: 'user', content: [{ type: 'text', text: 'summary' }], source: { kind: 'plugin', plugin: 'compact' } } });
      else rows.push(message(seq, `m${seq}`));
    }
    const text = line(HEADER) + rows.map(line).join('');
    const expected = keptForSnapshot(await createMemorySessionQuery([parseSessionLog(text)]).readSurface('stream'));
    expect(expected.events.some((event) => event.seq === 5000)).toBe(true);
    const { bucket } = fakeBucket({ log: utf8(text) });
    expect(await createObjectStoreSessionQuery(bucket).readSurface('stream')).toEqual(expected);
  });
});
