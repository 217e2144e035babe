/**
 * Hardening III of the store pipeline, in every runtime: streams read strictly (SPEC §11.2.3:
 * every item that is not bytes is READ_FAILED naming its index, never an end of stream; any
 * ArrayBufferView reads as its bytes), memory that does not depend on chunking (a pending line
 * held in blocks, not one array per chunk), short reads that fail (SPEC §11.2.4: an object body
 * ending before its size, a ranged get shorter than asked), and always-ready sources (SPEC §10.3:
 * an abort takes effect, pagination stops at a repeated cursor or after 100,000 pages).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createObjectStoreSessionQuery, parseSessionLog, readSessionLog, type ObjectStoreBucket, type ObjectStoreObjectBody } from '../src/store/index.js';
import { PendingLine } from '../src/store/lines.js';
import { MAX_LIST_PAGES } from '../src/store/object-store.js';
import { PulledChunks, SizedSource } from '../src/store/pipeline.js';
import { readSessionTitle } from '../src/store/read.js';
import { concatBytes } from './fixtures/base64.js';
import { split } from './fixtures/chunks.js';
import { zstdLog } from './fixtures/object-store.js';
import { expectRejectCode } from './helpers.js';

const SEED = 2121;
const encoder = new TextEncoder();
const utf8 = (text: string) => encoder.encode(text);
const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const HEADER = { type: 'session', version: 3, id: 'strict', createdAt: 1 };

function message(seq: number, text: string) {
  return { type: 'user/message', seq, time: seq, surfaceOp: 'append', data: { id: `u${seq}`, role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } } };
}

const TEXT = line(HEADER) + line(message(0, 'Dümen: şu çözüm?')) + line({ type: 'session/title', seq: 1, time: 1, data: { title: 'başlık 🚀' } }) + line(message(2, '日本語 🎉'));
const LOGS: Record<string, Uint8Array> = { plain: utf8(TEXT), zstd: zstdLog(TEXT, 1) };
/** Logs over the 4 KiB of a first ranged header read: the object store fetches them again for a whole read. */
const BIG_TEXT = TEXT + line(message(3, 'ğ'.repeat(4000)));
const BIG_LOGS: Record<string, Uint8Array> = { plain: utf8(BIG_TEXT), zstd: zstdLog(BIG_TEXT, 1) };

/** Byte-wise equality, without a deep comparison of every element. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

/** The same bytes as a chunk of another kind (SPEC §11.2.3: any ArrayBufferView, an ArrayBuffer). */
const VIEWS: Record<string, (bytes: Uint8Array) => unknown> = {
  Uint8Array: (bytes) => bytes,
  ArrayBuffer: (bytes) => bytes.slice().buffer,
  DataView: (bytes) => {
    // At an offset in a larger buffer: only the view's own bytes count.
    const buffer = new Uint8Array(bytes.length + 6);
    buffer.set(bytes, 3);
    return new DataView(buffer.buffer, 3, bytes.length);
  },
  Int8Array: (bytes) => new Int8Array(bytes.slice().buffer),
  'Uint16Array (even pieces) or Uint8ClampedArray': (bytes) => (bytes.length % 2 === 0 ? new Uint16Array(bytes.slice().buffer) : new Uint8ClampedArray(bytes)),
};

/** Items that are not bytes (SPEC §11.2.3). */
const NOT_BYTES: Array<[string, unknown]> = [
  ['undefined', undefined],
  ['null', null],
  ['a number', 42],
  ['a string', 'text'],
  ['an object', { length: 3 }],
  ['an array of numbers', [123, 10]],
  ['a boolean', false],
];

/** Iterator results that are not `{ done: boolean, value }` (SPEC §11.2.3). */
const NOT_RESULTS: Array<[string, unknown]> = [
  ['undefined', undefined],
  ['null', null],
  ['a number', 0],
  ['a string', 'done'],
  ['{}', {}],
  ['{ done: "no" }', { done: 'no', value: new Uint8Array(1) }],
  ['{ done: 0 }', { done: 0 }],
  ['{ done: false } without value', { done: false }],
];

type Shape = 'ReadableStream' | 'async generator' | 'iterator object' | 'pulled chunks';
const SHAPES: Shape[] = ['ReadableStream', 'async generator', 'iterator object', 'pulled chunks'];

/** A source of `shape` giving `items` in order (anything, as a hostile or careless producer would). */
function sourceOf(shape: Shape, items: readonly unknown[]): unknown {
  switch (shape) {
    case 'ReadableStream': {
      let i = 0;
      return new ReadableStream({
        pull(controller) {
          if (i < items.length) controller.enqueue(items[i++]);
          else controller.close();
        },
      });
    }
    case 'async generator':
      return (async function* () {
        yield* items;
      })();
    case 'iterator object':
      return resultsSource(items.map((value) => ({ done: false, value })));
    case 'pulled chunks': {
      let i = 1;
      return new PulledChunks(items[0] as Uint8Array, async () => (i < items.length ? (items[i++] as Uint8Array) : undefined));
    }
  }
}

/** An async iterable whose `next()` answers `results` in order (then `{ done: true }`). */
function resultsSource(results: readonly unknown[]): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      let i = 0;
      return { next: async () => (i < results.length ? results[i++] : { done: true, value: undefined }) } as AsyncIterator<Uint8Array>;
    },
  };
}

/** Reads `source` as a log: readSessionLog, or for pulled chunks (a store's own) a title read. */
async function read(shape: Shape, source: unknown): Promise<unknown> {
  if (shape === 'pulled chunks') return readSessionTitle(source as PulledChunks, { signal: undefined });
  return readSessionLog(source as ReadableStream<Uint8Array>);
}

async function expected(shape: Shape, bytes: Uint8Array): Promise<unknown> {
  if (shape === 'pulled chunks') return readSessionTitle(bytes, {});
  return parseSessionLog(bytes);
}

describe('streams are read strictly (SPEC §11.2.3)', () => {
  it('property: any chunking, as ArrayBuffers and any ArrayBufferViews, with empty chunks anywhere, reads like the whole buffer, in every source shape', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(LOGS)),
        fc.constantFrom(...SHAPES),
        fc.array(fc.nat(), { maxLength: 10 }),
        fc.array(fc.constantFrom(...Object.keys(VIEWS)), { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { maxLength: 3 }),
        async (name, shape, cuts, views, empties) => {
          const bytes = LOGS[name]!;
          const items: unknown[] = split(bytes, cuts).map((piece, i) => VIEWS[views[i % views.length]!]!(piece));
          for (const at of empties) items.splice(at % (items.length + 1), 0, new Uint8Array(0));
          // The store's own first read is a Uint8Array; every later item may be any kind of bytes.
          if (shape === 'pulled chunks') items.unshift(new Uint8Array(0));
          expect(await read(shape, sourceOf(shape, items))).toEqual(await expected(shape, bytes));
        },
      ),
      { seed: SEED, numRuns: 120 },
    );
  });

  it('property: an item that is not bytes, anywhere in the stream, is READ_FAILED naming its index and what it was — never an end of stream', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(LOGS)),
        fc.constantFrom(...SHAPES),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.nat(),
        fc.constantFrom(...NOT_BYTES),
        async (name, shape, cuts, at, [what, bad]) => {
          const items: unknown[] = split(LOGS[name]!, cuts);
          // A store's own first read is always bytes; every later item may be anything.
          const index = shape === 'pulled chunks' ? 1 + (at % items.length) : at % (items.length + 1);
          // A pulled `undefined` is the store's own end of chunks, not an item.
          if (shape === 'pulled chunks' && bad === undefined) return;
          items.splice(index, 0, bad);
          const error = await expectRejectCode(read(shape, sourceOf(shape, items)), 'SESSION_REFERENCE_READ_FAILED');
          expect(error.message, what).toContain(`item ${index} (counting from 0) that is not bytes`);
          if (bad === undefined) expect(error.message).toMatch(/: undefined$/);
          if (typeof bad === 'string') expect(error.message).toContain('the string "text"');
        },
      ),
      { seed: SEED, numRuns: 150 },
    );
  });

  it('property: a next() that answers anything but { done: boolean, value } is READ_FAILED naming the read', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.nat(), { maxLength: 6 }), fc.nat(), fc.constantFrom(...NOT_RESULTS), async (cuts, at, [what, bad]) => {
        const results: unknown[] = split(LOGS.plain!, cuts).map((value) => ({ done: false, value }));
        const index = at % (results.length + 1);
        results.splice(index, 0, bad);
        const error = await expectRejectCode(readSessionLog(resultsSource(results)), 'SESSION_REFERENCE_READ_FAILED');
        expect(error.message, what).toMatch(new RegExp(`(read|item) ${index} \\(counting from 0\\)`));
      }),
      { seed: SEED, numRuns: 100 },
    );
  });

  it('a done result ends the stream whatever its value; a throwing done getter is READ_FAILED with its cause', async () => {
    const bytes = LOGS.plain!;
    expect(await readSessionLog(resultsSource([{ done: false, value: bytes }, { done: true, value: 'ignored' }]))).toEqual(parseSessionLog(bytes));
    const cause = new Error('getter');
    const hostile = {
      get done(): boolean {
        throw cause;
      },
    };
    const error = await expectRejectCode(readSessionLog(resultsSource([{ done: false, value: bytes }, hostile])), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.cause).toBe(cause);
  });

  it('controller.enqueue(undefined) in an object store body stream fails the read, naming the object', async () => {
    const bytes = BIG_LOGS.plain!;
    const bucket = streamingBucket(bytes, () => sourceOf('ReadableStream', [bytes.subarray(0, 50), undefined, bytes.subarray(50)]) as ReadableStream<Uint8Array>);
    const error = await expectRejectCode(createObjectStoreSessionQuery(bucket).readSurface('strict'), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.message).toBe('object "log": a dsh session log stream gave item 1 (counting from 0) that is not bytes: undefined');
  });
});

describe('memory does not depend on chunking (SPEC §11.2.3)', () => {
  it('property: a pending line holds its bytes in blocks — about one array per 64 KiB, however it was chunked — and gives them back exactly', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 70_000 }), { maxLength: 40 }), fc.array(fc.constantFrom(1, 2, 3, 7), { maxLength: 3000 }), (sizes, tiny) => {
        const pending = new PendingLine();
        const pieces = [...sizes, ...tiny].map((size, i) => new Uint8Array(size).fill(i & 0xff));
        let bytes = 0;
        let big = 0;
        for (const piece of pieces) {
          pending.append(piece);
          bytes += piece.length;
          if (piece.length >= 65_536) big++;
          // Blocks doubling from 256 B to 64 KiB (9), then one per 64 KiB; a piece of 64 KiB or
          // more is an array of its own and seals the block before it.
          if (pending.arrays > 9 + Math.ceil(bytes / 65_536) + 2 * big) expect.unreachable(`${pending.arrays} arrays for ${bytes} bytes`);
        }
        expect(pending.bytes).toBe(bytes);
        const tail = Uint8Array.of(9, 9);
        expect(sameBytes(pending.take(tail), concatBytes(...pieces, tail))).toBe(true);
        expect(pending.bytes).toBe(0);
        expect(pending.arrays).toBe(0);
      }),
      { seed: SEED, numRuns: 60 },
    );
  });

  it('3,000 one-byte pieces are held in 4 arrays', () => {
    const pending = new PendingLine();
    for (let i = 0; i < 3000; i++) pending.append(Uint8Array.of(i & 0xff));
    expect(pending.arrays).toBe(4); // 256 + 512 + 1024 + 2048 bytes of blocks
  });

  it('property: a restore point taken anywhere gives back the line as it was, however much was appended since', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 40_000 }), { maxLength: 12 }), fc.nat(), (sizes, at) => {
        const pending = new PendingLine();
        const pieces = sizes.map((size, i) => new Uint8Array(size).fill(i + 1));
        const cut = at % (pieces.length + 1);
        pieces.slice(0, cut).forEach((piece) => pending.append(piece));
        const restore = pending.mark();
        pieces.slice(cut).forEach((piece) => pending.append(piece));
        restore();
        pending.append(Uint8Array.of(7));
        restore();
        expect(sameBytes(pending.take(new Uint8Array(0)), concatBytes(...pieces.slice(0, cut)))).toBe(true);
      }),
      { seed: SEED, numRuns: 60 },
    );
  });

  it('a 20 KB line in 1-byte chunks reads like the same line in one chunk', async () => {
    const long = line(message(0, 'ş'.repeat(10_000)));
    const bytes = utf8(line(HEADER) + long);
    const pieces = Array.from(bytes, (byte) => Uint8Array.of(byte));
    expect(await readSessionLog(sourceOf('async generator', pieces) as AsyncIterable<Uint8Array>)).toEqual(parseSessionLog(bytes));
  });
});

/** A bucket holding one object "log" whose whole-object gets answer `body()` as the `body` stream, reporting the object's size. */
function streamingBucket(bytes: Uint8Array, body: () => ReadableStream<Uint8Array>, size = bytes.length): ObjectStoreBucket {
  return {
    async list() {
      return { objects: [{ key: 'log', size }], truncated: false };
    },
    async get(_key, options) {
      if (options?.range) {
        const { offset, length } = options.range;
        const part = bytes.slice(offset, offset + length);
        return { size, arrayBuffer: async () => part.buffer };
      }
      return { size, body: body(), arrayBuffer: async () => bytes.slice().buffer };
    },
  };
}

type ShortHow = 'whole get' | 'ranged gets' | 'arrayBuffer after ranged header reads' | 'stream after ranged header reads';

/**
 * A bucket of one object "log" whose gets answer at most `cut` of its bytes (a connection that
 * drops), reporting the whole size: every get (`whole get`, `ranged gets`), or only whole-object
 * gets, the ranged header reads being answered in full.
 */
function shortBucket(bytes: Uint8Array, cut: number, how: ShortHow): ObjectStoreBucket {
  const short = bytes.slice(0, cut);
  return {
    async list() {
      return { objects: [{ key: 'log', size: bytes.length }], truncated: false };
    },
    async get(_key, options): Promise<ObjectStoreObjectBody> {
      if (options?.range) {
        const { offset, length } = options.range;
        const part = (how === 'ranged gets' ? short : bytes).slice(offset, offset + length);
        return { size: bytes.length, arrayBuffer: async () => part.buffer };
      }
      const answer: ObjectStoreObjectBody = { size: bytes.length, arrayBuffer: async () => short.slice().buffer };
      if (how !== 'stream after ranged header reads') return answer;
      return { ...answer, body: sourceOf('ReadableStream', split(short, [cut >> 1])) as ReadableStream<Uint8Array> };
    },
  };
}

/**
 * A bucket of one object "log" whose ranged gets answer in full and whose whole-object gets answer
 * its first `cut` bytes (as `arrayBuffer()`, or also as a `body` stream); the object's size is
 * reported by the listing, by each get, or both.
 */
function sizedShortBucket(bytes: Uint8Array, cut: number, known: 'listing' | 'get' | 'both', stream: boolean): ObjectStoreBucket {
  const size = known === 'listing' ? {} : { size: bytes.length };
  const short = bytes.slice(0, cut);
  return {
    list: async () => ({ objects: [{ key: 'log', ...(known !== 'get' && { size: bytes.length }) }], truncated: false }),
    async get(_key, options): Promise<ObjectStoreObjectBody> {
      if (options?.range) {
        const { offset, length } = options.range;
        const part = bytes.slice(offset, offset + length);
        return { ...size, arrayBuffer: async () => part.buffer };
      }
      const answer: ObjectStoreObjectBody = { ...size, arrayBuffer: async () => short.slice().buffer };
      return stream ? { ...answer, body: sourceOf('ReadableStream', split(short, [cut >> 1])) as ReadableStream<Uint8Array> } : answer;
    },
  };
}

const SHORT_HOWS: ShortHow[] = ['whole get', 'ranged gets', 'arrayBuffer after ranged header reads', 'stream after ranged header reads'];

describe('a short read is a failure, not a torn log (SPEC §11.2.4)', () => {
  it('property: an object body that ends before the object’s size is READ_FAILED "short read: N of M bytes" — listings, whole reads and title rows alike; nothing partial', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...Object.keys(BIG_LOGS)), fc.nat(), fc.constantFrom(...SHORT_HOWS), async (name, at, how) => {
        const bytes = BIG_LOGS[name]!;
        const cut = at % bytes.length;
        const store = createObjectStoreSessionQuery(shortBucket(bytes, cut, how), { rangeReads: how !== 'whole get' });
        if (how === 'whole get' || how === 'ranged gets') {
          // The listing's own gets are short: the listing fails (unless the header came whole before the cut).
          const listed = await store.listSessions().then(
            (rows) => rows,
            (error: unknown) => error,
          );
          if (Array.isArray(listed)) {
            expect(how).toBe('ranged gets');
            expect(cut).toBeGreaterThanOrEqual(4096);
          } else {
            expect(listed).toMatchObject({ code: 'SESSION_REFERENCE_READ_FAILED', message: expect.stringMatching(/^object "log": get\("log".*\): short read: \d+ of \d+ bytes$/) });
          }
          return;
        }
        expect((await store.listSessions()).map((row) => row.header.id)).toEqual(['strict']);
        const error = await expectRejectCode(store.readSurface('strict'), 'SESSION_REFERENCE_READ_FAILED');
        expect(error.message).toContain(`short read: ${cut} of ${bytes.length} bytes`);
        const [row] = await store.readTitleSnapshots(['strict']);
        expect(row).toMatchObject({ status: 'rejected', reason: { code: 'SESSION_REFERENCE_READ_FAILED' } });
      }),
      { seed: SEED, numRuns: 80 },
    );
  });

  it('property: a ranged header read shorter than asked of an object of known size is READ_FAILED naming the range', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 60 }), async (cut) => {
        const bytes = LOGS.plain!;
        const error = await expectRejectCode(createObjectStoreSessionQuery(shortBucket(bytes, cut, 'ranged gets')).listSessions(), 'SESSION_REFERENCE_READ_FAILED');
        expect(error.message).toBe(`object "log": get("log", { range: { offset: 0, length: ${bytes.length} } }): short read: ${cut} of ${bytes.length} bytes`);
      }),
      { seed: SEED, numRuns: 30 },
    );
  });

  it('a body stream longer than its size is READ_FAILED too ("long read"); a size that changes between ranged gets is READ_FAILED', async () => {
    const bytes = BIG_LOGS.plain!;
    const longer = concatBytes(bytes, utf8(line(message(9, 'extra'))));
    const long = streamingBucket(bytes, () => sourceOf('ReadableStream', [longer]) as ReadableStream<Uint8Array>);
    const error = await expectRejectCode(createObjectStoreSessionQuery(long).readSurface('strict'), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.message).toContain(`long read: ${longer.length} of ${bytes.length} bytes`);
    // A header over 4 KiB needs two ranged gets; the object is replaced in between.
    const header = utf8(line({ ...HEADER, note: 'x'.repeat(6000) }));
    let gets = 0;
    const changing: ObjectStoreBucket = {
      list: async () => ({ objects: [{ key: 'log' }], truncated: false }),
      async get(_key, options) {
        const size = gets++ === 0 ? header.length : header.length + 10;
        const { offset, length } = options!.range!;
        const part = header.slice(offset, offset + length);
        return { size, arrayBuffer: async () => part.buffer };
      },
    };
    const changed = await expectRejectCode(createObjectStoreSessionQuery(changing).listSessions(), 'SESSION_REFERENCE_READ_FAILED');
    expect(changed.message).toContain('changed while it was being read');
  });

  it('property: a short body is READ_FAILED whoever knows the size — the listing, the get, or both — with ranges or without, as arrayBuffer or stream', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...Object.keys(BIG_LOGS)),
        fc.nat(),
        fc.constantFrom('listing', 'get', 'both'),
        fc.boolean(),
        fc.boolean(),
        async (name, at, known, rangeReads, stream) => {
          const bytes = BIG_LOGS[name]!;
          const cut = at % bytes.length;
          const store = createObjectStoreSessionQuery(sizedShortBucket(bytes, cut, known, stream), { rangeReads });
          const short = `short read: ${cut} of ${bytes.length} bytes`;
          if (!rangeReads) {
            // The listing's header read fetches the whole object, and finds it short.
            const error = await expectRejectCode(store.listSessions(), 'SESSION_REFERENCE_READ_FAILED');
            expect(error.message).toBe(`object "log": get("log"): ${short}`);
            return;
          }
          expect((await store.listSessions()).map((row) => row.header.id)).toEqual(['strict']);
          const error = await expectRejectCode(store.readSurface('strict'), 'SESSION_REFERENCE_READ_FAILED');
          expect(error.message).toMatch(/^object "log": /);
          expect(error.message).toContain(short);
          const [row] = await store.readTitleSnapshots(['strict']);
          expect(row).toMatchObject({ status: 'rejected', reason: { code: 'SESSION_REFERENCE_READ_FAILED' } });
        },
      ),
      { seed: SEED, numRuns: 80 },
    );
  });

  it('the probe: a listing that alone knows the size, a whole get answering 40 bytes short, is READ_FAILED, not a snapshot of fewer events', async () => {
    const bytes = BIG_LOGS.plain!;
    for (const rangeReads of [true, false]) {
      const store = createObjectStoreSessionQuery(sizedShortBucket(bytes, bytes.length - 40, 'listing', false), { rangeReads });
      const error = await expectRejectCode(rangeReads ? store.readSurface('strict') : store.listSessions(), 'SESSION_REFERENCE_READ_FAILED');
      expect(error.message).toBe(`object "log": get("log"): short read: ${bytes.length - 40} of ${bytes.length} bytes`);
    }
  });

  it('a ranged get answering more than it asked for is a "long read" against the length asked', async () => {
    const bytes = BIG_LOGS.plain!;
    for (const known of ['listing', 'get', 'both'] as const) {
      const bucket: ObjectStoreBucket = {
        list: async () => ({ objects: [{ key: 'log', ...(known !== 'get' && { size: bytes.length }) }], truncated: false }),
        async get(_key, options) {
          const { offset, length } = options!.range!;
          const part = bytes.slice(offset, offset + length + 10);
          return { ...(known !== 'listing' && { size: bytes.length }), arrayBuffer: async () => part.buffer };
        },
      };
      const error = await expectRejectCode(createObjectStoreSessionQuery(bucket).listSessions(), 'SESSION_REFERENCE_READ_FAILED');
      expect(error.message).toBe('object "log": get("log", { range: { offset: 0, length: 4096 } }): long read: 4106 of 4096 bytes');
    }
  });

  it('a SizedSource of any shape: fewer bytes fail, the exact size reads, a read that stops early is not held to it', async () => {
    const bytes = LOGS.plain!;
    for (const shape of ['ReadableStream', 'async generator'] as const) {
      const pieces = split(bytes, [10, 40]);
      expect(await readSessionTitle(new SizedSource(sourceOf(shape, pieces) as ReadableStream<Uint8Array>, bytes.length), {})).toEqual(await readSessionTitle(bytes, {}));
      const error = await expectRejectCode(readSessionTitle(new SizedSource(sourceOf(shape, pieces) as ReadableStream<Uint8Array>, bytes.length + 5), {}), 'SESSION_REFERENCE_READ_FAILED');
      expect(error.message).toBe(`short read: ${bytes.length} of ${bytes.length + 5} bytes`);
    }
  });
});

/** An async iterable that is always ready: `next()` resolves at once, forever, with `item()`. */
function alwaysReady(item: (i: number) => Uint8Array): AsyncIterable<Uint8Array> {
  return {
    [Symbol.asyncIterator]() {
      let i = 0;
      return { next: () => Promise.resolve({ done: false, value: item(i++) }) };
    },
  };
}

/** A bucket whose list() answers at once, forever, with a page of one object and a new cursor. */
function endlessBucket(cursorOf: (page: number) => string = (page) => `c${page}`): { bucket: ObjectStoreBucket; pages: () => number } {
  let pages = 0;
  return {
    pages: () => pages,
    bucket: {
      list: () => Promise.resolve({ objects: [{ key: `k${pages}`, size: 1 }], truncated: true, cursor: cursorOf(++pages) }),
      get: () => Promise.resolve(null),
    },
  };
}

/** Aborts `controller` from a timer: it can only run if the read yields to the event loop. */
function abortSoon(controller: AbortController): void {
  setTimeout(() => controller.abort(new Error('timer')), 5);
}

describe('always-ready sources cannot hang the call (SPEC §10.3)', () => {
  it('an abort timer runs during an always-ready endless header line in 1-byte chunks: CANCELLED, the source closed', async () => {
    const controller = new AbortController();
    abortSoon(controller);
    const head = utf8('{"type":"session","note":"');
    const read = readSessionLog(alwaysReady((i) => (i < head.length ? head.subarray(i, i + 1) : Uint8Array.of(0x61))), { signal: controller.signal, maxLogBytes: 2 ** 40 });
    const error = await expectRejectCode(read, 'SESSION_REFERENCE_CANCELLED');
    expect((error.cause as Error).message).toBe('timer');
  });

  it('an abort timer runs during an always-ready endless log of 64 KiB lines', async () => {
    const controller = new AbortController();
    abortSoon(controller);
    const head = utf8(line(HEADER));
    const body = utf8(line(message(1, 'x'.repeat(65_000))));
    await expectRejectCode(readSessionLog(alwaysReady((i) => (i === 0 ? head : body)), { signal: controller.signal, maxLogBytes: 2 ** 50 }), 'SESSION_REFERENCE_CANCELLED');
  });

  it('AbortSignal.timeout fires during an always-ready endless log of 64 KiB lines (the turn lets its timer run)', async () => {
    const signal = AbortSignal.timeout(5);
    const head = utf8(line(HEADER));
    const body = utf8(line(message(1, 'x'.repeat(65_000))));
    const error = await expectRejectCode(readSessionLog(alwaysReady((i) => (i === 0 ? head : body)), { signal, maxLogBytes: 2 ** 50 }), 'SESSION_REFERENCE_CANCELLED');
    expect((error.cause as Error).name).toBe('TimeoutError');
  });

  it('an abort timer runs while a bucket answers list() at once with a new cursor forever', async () => {
    const controller = new AbortController();
    abortSoon(controller);
    const { bucket, pages } = endlessBucket();
    await expectRejectCode(createObjectStoreSessionQuery(bucket).listSessions(controller.signal), 'SESSION_REFERENCE_CANCELLED');
    expect(pages()).toBeLessThan(MAX_LIST_PAGES);
  });

  it(`without a signal, the listing stops with READ_FAILED after ${MAX_LIST_PAGES} pages`, async () => {
    const { bucket, pages } = endlessBucket();
    const error = await expectRejectCode(createObjectStoreSessionQuery(bucket).listSessions(), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.message).toContain(`${MAX_LIST_PAGES} pages`);
    expect(pages()).toBe(MAX_LIST_PAGES);
  });

  it('property: a cursor seen before (a cycle of any length) stops the listing with READ_FAILED at the repeat', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 50 }), async (cycle, lead) => {
        // Cursors c1 … c<lead>, then a cycle of `cycle` cursors.
        const { bucket, pages } = endlessBucket((page) => (page <= lead ? `c${page}` : `r${(page - lead) % cycle}`));
        const error = await expectRejectCode(createObjectStoreSessionQuery(bucket).listSessions(), 'SESSION_REFERENCE_READ_FAILED');
        expect(error.message).toContain('cursor of truncated page');
        expect(pages()).toBe(lead + cycle + 1);
      }),
      { seed: SEED, numRuns: 40 },
    );
  });
});

describe('a list() answer is host data (SPEC §10.1): unreadable or malformed anywhere is READ_FAILED, never a raw error or a hidden object', () => {
  const revoked = () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy;
  };
  const listing = (page: () => unknown): ObjectStoreBucket => ({
    list: async () => page() as Awaited<ReturnType<ObjectStoreBucket['list']>>,
    get: async () => ({ arrayBuffer: async () => LOGS.plain!.slice().buffer }),
  });

  it.each([
    ['a revoked page', () => revoked()],
    ['objects: a revoked proxy', () => ({ objects: revoked(), truncated: false })],
    ['objects: [a revoked proxy]', () => ({ objects: [revoked()], truncated: false })],
    ['an object whose key getter throws', () => ({ objects: [{ get key(): string { throw new TypeError('gone'); } }], truncated: false })],
    ['objects: a throwing-trap proxy of an array', () => ({ objects: new Proxy([{ key: 'log' }], { get() { throw new TypeError('trap'); } }), truncated: false })],
  ])('%s', async (_name, page) => {
    const error = await expectRejectCode(createObjectStoreSessionQuery(listing(page)).listSessions(), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.message).toMatch(/^object store list\(\) (answered|failed)/);
  });

  it.each([-5, 1.5, Number.NaN, Infinity, '12', null])('a listed size of %s is READ_FAILED naming the object, not an object left out', async (size) => {
    const error = await expectRejectCode(createObjectStoreSessionQuery(listing(() => ({ objects: [{ key: 'log', size }], truncated: false }))).listSessions(), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.message).toMatch(/^object store list\(\) object "log" size answered /);
  });

  it('a sparse objects array costs what it holds', async () => {
    const objects: Array<{ key: string }> = [];
    objects[2 ** 32 - 2] = { key: 'log' };
    expect((await createObjectStoreSessionQuery(listing(() => ({ objects, truncated: false }))).listSessions()).map((row) => row.header.id)).toEqual(['strict']);
  });
});
