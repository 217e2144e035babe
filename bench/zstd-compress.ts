/**
 * Compresses bench logs to zstd the way dsh's stores hold them, run by Bun (a devDependency:
 * `Bun.zstdCompressSync`, libzstd level 3) because Node 20 has no zstd encoder. Every frame gets a
 * content checksum, as the `zstd` CLI writes it (libzstd's one-shot API writes none), so reads pay
 * for checksum verification as they do on real logs.
 *
 * Usage: bun bench/zstd-compress.ts JOBS.json, where JOBS.json is
 * `[{ "src": path, "dst": path, "frames": "single" | "dsh" }]`: `single` compresses the whole file as
 * one frame; `dsh` writes the header line as the first frame and then one frame per 8 lines.
 */
import { readFileSync, writeFileSync } from 'node:fs';
declare const Bun: { zstdCompressSync(data: Uint8Array, options: { level: number }): Uint8Array; hash: { xxHash64(data: Uint8Array): bigint } };

/** One frame of `content`, with the checksum flag set and the XXH64 checksum appended. */
function frame(content: Uint8Array): Uint8Array {
  const compressed = Bun.zstdCompressSync(content, { level: 3 });
  const out = new Uint8Array(compressed.length + 4);
  out.set(compressed);
  out[4] = out[4]! | 0x04; // Content_Checksum_flag
  new DataView(out.buffer).setUint32(compressed.length, Number(Bun.hash.xxHash64(content) & 0xffffffffn), true);
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

function dshFrames(bytes: Uint8Array): Uint8Array {
  const parts: Uint8Array[] = [];
  let start = 0;
  let lines = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] !== 0x0a) continue;
    lines++;
    if (lines === 1 || lines % 8 === 1) {
      parts.push(frame(bytes.subarray(start, i + 1)));
      start = i + 1;
    }
  }
  if (start < bytes.length) parts.push(frame(bytes.subarray(start)));
  return concat(parts);
}

const jobs = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Array<{ src: string; dst: string; frames: 'single' | 'dsh' }>;
for (const job of jobs) {
  const bytes = readFileSync(job.src);
  writeFileSync(job.dst, job.frames === 'single' ? frame(bytes) : dshFrames(bytes));
}
