/**
 * `npm run bench -- --only store-real`: prepare below the parse floor (SPEC §11.2.6, issue 30 item 1).
 *
 * A real dsh log (the real v3 log in samples/, the one of ../shared/fixtures) repeated to about
 * 100 MiB with its seqs renumbered, so it has the line mix of real logs (tool output, request
 * headers, packed chunk rows, few messages), plain and in dsh's zstd layout (one frame for the
 * header line, then one per write batch of 8 lines). `prepare` through the Node store and the object
 * store against the floor of reading the log whole: read the same bytes in the same chunks,
 * (decompress them with libzstd, the decoder the stores run,) split on `\n`, decode and
 * `JSON.parse` every line. Targets: 0.5× the floor plain, 0.7× with libzstd for zstd.
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createSessionReferences } from '../src/index.js';
import { createDshStoreSessionQuery } from '../src/node/index.js';
import { createObjectStoreSessionQuery } from '../src/store/index.js';
import { loadLibZstd } from '../src/store/libzstd.js';
import { ZstdStream } from '../src/store/zstd.js';
import { measure } from './harness.js';
import { benchBucket, fileChunks, memoryChunks, type StoreBenchHooks } from './store.js';
import { compress } from './store-logs.js';

const MIB = 1 << 20;
const REAL_LOG = join(process.env.BENCH_DIR ?? 'bench', '..', 'samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl');
const ID = 'real-100mib';

let realLines: string[] | undefined;

/** The real log's lines, read once: its header with the session id `id`, and its rows. */
function realLog(id: string): { header: string; rows: string[] } {
  realLines ??= readFileSync(REAL_LOG, 'utf8').split('\n').filter((line) => line.length > 0);
  const [header, ...rows] = realLines;
  return { header: header!.replace(/"id":"[^"]*"/, `"id":"${id}"`), rows };
}

/**
 * Writes the real log repeated to about `bytes`: its header once (with the bench's id), then its
 * rows again and again, each row's leading `"seq":N` renumbered so seqs keep increasing; every
 * other byte is as dsh wrote it.
 * @returns Lines written and the share of message lines.
 */
export function writeRealShapedLog(path: string, bytes: number): { lines: number; messages: number } {
  const { header, rows } = realLog(ID);
  const parts = [header];
  let size = parts[0]!.length;
  let seq = 0;
  let messages = 0;
  while (size < bytes) {
    for (const row of rows) {
      const renumbered = row.replace(/^(\{"type":"[^"]*","seq":)\d+/, (_, prefix: string) => `${prefix}${seq++}`);
      if (/^\{"type":"(user|assistant|steering)\/message"/.test(row)) messages++;
      parts.push(renumbered);
      size += Buffer.byteLength(renumbered) + 1;
    }
  }
  writeFileSync(path, `${parts.join('\n')}\n`);
  return { lines: parts.length, messages };
}

/**
 * Writes a real-shaped session of about `bytes`: the real log's header with `id`, then its rows in
 * order, leaving out each row that would take the log past `bytes` (the search corpus of the CLI
 * bench: real line mix and text, every session its own id).
 */
export function writeRealShapedSession(path: string, id: string, bytes: number): void {
  const { header, rows } = realLog(id);
  const parts = [header];
  let size = parts[0]!.length + 1;
  for (const row of rows) {
    const rowBytes = Buffer.byteLength(row) + 1;
    if (size + rowBytes > bytes) continue;
    parts.push(row);
    size += rowBytes;
  }
  writeFileSync(path, `${parts.join('\n')}\n`);
}

/**
 * The parse floor: `chunks` (decompressed by libzstd when `zstd`), split on `\n`, every line decoded
 * and `JSON.parse`d. Lines are decoded in runs of whole lines (one `TextDecoder` call per run of
 * up to 32 KiB), the cheapest way to decode them.
 */
export async function floorRead(chunks: AsyncIterable<Uint8Array>, zstd: boolean): Promise<number> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let pending: Uint8Array = new Uint8Array(0);
  let lines = 0;
  const parseRun = (bytes: Uint8Array) => {
    const text = decoder.decode(bytes);
    for (let start = 0; start < text.length; ) {
      let end = text.indexOf('\n', start);
      if (end === -1) end = text.length;
      JSON.parse(text.slice(start, end));
      lines++;
      start = end + 1;
    }
  };
  const onData = (data: Uint8Array) => {
    const last = data.lastIndexOf(10);
    if (last === -1) {
      pending = concat(pending, data);
      return;
    }
    const first = data.indexOf(10);
    parseRun(concat(pending, data.subarray(0, first)));
    for (let at = first + 1; at < last; ) {
      let end = data.lastIndexOf(10, Math.min(last, at + 32 * 1024));
      if (end <= at) end = data.indexOf(10, at);
      parseRun(data.subarray(at, end));
      at = end + 1;
    }
    pending = data.slice(last + 1);
  };
  const lib = zstd ? await loadLibZstd() : undefined;
  const stream = lib
    ? new ZstdStream(lib, (data) => (onData(data), true), { verifyChecksums: true, mark: () => () => {}, maxInputBytes: Infinity, countSkipped: false, sliceBytes: Infinity })
    : undefined;
  for await (const chunk of chunks) {
    if (stream) stream.push(chunk);
    else onData(chunk);
  }
  stream?.end();
  return lines;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  if (a.length === 0) return b.slice();
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

const agent = { id: 'bench-target', cwd: '/work/bench' };
const content = [{ type: 'text' as const, text: 'continue from there' }];

async function prepareOnce(sessionQuery: Parameters<typeof createSessionReferences>[0]['sessionQuery']): Promise<number> {
  const { context } = await createSessionReferences({ sessionQuery }).prepare(agent, content, [{ sessionId: ID }]);
  return context!.metadata.references[0]!.serializedBytes;
}

/** The rows of this section (see the module). */
export async function benchRealPrepare(dir: string, hooks: StoreBenchHooks): Promise<void> {
  console.log('\nStores — prepare below the parse floor on a real-shaped log (SPEC §11.2.6)');
  const plainPath = join(dir, 'real.jsonl');
  const { lines, messages } = writeRealShapedLog(plainPath, (hooks.quick ? 25 : 100) * MIB);
  const zstdPath = join(dir, 'real.jsonl.zstd');
  compress(dir, [{ src: plainPath, dst: zstdPath, frames: 'dsh' }]);
  const mib = (path: string) => (statSync(path).size / MIB).toFixed(1);
  console.log(`  the real v3 log repeated: ${mib(plainPath)} MiB, ${lines} lines, ${messages} of them messages; dsh's zstd frames: ${mib(zstdPath)} MiB`);
  for (const [kind, path, name, target] of [['plain', plainPath, 'session.v3.jsonl', 0.5], ['zstd', zstdPath, 'session.v3.jsonl.zstd', 0.7]] as const) {
    const zstd = kind === 'zstd';
    const root = join(dir, `real-${kind}`);
    mkdirSync(join(root, 'project', ID), { recursive: true });
    writeFileSync(join(root, 'project', ID, name), readFileSync(path));
    const bytes = new Uint8Array(readFileSync(path));
    const times = await measure(
      [
        { name: 'node store', async: true, op: () => prepareOnce(createDshStoreSessionQuery({ root })) },
        { name: 'object store', async: true, op: () => prepareOnce(createObjectStoreSessionQuery(benchBucket(new Map([['k', bytes]])))) },
        { name: 'floor file', async: true, op: () => floorRead(fileChunks(path), zstd) },
        { name: 'floor memory', async: true, op: () => floorRead(memoryChunks(bytes), zstd) },
      ],
      { samples: hooks.quick ? 3 : 5, minSampleMs: 50, warmupMs: 0 },
    );
    const floor = zstd ? 'parse floor with libzstd' : 'parse floor';
    hooks.ratioRow('store', `prepare, Node store, real-shaped ${mib(plainPath)} MiB ${kind} vs ${floor}`, times.get('node store')!, times.get('floor file')!, target);
    hooks.ratioRow('store', `prepare, object store, real-shaped ${mib(plainPath)} MiB ${kind} vs ${floor}`, times.get('object store')!, times.get('floor memory')!, target);
  }
}
