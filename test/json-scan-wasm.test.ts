/**
 * The WebAssembly row scan (src/store/json-scan.wat through src/store/chunk-scanner.ts, SPEC §11.2.6)
 * gives exactly the JavaScript scan's result (src/store/json-scan.ts) — the same rows accepted, the
 * same value ranges, the same count of `type` — on generated rows, hostile bytes (bad UTF-8 of every
 * class, truncations, escapes at every offset, controls) and the real logs, for lines alone and
 * for lines cut from one chunk (the window the scanner copies into the module's memory, where its
 * newline search finds what `indexOf` finds); and where
 * it cannot run (workerd), the classifier gets the JavaScript scan's result all the same.
 */
import fc from 'fast-check';
import { describe, expect, inject, it } from 'vitest';
import realV3 from '../samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl?raw';
import realV2 from '../samples/store/ledger-service/session-91f4b0c6-2e7d-4a83-bd15-6c0e9a4f27d8/session.v2.jsonl?raw';
import realV0 from '../samples/store/global/session-e5f1c2a0/session.jsonl?raw';
import { scanRow, type ScannedRow } from '../src/store/json-scan.js';
import { ChunkScanner, MAX_WASM_LINE_BYTES, wasmScanRuns } from '../src/store/chunk-scanner.js';
import { concatBytes } from './fixtures/base64.js';

const encoder = new TextEncoder();

/** A scan's result as plain data (the scans reuse their objects); a value's end only where it is present. */
function plain(scanned: ScannedRow | undefined) {
  if (scanned === undefined) return undefined;
  const starts = [...scanned.starts];
  return { starts, ends: [...scanned.ends].map((end, k) => (starts[k]! < 0 ? -1 : end)), types: scanned.types };
}

/** WebAssembly runs here: then it must vouch for every row the JavaScript scan accepts (none here is nested deeper than it takes). */
const RUNS = inject('expectedRuntime') !== 'workerd';

/** Checks one line as the scanner sees it (`scanner`, fed the line's chunk if any) against the JavaScript scan. */
function check(scanner: ChunkScanner, bytes: Uint8Array, wrong: string[]): void {
  const expected = plain(scanRow(bytes));
  const vouched = plain(scanner.vouch(bytes));
  const label = () => JSON.stringify(new TextDecoder().decode(bytes).slice(0, 200));
  if (RUNS ? JSON.stringify(vouched) !== JSON.stringify(expected) : vouched !== undefined) wrong.push(`vouch ${label()}: ${JSON.stringify(vouched)} against ${JSON.stringify(expected)}`);
  if (JSON.stringify(plain(scanner.scan(bytes))) !== JSON.stringify(expected)) wrong.push(`scan ${label()}`);
}

/** Checks `rows`, each followed by a LF, as lines cut from one chunk at `offset` in its buffer (the splitter's views). */
function checkChunk(rows: readonly Uint8Array[], offset: number, wrong: string[]): void {
  const parts: Uint8Array[] = [new Uint8Array(offset)];
  for (const row of rows) parts.push(row, Uint8Array.of(0x0a));
  const chunk = concatBytes(...parts).subarray(offset);
  const scanner = new ChunkScanner();
  scanner.setChunk(chunk);
  let start = 0;
  while (start < chunk.length) {
    // As the splitter does: the newline first (a damaged row may hold a LF of its own), then the line.
    const end = scanner.newline(start);
    if (end !== chunk.indexOf(0x0a, start)) wrong.push(`newline from ${start}: ${end} against ${chunk.indexOf(0x0a, start)}`);
    check(scanner, chunk.subarray(start, end), wrong);
    start = end + 1;
  }
  if (scanner.newline(start) !== -1) wrong.push(`a newline after the last line`);
  scanner.setChunk(undefined);
}

const BAD_UTF8 = [[0xff], [0xfe], [0xc0, 0xaf], [0xc1, 0xbf], [0xe0, 0x80, 0xaf], [0xe0, 0x9f, 0xbf], [0xed, 0xa0, 0x80], [0xed, 0xbf, 0xbf], [0xf0, 0x80, 0x80, 0x80], [0xf0, 0x8f, 0xbf, 0xbf], [0xf4, 0x90, 0x80, 0x80], [0xf5, 0x80, 0x80, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0xc3], [0xe2, 0x82], [0xf0, 0x9f, 0x98], [0x80], [0xbf], [0xc3, 0x28], [0xe2, 0x28, 0xa1], [0xf0, 0x28, 0x8c, 0xbc]];
const GOOD_UTF8 = [[0xc2, 0x80], [0xdf, 0xbf], [0xe0, 0xa0, 0x80], [0xe2, 0x82, 0xac], [0xed, 0x9f, 0xbf], [0xee, 0x80, 0x80], [0xef, 0xbf, 0xbf], [0xf0, 0x90, 0x80, 0x80], [0xf0, 0x9f, 0x98, 0x80], [0xf4, 0x8f, 0xbf, 0xbf]];
/** Bytes that end or break a run of plain string bytes, and pieces of the grammar. */
const BREAKERS = [
  ...BAD_UTF8,
  ...GOOD_UTF8,
  ...['"', '\\', '\\"', '\\\\', '\\/', '\\b', '\\f', '\\n', '\\r', '\\t', '\\u0041', '\\uD83D\\uDE00', '\\u12G4', '\\u00', '\\x', '\\', '{', '}', '[', ']', ':', ',', ' ', '\t', '\r', 'true', 'tru', 'false', 'fals', 'null', 'nul', '-', '0', '01', '1.', '1e', '-0.5e+7', '"type":', '"seq":', '"time":', '"surfaceOp":', '"t\\u0079pe":'].map((text) => [...encoder.encode(text)]),
  [0x00],
  [0x01],
  [0x0a],
  [0x1f],
  [0x7f],
];

/** A JSON value of any shape, as text, with whitespace between its tokens at times. */
const jsonText = fc.jsonValue({ maxDepth: 4 }).map((value) => JSON.stringify(value));
const spaced = fc.tuple(jsonText, fc.constantFrom('', ' ', '\t', '\r', ' \t ')).map(([text, space]) => (space === '' ? text : text.replace(/([,:[\]{}])/g, `${space}$1${space}`)));

/** A row as dsh writes one, with the keys a scan reports in any order, repeated at times, and values of any shape. */
const row = fc
  .tuple(
    fc.constantFrom('tool/result', 'tool/call', 'request', 'text-chunks', 'tööl', 'a"b'),
    fc.array(fc.tuple(fc.constantFrom('type', 'seq', 'time', 'surfaceOp', 'data', 'x', 's', 'surfaceO', 'tim', 'seqq', 'ü'), spaced), { maxLength: 6 }),
  )
  .map(([type, entries]) => `{"type":${JSON.stringify(type)}${entries.map(([key, value]) => `,${JSON.stringify(key)}:${value}`).join('')}}`);

/** A row, then damaged: bytes put in, taken out or changed at any offset, or cut short. */
const edit = fc.oneof(
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), bytes: fc.constantFrom(...BREAKERS) }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), byte: fc.nat({ max: 255 }) }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat() }),
);
type Edit = typeof edit extends fc.Arbitrary<infer T> ? T : never;

function damaged(text: string, edits: readonly Edit[]): Uint8Array {
  let bytes = [...encoder.encode(text)];
  for (const e of edits) {
    const at = bytes.length === 0 ? 0 : e.at % (bytes.length + 1);
    if (e.kind === 'insert') bytes.splice(at, 0, ...e.bytes);
    else if (e.kind === 'delete') bytes.splice(at, 1);
    else if (e.kind === 'set') bytes[Math.min(at, bytes.length - 1)] = e.byte;
    else bytes = bytes.slice(0, at);
  }
  return Uint8Array.from(bytes);
}

/** The rows of the real logs, header lines included. */
const REAL_LINES = [realV3, realV2, realV0].flatMap((log) => log.split('\n').filter((line) => line.length > 0)).map((line) => encoder.encode(line));

describe('the WebAssembly row scan (SPEC §11.2.6)', () => {
  it('runs wherever WebAssembly may be compiled from bytes: not in workerd, where the JavaScript scan runs', () => {
    expect(wasmScanRuns()).toBe(RUNS);
  });

  it('the real logs: every line, alone and as lines of one chunk, scans as the JavaScript scan scans it', () => {
    const wrong: string[] = [];
    const scanner = new ChunkScanner();
    for (const line of REAL_LINES) check(scanner, line, wrong);
    for (let offset = 0; offset < 3; offset++) checkChunk(REAL_LINES, offset, wrong);
    expect(wrong).toEqual([]);
    expect(REAL_LINES.filter((line) => scanRow(line) !== undefined).length).toBeGreaterThan(100);
  });

  it('a breaking byte sequence at every offset of a string, every alignment and every cut of the row', () => {
    const wrong: string[] = [];
    const scanner = new ChunkScanner();
    const plainText = 'abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ'; // longer than two vectors
    for (const breaker of BREAKERS) {
      for (let before = 0; before <= 34; before += before < 18 ? 1 : 8) {
        const value = concatBytes(encoder.encode(plainText.slice(0, before)), Uint8Array.from(breaker), encoder.encode(plainText.slice(0, 20)));
        const line = concatBytes(encoder.encode('{"type":"tool/result","data":"'), value, encoder.encode('","seq":7}'));
        for (let cut = 0; cut <= 12; cut++) check(scanner, line.subarray(0, line.length - cut), wrong);
        checkChunk([line, line.subarray(0, line.length - 3), line], before % 16, wrong);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('property: generated rows of every JSON shape, and the same rows damaged, alone and as lines of one chunk', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(row, fc.array(edit, { maxLength: 3 })), { minLength: 1, maxLength: 8 }), fc.nat({ max: 15 }), (rows, offset) => {
        const lines = rows.map(([text, edits]) => damaged(text, edits));
        const wrong: string[] = [];
        const scanner = new ChunkScanner();
        for (const line of lines) check(scanner, line.includes(0x0a) ? line.subarray(0, line.indexOf(0x0a)) : line, wrong);
        checkChunk(lines, offset, wrong);
        expect(wrong).toEqual([]);
      }),
      { numRuns: 400, seed: 30_11 },
    );
  });

  it('a chunk larger than the window copied at once, and a chunk buffer refilled and fed again', () => {
    const wrong: string[] = [];
    const lines: Uint8Array[] = [];
    for (let i = 0; lines.length < 3000; i++) lines.push(encoder.encode(`{"type":"tool/result","seq":${i},"data":"${'x'.repeat(i % 300)}é${'y'.repeat(i % 7)}"}`));
    checkChunk(lines, 5, wrong);
    // Lines longer than the window (its newline search crosses windows; the scan copies the line whole).
    const long = (n: number, tail: string) => encoder.encode(`{"type":"tool/result","seq":1,"data":"${'z'.repeat(n)}${tail}"}`);
    checkChunk([lines[7]!, long(600_000, ''), lines[9]!, long(300_000, '\u0000'), long(262_100, '"x'), lines[11]!], 3, wrong);
    // The producer reuses one buffer: the scanner must not answer from what it copied before.
    const chunk = concatBytes(...lines.slice(0, 50).flatMap((line) => [line, Uint8Array.of(0x0a)]));
    const scanner = new ChunkScanner();
    for (let round = 0; round < 3; round++) {
      if (round > 0) chunk.set(encoder.encode(round === 1 ? '{"type":"tool/result","seq":"\u0001"}' : '{"type":"tool/result","seq":12345}'.padEnd(lines[0]!.length, ' ')));
      scanner.setChunk(chunk);
      check(scanner, chunk.subarray(0, lines[0]!.length), wrong);
      scanner.setChunk(undefined);
    }
    expect(wrong).toEqual([]);
  });

  it('nesting deeper than the module takes, and lines longer than it takes, go to the JavaScript scan, which accepts them', () => {
    const scanner = new ChunkScanner();
    const deep = encoder.encode(`{"type":"tool/result","data":${'['.repeat(5000)}${']'.repeat(5000)}}`);
    const long = encoder.encode(`{"type":"tool/result","seq":3,"data":"${'a'.repeat(MAX_WASM_LINE_BYTES)}"}`);
    for (const line of [deep, long]) {
      expect(scanner.vouch(line)).toBeUndefined();
      expect(plain(scanner.scan(line))).toEqual(plain(scanRow(line)));
      expect(scanRow(line)).toBeDefined();
    }
    // Just under the limit, the module takes it.
    const under = long.subarray(0, MAX_WASM_LINE_BYTES - 2);
    under.set(encoder.encode('"}'), under.length - 2);
    expect(plain(scanner.vouch(under))).toEqual(RUNS ? plain(scanRow(under)) : undefined);
  });
});
