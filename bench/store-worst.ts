/**
 * `npm run bench -- --only store-worst`: what the worst valid object of a given size costs one
 * request of the edge service (issue 21, SPEC §11.2.1). The object is 16 KiB of zstd: a header
 * frame, then RLE blocks of `\n` — 4,096 blocks of 128 KiB, 512 MiB of blank lines, the most log a
 * 16 KiB object can decode to (4 bytes per 128 KiB block). Listings read the catalog only (SPEC
 * §17.5), so a log is read whole when it is stored: `PUT /sessions/{path}` peeks its header, streams
 * it to R2, and the catalog reads it up to `MAX_LOG_BYTES` (default 64 MiB), where the read fails
 * and the upload is refused (400 `SESSION_REFERENCE_INVALID_LOG`, the object deleted again). The
 * row is the workerd process's CPU time for that request (utime + stime from /proc/PID/stat,
 * median of 3, after a warm-up upload of a small log), against 2.5 s — a twelfth of the 30 s of
 * CPU a Workers Paid request has by default. The Worker runs as `wrangler deploy --dry-run` builds
 * it (bench/edge-worker.ts), as in `store-edge`.
 */
import { readFileSync } from 'node:fs';
import { formatMs } from './harness.js';
import { buildEdgeWorker, edgeOptions } from './edge-worker.js';
import { miniflare, workerdChildren } from './store-edge.js';
import type { StoreBenchHooks } from './store.js';

const BLOCK = 128 * 1024;
/** RLE blocks of the worst object: 4 bytes each, 16 KiB in all. */
const BLOCKS = 4096;
const TARGET_MS = 2500;

const encoder = new TextEncoder();

/** A zstd frame of `content` in one raw block, with its size (RFC 8878 §3.1.1). */
function rawFrame(content: string): Uint8Array {
  const bytes = encoder.encode(content);
  const frame = new Uint8Array(6 + 4 + 3 + bytes.length);
  frame.set([0x28, 0xb5, 0x2f, 0xfd, 0x80, 0x58]);
  new DataView(frame.buffer).setUint32(6, bytes.length, true);
  const header = 1 | (bytes.length << 3);
  frame.set([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff], 10);
  frame.set(bytes, 13);
  return frame;
}

/** A zstd frame of `blocks` RLE blocks of 128 KiB of `byte`, without a content size. */
function rleFrame(byte: number, blocks: number): Uint8Array {
  const frame = new Uint8Array(6 + 4 * blocks);
  frame.set([0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x58]); // no content size, window 2 MiB
  for (let i = 0; i < blocks; i++) {
    const header = (i === blocks - 1 ? 1 : 0) | (1 << 1) | (BLOCK << 3);
    frame.set([header & 0xff, (header >> 8) & 0xff, (header >> 16) & 0xff, byte], 6 + 4 * i);
  }
  return frame;
}

const headerLine = (id: string, cwd: string) => `${JSON.stringify({ type: 'session', version: 3, id, createdAt: 1, cwd })}\n`;

/** Clock ticks of CPU (user + system) the process has used; Linux counts 100 per second. */
function cpuTicks(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return Number(fields[11]) + Number(fields[12]);
}

export async function benchWorst(hooks: StoreBenchHooks): Promise<void> {
  console.log('\nStores — the worst valid 16 KiB object through the edge Worker (SPEC §11.2.1)');
  const worker = buildEdgeWorker();
  const head = rawFrame(headerLine('worst-blank-lines', '/elsewhere'));
  const worst = new Uint8Array(head.length + 6 + 4 * BLOCKS);
  worst.set(head);
  worst.set(rleFrame(0x0a, BLOCKS), head.length);
  const before = workerdChildren();
  const mf = await miniflare(edgeOptions(worker));
  try {
    await mf.ready;
    const started = [...workerdChildren()].filter((pid) => !before.has(pid));
    if (started.length !== 1) throw new Error(`expected one new workerd process, found ${started.length}`);
    const pid = started[0]!;
    const put = async (key: string, body: Uint8Array) => {
      const response = await mf.dispatchFetch(`http://edge.test/sessions/${key}`, { method: 'PUT', body, headers: { 'content-length': String(body.length) } });
      return { status: response.status, body: await response.text() };
    };
    const warm = await put('bench/target/session.v3.jsonl', encoder.encode(headerLine('worst-target', '/work/bench')));
    if (warm.status !== 200) throw new Error(`the warm-up PUT answered ${warm.status}: ${warm.body.slice(0, 500)}`);
    const samples: Array<{ ms: number; wall: number }> = [];
    for (let i = 0; i < 3; i++) {
      const ticks = cpuTicks(pid);
      const sent = performance.now();
      const refused = await put('bench/worst/session.v3.jsonl.zstd', worst);
      const wall = performance.now() - sent;
      samples.push({ ms: (cpuTicks(pid) - ticks) * 10, wall });
      // Past MAX_LOG_BYTES: refused, and nothing stays stored.
      if (refused.status !== 400 || !refused.body.includes('SESSION_REFERENCE_INVALID_LOG')) throw new Error(`expected 400 INVALID_LOG, got ${refused.status}: ${refused.body.slice(0, 500)}`);
    }
    samples.sort((a, b) => a.ms - b.ms);
    const { ms, wall } = samples[1]!;
    const limitMib = 64;
    hooks.countRow(
      'store',
      'ms CPU of PUT /sessions/{path}, edge service, a 16 KiB zstd object of blank lines (512 MiB decoded)',
      ms,
      TARGET_MS,
      `workerd CPU, median of 3: ${formatMs(ms)} (${(ms / limitMib).toFixed(1)} ms per MiB decoded) ≤ ${TARGET_MS} ms; the catalog's read stops at the Worker's MAX_LOG_BYTES default of ${limitMib} MiB (the library's 4 GiB would cost ~${((ms / limitMib) * 512 / 1000).toFixed(0)} s for all 512 MiB); request ${formatMs(wall)}`,
    );
  } finally {
    await mf.dispose();
    worker.remove();
  }
}
