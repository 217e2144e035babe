/**
 * Below the parse floor (SPEC §11.2.6): a read skips, by a validating scan of their bytes, the rows
 * whose data it never uses, and gets exactly what parsing every line gets — events, titles,
 * surfaces, and errors with their code, message and line number — on real and generated logs,
 * damaged at random, plain and as dsh's zstd frames, in chunks of any size.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import realV3 from '../samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl?raw';
import realV2 from '../samples/store/ledger-service/session-91f4b0c6-2e7d-4a83-bd15-6c0e9a4f27d8/session.v2.jsonl?raw';
import realV0 from '../samples/store/global/session-e5f1c2a0/session.jsonl?raw';
import { SessionReferenceError } from '../src/errors.js';
import { foldSurface } from '../src/surface.js';
import type { SessionEvent } from '../src/types.js';
import { dshType } from '../src/store/classify.js';
import { LogCollector, type KeepEvent } from '../src/store/collect.js';
import { scanRow } from '../src/store/json-scan.js';
import { collect } from '../src/store/pipeline.js';
import { readsProjected, surfaceEntry } from '../src/store/surface-read.js';
import { concatBytes } from './fixtures/base64.js';
import { storedFrame } from './fixtures/zstd-build.js';

const encoder = new TextEncoder();
const HEADER = '{"type":"session","version":3,"id":"skip-1","createdAt":1700000000000,"cwd":"/w"}';

/** Rows of the real logs (the header lines left out). */
const REAL_ROWS = [realV3, realV2, realV0].flatMap((log) => log.split('\n').slice(1).filter((line) => line.length > 0));

/** Rows that test the scan's edges: each either reads like the full parse or is read in full. */
const EDGE_ROWS = [
  '{"type":"tool/result","seq":1}{"x":1}',
  '{"type":"tool/result","seq":2,"type":"user/message","data":{"id":"u","role":"user","content":[{"type":"text","text":"spoofed"}],"source":{"kind":"user"}}}',
  '{"type":"tool/call","seq":3,"data":{"type":"session/title","title":"not a title"}}',
  '{"type":"tool/call","seq":4,"type":"session/title","data":{"title":"a title after all"}}',
  '{"type":"tool/result","s\\u0065q":5,"data":{}}',
  '{"type":"tool/result","seq":"6"}',
  '{"type":"tool/result","seq":1e400}',
  '{"type":"tool/result","seq":-0,"time":-1.5e-3}',
  '{"type":"tool/result","seq":8,"surfaceOp":{"op":"replace","start":1,"end":3},"time":9}',
  '{"type":"tool/call","seq":9,"surfaceOp":"append","data":{"s":"\\"type\\":\\"user/message\\""}}',
  '{"type":"tool/result" ,"seq":10 , "data" : [ 1 , {"a":[]} , {} ] }\r',
  '{"type":"tool/result","seq":11,"data":"\\ud800 lone escaped surrogate"}',
  '{"type":"tool/result","seq":12,"data":"tab\there"}',
  '{"type":"tool/result","seq":13,"data":[01]}',
  '{"type":"tool/result","seq":14,"data":[1,]}',
  '{"type":"tool/result","seq":15,"data":{"a":1,}}',
  '{"type":"tool/result","seq":16,"data":tru}',
  '{"type":"tool/result","seq":17,"data":"\\x"}',
  '{"type":"tool/result","seq":18,"data":"\\u12G4"}',
  '{"type":"text-chunks","seq":19,"data":{"t":"packed"}}',
  '{"type":"assistant/reasoning-chunks","seq":20,"data":"…"}',
  '{"type":"tool/result","seq":21,"seq":22,"time":1,"time":"late"}',
  '{"type":"tool/result","seq":23,"data":' + '['.repeat(3000) + ']'.repeat(3000) + '}',
  '{"type":"tool/result","seq":24,"data":' + '['.repeat(50) + ']'.repeat(49) + '}',
  '{"type":"tool/result","seq":25,"data":"ok"} ',
  '{"type":"tool/result","seq":26,"__proto__":{"seq":1}}',
  '{"type":"tool\\/result","seq":27}',
  '{"type":"tool/result"}',
  '{"type":"tool/result","seq":28,"data":1.}',
  '{"type":"tool/result","seq":29,"data":-}',
  '{"type":"tool/result","seq":30,"data":2e}',
  '{"type":"session/title","seq":31,"time":3,"data":{"title":"the title"}}',
  '   ',
  '',
  '[1,2]',
  '"type"',
];

/** Byte damage: bad UTF-8 of every kind, put inside a string value of a row. */
const BAD_UTF8 = [[0xff], [0xc0, 0xaf], [0xe0, 0x80, 0xaf], [0xed, 0xa0, 0x80], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xc3], [0xe2, 0x82], [0x80]];
/** Valid multi-byte UTF-8, at every length and boundary. */
const GOOD_UTF8 = [[0xc2, 0x80], [0xdf, 0xbf], [0xe0, 0xa0, 0x80], [0xed, 0x9f, 0xbf], [0xee, 0x80, 0x80], [0xf0, 0x90, 0x80, 0x80], [0xf4, 0x8f, 0xbf, 0xbf]];

type Damage = { kind: 'cut'; at: number } | { kind: 'bytes'; at: number; bytes: number[] } | { kind: 'control'; at: number };

/** A line's bytes with `damage` applied (at a position inside it, taken modulo its length). */
function damaged(line: Uint8Array, damage: Damage | null): Uint8Array {
  if (damage === null || line.length === 0) return line;
  const at = damage.at % line.length;
  if (damage.kind === 'cut') return line.subarray(0, at);
  if (damage.kind === 'control') return concatBytes(line.subarray(0, at), Uint8Array.of(0x01), line.subarray(at));
  return concatBytes(line.subarray(0, at), Uint8Array.from(damage.bytes), line.subarray(at));
}

const damageArb: fc.Arbitrary<Damage | null> = fc.oneof(
  { weight: 12, arbitrary: fc.constant(null) },
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('bytes' as const), at: fc.nat(), bytes: fc.constantFrom(...BAD_UTF8, ...GOOD_UTF8) }),
  fc.record({ kind: fc.constant('control' as const), at: fc.nat() }),
);

const rowArb = fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...REAL_ROWS) }, fc.constantFrom(...EDGE_ROWS));

/** A log: the header, rows (some damaged), ended by `\n` or torn. */
const logArb = fc.record({ rows: fc.array(fc.tuple(rowArb, damageArb), { minLength: 0, maxLength: 40 }), torn: fc.boolean() }).map(({ rows, torn }) => {
  const lines = [encoder.encode(HEADER), ...rows.map(([row, damage]) => damaged(encoder.encode(row), damage))];
  const parts: Uint8Array[] = [];
  lines.forEach((line, i) => parts.push(line, ...(i < lines.length - 1 || !torn ? [Uint8Array.of(0x0a)] : [])));
  return concatBytes(...parts);
});

/** dsh's layout: the header line as one frame, then one frame per few lines (raw blocks: no compressor needed). */
function dshFrames(bytes: Uint8Array, perFrame: number): Uint8Array {
  const frames: Uint8Array[] = [];
  let start = 0;
  let lines = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x0a) continue;
    lines++;
    if (lines === 1 || lines % perFrame === 0) {
      frames.push(storedFrame(bytes.subarray(start, i + 1)));
      start = i + 1;
    }
  }
  if (start < bytes.length) frames.push(storedFrame(bytes.subarray(start)));
  return concatBytes(...frames);
}

/** `bytes` as an async iterable of chunks of `size` bytes. */
async function* chunked(bytes: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < bytes.length; at += size) yield bytes.slice(at, at + size);
}

/** The three reads that build something, as a collector for each: whole log, title, surface. */
const READS = {
  whole: { keep: ((event) => event) as KeepEvent, compact: undefined, reads: undefined },
  title: { keep: undefined as KeepEvent, compact: undefined, reads: () => false },
  surface: { keep: surfaceEntry as KeepEvent, compact: foldSurface, reads: readsProjected },
};
type ReadName = keyof typeof READS;

/** What a read gives: its header, events, title and last seq, or its error's code and message. */
async function outcome(source: Uint8Array | AsyncIterable<Uint8Array>, read: ReadName, full: boolean): Promise<unknown> {
  const { keep, compact, reads } = READS[read];
  // The oracle reads the data of every row: every line decoded and parsed, as before §11.2.6.
  const collector = new LogCollector(keep, compact, undefined, full ? () => true : reads);
  try {
    await collect(source, collector);
    const events = read === 'surface' ? foldSurface(collector.events) : collector.events;
    return { header: collector.finish(), events, title: collector.title, lastSeq: collector.lastSeq };
  } catch (error) {
    if (!(error instanceof SessionReferenceError)) throw error;
    return { code: error.code, message: error.message };
  }
}

/** What `JSON.parse` says of `bytes` (fatal UTF-8 decode first): an object, or refused. */
function parsesAsObject(bytes: Uint8Array): boolean {
  try {
    const value: unknown = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

/**
 * `row` placed at byte `offset` of a larger buffer, followed by `"}` bytes that are not the row's
 * (a scan reading past the row's end would see a string or object end there), as a view.
 */
function placed(row: Uint8Array, offset: number): Uint8Array {
  const buffer = new Uint8Array(offset + row.length + 8).fill(0x22);
  buffer.set(row, offset);
  for (let i = offset + row.length + 1; i < buffer.length; i += 2) buffer[i] = 0x7d;
  return buffer.subarray(offset, offset + row.length);
}

/** Bytes the 4-byte string scan must treat one by one: quote, backslash, escapes, controls, DEL, UTF-8 of each length, bad UTF-8. */
const WORD_BREAKERS = [[0x22], [0x5c], [0x5c, 0x22], [0x5c, 0x6e], [0x5c, 0x5c], [0x5c, 0x75, 0x30, 0x30, 0x34, 0x31], [0x5c, 0x75, 0x30], [0x00], [0x01], [0x1f], [0x0d], [0x7f], [0x20], [0x7e], [0x21], [0x23], [0x5b], [0x5d], ...GOOD_UTF8, ...BAD_UTF8];

describe('below the parse floor (SPEC §11.2.6)', () => {
  it('the 4-byte string scan: a quote, backslash, control or non-ASCII byte at each position of a word, at every alignment, refuses exactly what JSON.parse refuses', () => {
    const wrong: string[] = [];
    for (const breaker of WORD_BREAKERS) {
      for (let before = 0; before <= 9; before++) {
        for (let after = 0; after <= 9; after++) {
          const value = [...'abcdefghi'.slice(0, before)].map((c) => c.charCodeAt(0)).concat(breaker, [...'jklmnopqr'.slice(0, after)].map((c) => c.charCodeAt(0)));
          const row = concatBytes(encoder.encode('{"type":"tool/result","data":"'), Uint8Array.from(value), encoder.encode('"}'));
          for (let offset = 0; offset < 4; offset++) {
            // The row's end at every alignment too: cut after each of its last bytes.
            for (let cut = 0; cut <= 4; cut++) {
              const bytes = placed(row.subarray(0, row.length - cut), offset);
              if ((scanRow(bytes) !== undefined) !== parsesAsObject(bytes)) wrong.push(`${JSON.stringify(breaker)} ${before}+${after} at ${offset}, cut ${cut}`);
            }
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it('property: long strings of random bytes, at random alignments: the scan refuses exactly what JSON.parse refuses', () => {
    const piece = fc.oneof(
      { weight: 6, arbitrary: fc.string({ minLength: 0, maxLength: 40 }).map((text) => [...encoder.encode(text)]) },
      fc.constantFrom(...WORD_BREAKERS),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), fc.nat({ max: 7 }), (pieces, offset) => {
        const row = concatBytes(encoder.encode('{"type":"tool/result","data":["'), Uint8Array.from(pieces.flat()), encoder.encode('"]}'));
        const bytes = placed(row, offset);
        expect(scanRow(bytes) !== undefined).toBe(parsesAsObject(bytes));
      }),
      { numRuns: 2000, seed: 30_2 },
    );
  });

  it('recognises dsh rows by their first bytes only', () => {
    const type = (line: string) => dshType(encoder.encode(line));
    expect(type('{"type":"tool/result","seq":1}')).toBe('tool/result');
    expect(type('{ "type":"tool/result"}')).toBeUndefined();
    expect(type('{"type":"tool\\/result"}')).toBeUndefined();
    expect(type('{"type":"t\u00f6ol"}')).toBeUndefined();
    expect(type('{"type":"tool/result')).toBeUndefined();
    // "Aa" and "BB" share a hash of their bytes: each is still read as itself, again and again.
    for (let i = 0; i < 3; i++) {
      expect(type('{"type":"Aa","seq":1}')).toBe('Aa');
      expect(type('{"type":"BB","seq":1}')).toBe('BB');
    }
    expect(type('{"type":"tool/result","seq":2}')).toBe('tool/result');
    expect(scanRow(encoder.encode('{"type":"tool/result","seq":1}{"x":1}'))).toBeUndefined();
    expect(scanRow(encoder.encode('{"type":"a","type":"b"}'))?.types).toBe(2);
  });

  it('a surface read never parses a tool row: it gets type, seq, time and surfaceOp only', async () => {
    const seen: SessionEvent[] = [];
    const keep: KeepEvent = (event) => (seen.push(event), surfaceEntry(event));
    const collector = new LogCollector(keep, foldSurface, undefined, readsProjected);
    await collect(encoder.encode(realV3), collector);
    const tools = seen.filter((event) => event.type.startsWith('tool/'));
    expect(tools.length).toBeGreaterThan(20);
    for (const event of tools) expect(['seq', 'surfaceOp', 'time', 'type']).toEqual(expect.arrayContaining(Object.keys(event)));
  });

  it('the real logs read as parsing every line reads them, whole, title and surface', async () => {
    for (const log of [realV3, realV2, realV0]) {
      const bytes = encoder.encode(log);
      for (const read of Object.keys(READS) as ReadName[]) {
        expect(await outcome(bytes, read, false)).toEqual(await outcome(bytes, read, true));
      }
    }
  });

  it('property: generated and real logs, damaged at random, plain or zstd, in any chunks: results and errors equal the full parse', async () => {
    await fc.assert(
      fc.asyncProperty(
        logArb,
        fc.constantFrom<ReadName>('whole', 'title', 'surface'),
        fc.constantFrom('plain', 'zstd'),
        fc.integer({ min: 1, max: 4096 }),
        fc.integer({ min: 1, max: 9 }),
        async (bytes, read, form, chunk, perFrame) => {
          const expected = await outcome(bytes, read, true);
          const input = form === 'zstd' ? dshFrames(bytes, perFrame) : bytes;
          expect(await outcome(input, read, false)).toEqual(expected);
          expect(await outcome(chunked(input, chunk), read, false)).toEqual(expected);
        },
      ),
      { numRuns: 300, seed: 30_1 },
    );
  }, 120_000);
});
