/**
 * The generated dsh logs of the store benches (bench/store.ts, bench/store-edge.ts): dsh-shaped
 * logs of any size, their zstd compression, and the 1 GiB log the RSS and edge sections share.
 */
import { closeSync, openSync, rmSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { rng } from './generators.js';

const MIB = 1 << 20;
const BUN = join(process.env.BENCH_DIR ?? 'bench', '..', 'node_modules', '.bin', 'bun');
const COMPRESS = join(process.env.BENCH_DIR ?? 'bench', 'zstd-compress.ts');

const WORDS = 'the a schema migration column numeric value test build deploy branch commit merge fix error günü çözüm 日本語 出力'.split(' ');

/**
 * Words of `WORDS`; with `vocabulary`, words of a vocabulary of that many drawn as language uses its
 * words (Zipf's law: the word of rank r about as often as r^−1.3, so a few words make most of a
 * text and most words are rare — the long tail a search index holds), `WORDS` the most frequent
 * ranks, `term<rank in base 36>` the rest. The exponent 1.3 gives real technical text's vocabulary
 * growth (Heaps' law): the `*.md`, `*.js` and `*.d.ts` files under node_modules hold about 10,300
 * distinct words in their first MB and 31,300 in 4 MB; this draws 12,500 and 31,100. (Exponent 1
 * draws 43,600 and 102,000: four times the distinct words of real text.)
 */
function words(random: () => number, chars: number, vocabulary = 0): string {
  let text = '';
  while (text.length < chars) text += `${vocabulary > 0 ? zipfWord(random, vocabulary) : WORDS[Math.floor(random() * WORDS.length)]} `;
  return text;
}

/** Zipf's exponent of {@link zipfWord}, less one. */
const TAIL = 0.3;

/** A word of rank 1..`vocabulary` drawn with probability about rank^−1.3 (the inverse of a bounded Pareto distribution). */
function zipfWord(random: () => number, vocabulary: number): string {
  const rank = Math.min(vocabulary, Math.floor((1 - random() * (1 - (vocabulary + 1) ** -TAIL)) ** (-1 / TAIL)));
  return rank <= WORDS.length ? WORDS[rank - 1]! : `term${rank.toString(36)}`;
}

/**
 * Writes a dsh-shaped log of about `bytes` bytes: turns of a short user prompt, an assistant
 * message with reasoning, text and a tool call, a tool call and its result (most of the bytes, as in
 * real sessions), step events, a title now and then, and a compact checkpoint every 200 turns
 * replacing the whole surface before it (the previous checkpoint included), as dsh's compaction
 * does (SPEC §8.2). With `compacted: false` there are no checkpoints, and the surface keeps every
 * message of the log. `vocabulary` > 0 draws user and assistant texts from a vocabulary of that many
 * words by Zipf's law, as real text uses its words (see `words`).
 * @returns The number of events written.
 */
export function writeLog(path: string, bytes: number, seed: number, id: string, cwd = '/work/bench', compacted = true, vocabulary = 0): number {
  const random = rng(seed);
  const fd = openSync(path, 'w');
  /** Bytes of the lines emitted so far, written or still in the batch. */
  let written = 0;
  let events = 0;
  let seq = 0;
  let batch: string[] = [];
  const flush = () => {
    writeSync(fd, batch.join(''));
    batch = [];
  };
  const line = (text: string) => {
    batch.push(text);
    written += Buffer.byteLength(text);
  };
  /** Seqs of the first and the last node on the surface (events with `surfaceOp`, SPEC §8.2). */
  let firstSurface: number | undefined;
  let lastSurface = 0;
  const emit = (event: Record<string, unknown>) => {
    line(`${JSON.stringify({ ...event, seq, time: 1_789_000_000_000 + seq })}\n`);
    if (event.surfaceOp !== undefined) {
      firstSurface ??= seq;
      lastSurface = seq;
    }
    seq++;
    events++;
  };
  line(`${JSON.stringify({ type: 'session', version: 3, id, createdAt: 1_789_000_000_000 + seed, cwd })}\n`);
  // Output text is reused in slices, so generating 1 GiB costs little.
  const output = words(random, 64 * 1024);
  for (let turn = 1; written < bytes; turn++) {
    emit({ type: 'turn/start', data: { turn } });
    emit({ type: 'user/message', surfaceOp: 'append', data: { id: `u${turn}`, role: 'user', content: [{ type: 'text', text: words(random, 200, vocabulary) }], source: { kind: 'user' } } });
    for (let step = 1; step <= 3; step++) {
      emit({ type: 'step/start', data: { turn, step } });
      const reasoning = output.slice(step * 100, step * 100 + 1500);
      emit({
        type: 'assistant/message',
        surfaceOp: 'append',
        data: { turn, step, message: { role: 'assistant', content: [{ type: 'reasoning', text: reasoning }, { type: 'text', text: words(random, 150, vocabulary) }, { type: 'tool-call', id: `c${seq}`, name: 'shell', input: { cmd: 'ls' } }] } },
      });
      emit({ type: 'tool/call', data: { id: `c${seq}`, name: 'shell' } });
      const from = Math.floor(random() * 32 * 1024);
      emit({ type: 'tool/result', surfaceOp: 'append', data: { message: { content: [{ type: 'tool-result', content: [{ type: 'text', text: output.slice(from, from + 8000) }] }] } } });
      emit({ type: 'step/end', data: { turn, step } });
    }
    // dsh titles a session after its first turn, and retitles it now and then.
    if (turn === 1 || turn % 50 === 0) emit({ type: 'session/title', data: { title: `Bench session ${id} turn ${turn}` } });
    if (compacted && turn % 200 === 0) {
      // As dsh's compaction: the whole surface so far (the previous checkpoint included) is
      // replaced by the new checkpoint; both endpoints are surface nodes, so the replace folds.
      const [start, end] = [firstSurface!, lastSurface];
      firstSurface = seq;
      emit({ type: 'user/message', surfaceOp: { op: 'replace', start, end }, data: { id: `k${turn}`, role: 'user', content: [{ type: 'text', text: `Summary up to turn ${turn}: ${words(random, 400)}` }], source: { kind: 'plugin', plugin: 'compact' } } });
    }
    if (batch.length > 2000) flush();
  }
  flush();
  closeSync(fd);
  return events;
}

/** Compresses logs with Bun's libzstd (see bench/zstd-compress.ts). */
export function compress(dir: string, jobs: Array<{ src: string; dst: string; frames: 'single' | 'dsh' }>): void {
  const list = join(dir, `jobs-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(list, JSON.stringify(jobs));
  const run = spawnSync(BUN, [COMPRESS, list], { stdio: 'inherit' });
  rmSync(list);
  if (run.status !== 0) throw new Error('bun zstd-compress failed');
}

/** The 1 GiB log of the RSS and edge sections (256 MiB with `--quick`), plain and one zstd frame. */
export interface HugeLog {
  /** Session id of the log's header. */
  id: string;
  /** Compact checkpoints every 200 turns (else the surface keeps every message). */
  compacted: boolean;
  plainPath: string;
  zstdPath: string;
  /** Plain size in bytes. */
  bytes: number;
  events: number;
}

const hugeLogs = new Map<string, HugeLog>();

/** Generates the huge log (`compacted`: with compact checkpoints, the default) in `dir` once, for every section that asks for it. */
export function hugeLog(dir: string, quick: boolean, compacted = true): HugeLog {
  const id = compacted ? 'huge' : 'huge-uncompacted';
  const plainPath = join(dir, `${id}.jsonl`);
  const known = hugeLogs.get(plainPath);
  if (known) return known;
  const events = writeLog(plainPath, quick ? 256 * MIB : 1024 * MIB, 2, id, '/work/bench', compacted);
  const zstdPath = `${plainPath}.zstd`;
  compress(dir, [{ src: plainPath, dst: zstdPath, frames: 'single' }]);
  const log = { id, compacted, plainPath, zstdPath, bytes: statSync(plainPath).size, events };
  console.log(`  generated ${id}: ${(log.bytes / MIB).toFixed(0)} MiB, ${events} events; zstd ${(statSync(zstdPath).size / MIB).toFixed(1)} MiB`);
  hugeLogs.set(plainPath, log);
  return log;
}

/** The huge log's plain and zstd forms, with the dsh file name each has in a session folder. */
export function hugeLogForms(log: HugeLog): Array<{ kind: 'plain' | 'zstd'; path: string; name: string }> {
  return [
    { kind: 'plain', path: log.plainPath, name: 'session.v3.jsonl' },
    { kind: 'zstd', path: log.zstdPath, name: 'session.v3.jsonl.zstd' },
  ];
}

/** The memory each huge-log prepare may grow by: 128 MiB + 100 bytes per event. */
export function hugeLogAllowance(log: HugeLog): number {
  return 128 * MIB + 100 * log.events;
}

