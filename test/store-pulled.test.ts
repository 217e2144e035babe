/**
 * A store's own chunk reads through the pipeline (SPEC §11.2.1, §11.2.2, §12.1): `PulledChunks`,
 * the first chunk read ahead by the store (the Node store's file reads), the rest pulled one read
 * at a time. In every runtime: a header within the first chunk is read at once (no promise, no
 * further read); a header spanning chunks or frames, torn, BOM-prefixed or over 1 MiB reads as
 * from any other source; whole reads are the same; and a zstd stream stopped by its consumer
 * decodes no further frame or block.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { PulledChunks, type ReadRequest } from '../src/store/pipeline.js';
import { readSessionHeader, readSessionTitle } from '../src/store/read.js';
import { readSessionSurface } from '../src/store/surface-read.js';
import { loadLibZstd, ZstdStream, type LibZstd } from '../src/store/zstd.js';
import { concatBytes } from './fixtures/base64.js';
import { realLogZstd, zstdLog } from './fixtures/object-store.js';
import { rleFrame, skippableFrame, storedFrame } from './fixtures/zstd-build.js';
import { iterableOf, split } from './fixtures/chunks.js';

const encoder = new TextEncoder();
const utf8 = (text: string) => encoder.encode(text);
const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const HEADER = { type: 'session', version: 3, id: 'pulled', createdAt: 1, cwd: '/work/çalışma' };
const OPTIONS = { maxLogBytes: 4 * 1024 ** 3, verifyChecksums: true, signal: undefined };

function event(seq: number, text: string) {
  return { type: 'user/message', seq, time: seq, surfaceOp: 'append', data: { id: `u${seq}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } } };
}

const TITLE = { type: 'session/title', seq: 3, time: 3, data: { title: 'başlık 🚀' } };
const LOG = line(HEADER) + line(event(1, 'bir')) + line(event(2, '日本語')) + line(TITLE);
const [HEADER_LINE] = LOG.split(/(?<=\n)/) as [string];
const LONG_HEADER = { ...HEADER, note: 'ş'.repeat(6000) }; // about 12 KB: past a 4 KiB first read

/** Logs whose header the pulled reads must read exactly as the async-iterable path does. */
const SAMPLES: Record<string, Uint8Array> = {
  'plain text': utf8(LOG),
  'BOM and CRLF': utf8(`\uFEFF${LOG.replace('\n', '\r\n')}`),
  'header over 4 KiB': utf8(line(LONG_HEADER) + line(event(1, 'x'))),
  'torn header (a session being created)': utf8(HEADER_LINE.slice(0, 30)),
  'header only, no final newline': utf8(HEADER_LINE.slice(0, -1)),
  'not a header': utf8('{"type":"other"}\n'),
  'header over 1 MiB': utf8(`{"type":"session","version":3,"id":"${'x'.repeat(1 << 20)}","createdAt":1}\n`),
  empty: new Uint8Array(0),
  'zstd in dsh layout, skippable frame first': concatBytes(skippableFrame(5), zstdLog(LOG, 1)),
  'zstd, header line across two frames': concatBytes(storedFrame(HEADER_LINE.slice(0, 20)), storedFrame(HEADER_LINE.slice(20), { checksum: true }), storedFrame(LOG.slice(HEADER_LINE.length))),
  'zstd, long header across frames': concatBytes(storedFrame(line(LONG_HEADER).slice(0, 5000)), storedFrame(line(LONG_HEADER).slice(5000))),
  'zstd, truncated first frame': storedFrame(LOG).subarray(0, 40),
  'zstd, corrupt checksum of the header frame': (() => {
    const frame = storedFrame(HEADER_LINE, { checksum: true });
    frame[frame.length - 1] ^= 0xff;
    return frame;
  })(),
  'real dsh log, zstd': realLogZstd(),
};

/**
 * The pieces as a store's own reads: the first read ahead, the rest pulled, each read ending where
 * a piece ends; a read honours its request as a store does (SPEC §11.2.1.1: it starts `skip`
 * bytes further and takes at most `limit` bytes). Counts the pulls.
 */
function pulled(pieces: readonly Uint8Array[]): { chunks: PulledChunks; pulls: () => number } {
  const bytes = concatBytes(...pieces);
  const ends: number[] = [];
  for (let end = 0, k = 0; k < pieces.length; k++) ends.push((end += pieces[k]!.length));
  let position = ends[0] ?? 0;
  let pulls = 0;
  const chunks = new PulledChunks(pieces[0], async (request: ReadRequest) => {
    pulls++;
    position += request.skip;
    if (position >= bytes.length) return undefined;
    const end = Math.min(ends.find((at) => at > position) ?? bytes.length, position + request.limit);
    const chunk = bytes.slice(position, end);
    position = end;
    return chunk;
  });
  return { chunks, pulls: () => pulls };
}

/** The outcome of a read: its value, or its error's code and message. */
async function outcome(read: () => unknown): Promise<unknown> {
  try {
    return { value: await read() };
  } catch (error) {
    const { code, message } = error as { code: string; message: string };
    return { code, message };
  }
}

describe('a store’s own reads, the first chunk read ahead (PulledChunks; SPEC §11.2.1, §12.1)', () => {
  it('property: any cut into a first read and pulled reads gives the header, title and surface of the same pieces as an async iterable', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(SAMPLES)), fc.array(fc.nat(), { maxLength: 4 }), async (name, cuts) => {
        const pieces = split(SAMPLES[name]!, cuts);
        const reads = [
          (source: PulledChunks | AsyncIterable<Uint8Array>) => readSessionHeader(source, OPTIONS),
          (source: PulledChunks | AsyncIterable<Uint8Array>) => readSessionTitle(source, OPTIONS),
          (source: PulledChunks | AsyncIterable<Uint8Array>) => readSessionSurface(() => source, OPTIONS),
          (source: PulledChunks | AsyncIterable<Uint8Array>) => readSessionSurface(() => source, OPTIONS, 1 << 20),
        ];
        for (const read of reads) {
          const expected = await outcome(() => read(iterableOf(pieces)));
          // A result or a SessionReferenceError (never a TypeError: a read that does not exist).
          expect('value' in (expected as object) || String((expected as { code?: unknown }).code).startsWith('SESSION_REFERENCE_')).toBe(true);
          expect(await outcome(() => read(pulled(pieces).chunks))).toEqual(expected);
        }
      }),
      { numRuns: 150 },
    );
  });

  it('reads the samples’ headers as expected: a torn or truncated header is no header yet; BOM dropped; errors name line 1', async () => {
    const header = (name: string) => outcome(() => readSessionHeader(pulled(split(SAMPLES[name]!, [4096])).chunks, OPTIONS));
    expect(await header('plain text')).toEqual({ value: HEADER });
    expect(await header('BOM and CRLF')).toEqual({ value: HEADER });
    expect(await header('header over 4 KiB')).toEqual({ value: LONG_HEADER });
    expect(await header('zstd, header line across two frames')).toEqual({ value: HEADER });
    expect(await header('zstd, long header across frames')).toEqual({ value: LONG_HEADER });
    expect(await header('header only, no final newline')).toEqual({ value: HEADER }); // JSON already: not torn
    for (const name of ['torn header (a session being created)', 'empty', 'zstd, truncated first frame']) {
      expect(await header(name)).toEqual({ value: undefined });
    }
    expect(await header('header over 1 MiB')).toMatchObject({ code: 'SESSION_REFERENCE_INVALID_LOG', message: expect.stringContaining('header line over 1 MiB') });
    expect(await header('zstd, corrupt checksum of the header frame')).toMatchObject({ code: 'SESSION_REFERENCE_INVALID_LOG', message: expect.stringContaining('checksum mismatch') });
    expect(await header('not a header')).toMatchObject({ code: 'SESSION_REFERENCE_INVALID_LOG', message: expect.stringContaining('line 1') });
  });

  it('a header within the first read is read at once: no promise, no further read', async () => {
    await readSessionHeader(pulled([SAMPLES['zstd in dsh layout, skippable frame first']!]).chunks, OPTIONS); // loads the zstd decoder
    for (const name of ['plain text', 'BOM and CRLF', 'zstd in dsh layout, skippable frame first', 'zstd, header line across two frames', 'real dsh log, zstd']) {
      const { chunks, pulls } = pulled(split(SAMPLES[name]!, [4096]));
      const header = readSessionHeader(chunks, OPTIONS);
      expect(header).not.toBeInstanceOf(Promise);
      expect((header as { type: string }).type).toBe('session');
      expect(pulls()).toBe(0);
    }
  });

  it('a header spanning reads pulls only until line 1 ends', async () => {
    const bytes = SAMPLES['header over 4 KiB']!;
    const lineEnd = bytes.indexOf(0x0a) + 1;
    const { chunks, pulls } = pulled(split(bytes, [4096, 8192, lineEnd, lineEnd + 100]));
    expect(await readSessionHeader(chunks, OPTIONS)).toEqual(LONG_HEADER);
    expect(pulls()).toBe(2); // 4096–8192 and 8192–end of line 1; never the event line after it
  });
});

describe('a zstd stream stopped by its consumer (SPEC §11.2.1)', () => {
  const noMark = () => () => {};
  const options = { verifyChecksums: true, mark: noMark, maxInputBytes: Infinity, countSkipped: false, sliceBytes: Infinity };
  let lib: LibZstd;
  beforeAll(async () => {
    lib = await loadLibZstd();
  });

  it('decodes no frame after the one whose output stopped it, and ignores later pushes', () => {
    const corrupt = storedFrame(line(event(1, 'x')), { checksum: true });
    corrupt[corrupt.length - 1] ^= 0xff; // would fail if decoded
    const outputs: string[] = [];
    const stream = new ZstdStream(lib, (bytes) => outputs.push(new TextDecoder().decode(bytes)) === 0, options);
    stream.push(concatBytes(storedFrame(HEADER_LINE), corrupt));
    stream.push(corrupt);
    stream.end();
    expect(outputs).toEqual([HEADER_LINE]);
  });

  it('stops a frame decoded block by block at the block that stopped it (a 128 GiB RLE bomb: one block decoded)', () => {
    let blocks = 0;
    const stream = new ZstdStream(lib, () => ++blocks < 2, options);
    const bomb = rleFrame(0x61, 1 << 20);
    stream.push(bomb.subarray(0, 1 << 19));
    stream.push(bomb.subarray(1 << 19));
    expect(blocks).toBe(2);
  });
});
