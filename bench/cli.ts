/**
 * `npm run bench -- --only cli` (issue 30 item 3, SPEC §16.4, §16.6): the CLI's `search` as a user
 * meets it, a process per run, on a store of 2,000 plain logs of about 100 KB (200 MB), of
 * generated messages and then of the real log's shape, against what a user would reach for
 * instead, in the same run:
 *
 * - a warm-cache `node dist/node/cli.js search quasarmuffin --store ROOT` (the word is in no log)
 *   against a bare `node -e 0` (target ≤ 4×) and against `rg -l -F quasarmuffin ROOT` when
 *   ripgrep is on PATH, else `grep -rlF` (target ≤ 6×; the row names the tool);
 * - that warm search against the first one, which builds the index and writes the cache (target
 *   ≤ 0.2×);
 * - for the record, `encode` (start-up and the modules a command loads, no store) against `node -e 0`.
 *
 * Every timed command runs in a child process (`spawnSync`), samples interleaved (A B C, B C A, …),
 * the median of each compared. The first search is timed with the cache directory removed before
 * each sample; the logs stay in the page cache (they were just written and read), as they are on
 * a machine in use. Needs `npm run build` first (dist/node/cli.js).
 *
 * `BENCH_CLI_NODE=/path/to/node` runs the CLI and `node -e 0` with that Node instead of the one
 * running the bench (the package needs Node >= 22.12, where Node's compile cache, which the CLI
 * turns on, exists; test/node-range pins 22.12.0 and 26.12.1).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { formatMs } from './harness.js';
import type { StoreBenchHooks } from './store.js';
import { writeLog } from './store-logs.js';
import { writeRealShapedSession } from './store-real.js';

const BENCH = process.env.BENCH_DIR ?? 'bench';
const CLI = join(BENCH, '..', 'dist', 'node', 'cli.js');
/** A word no generated log holds: every tool reads every log and finds nothing. */
const WORD = 'quasarmuffin';

/** The two corpora: generated messages, and the real log's line mix and text (see {@link writeStore}). */
type Corpus = 'generated' | 'real-shaped';

/**
 * 2,000 sessions of about 100 KB in 20 project folders: generated as bench/search.ts writes them,
 * or real-shaped (the real v3 log cut to 100 KB, its own id each: tool calls and output, reasoning,
 * request headers and the real messages, so an index about twice as large).
 */
function writeStore(root: string, count: number, corpus: Corpus): void {
  for (let i = 0; i < count; i++) {
    const dir = join(root, `project-${i % 20}`, `session-${i}`);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, 'session.v3.jsonl');
    if (corpus === 'generated') writeLog(path, 100_000, 500 + i, `session-${i}`, `/work/p${i % 20}`, false, 200_000);
    else writeRealShapedSession(path, `session-${i}`, 100_000);
  }
}

/** Milliseconds of one run of `command` (a child process), which must exit with one of `statuses`. */
function timed(command: readonly string[], env: NodeJS.ProcessEnv, statuses: readonly number[] = [0]): number {
  const started = performance.now();
  const run = spawnSync(command[0]!, command.slice(1), { env, stdio: ['ignore', 'ignore', 'pipe'], maxBuffer: 1 << 20 });
  const ms = performance.now() - started;
  if (!statuses.includes(run.status ?? -1)) throw new Error(`${command.join(' ')} exited with ${run.status}: ${run.stderr}`);
  return ms;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[sorted.length >> 1]!;
}

/** `rg` when it is on PATH (`rg --version` runs), else GNU grep. */
function grepTool(): { name: string; command: (root: string) => string[] } {
  const rg = spawnSync('rg', ['--version'], { stdio: 'ignore' });
  if (rg.status === 0) return { name: 'rg -l -F', command: (root) => ['rg', '-l', '-F', WORD, root] };
  return { name: 'grep -rlF (rg not on PATH)', command: (root) => ['grep', '-rlF', WORD, root] };
}

export async function benchCli(hooks: StoreBenchHooks): Promise<void> {
  if (!existsSync(CLI)) throw new Error(`${CLI} is missing: run \`npm run build\` first`);
  for (const corpus of ['generated', 'real-shaped'] as const) benchCorpus(hooks, corpus);
}

function benchCorpus(hooks: StoreBenchHooks, corpus: Corpus): void {
  const count = 2000;
  console.log(`\nCLI — search on a store of ${count} plain ${corpus} logs of about 100 KB, a process per run (issue 30 item 3)`);
  const dir = mkdtempSync(join(tmpdir(), 'dsh-bench-cli-'));
  try {
    const root = join(dir, 'store');
    writeStore(root, count, corpus);
    const env = { ...process.env, XDG_CACHE_HOME: join(dir, 'cache') };
    const node = process.env.BENCH_CLI_NODE || process.execPath;
    const search = [node, CLI, 'search', WORD, '--store', root];
    const grep = grepTool();
    // No hit is status 0 for the CLI, 1 for rg and grep.
    const cases: Array<{ name: string; run: () => number }> = [
      { name: 'node', run: () => timed([node, '-e', '0'], env) },
      // Start-up alone does not depend on the store: timed once, with the first corpus.
      ...(corpus === 'generated' ? [{ name: 'encode', run: () => timed([node, CLI, 'encode', 'x'], env) }] : []),
      { name: 'grep', run: () => timed(grep.command(root), env, [1]) },
      { name: 'warm', run: () => timed(search, env) },
    ];
    // The first search, cache removed before each sample (the page cache keeps the logs).
    const firsts: number[] = [];
    const firstSamples = hooks.quick ? 1 : 3;
    for (let k = 0; k < firstSamples; k++) {
      rmSync(join(dir, 'cache'), { recursive: true, force: true });
      firsts.push(timed(search, env));
    }
    // Warm up once (the cache is written), then interleave.
    for (const c of cases) c.run();
    const samples = hooks.quick ? 5 : 15;
    const times = new Map(cases.map((c) => [c.name, [] as number[]]));
    for (let k = 0; k < samples; k++) {
      for (let j = 0; j < cases.length; j++) {
        const c = cases[(j + k) % cases.length]!;
        times.get(c.name)!.push(c.run());
      }
    }
    const [bare, grepMs, warm] = ['node', 'grep', 'warm'].map((name) => median(times.get(name)!)) as [number, number, number];
    const first = median(firsts);
    const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
    hooks.ratioRow('cli', `warm search, ${count} ${corpus} sessions vs node -e 0 (Node ${version})`, warm, bare, 4);
    hooks.ratioRow('cli', `warm search, ${count} ${corpus} sessions vs ${grep.name}`, warm, grepMs, 6);
    hooks.ratioRow('cli', `warm search vs the first (index built, cache written), ${corpus}`, warm, first, 0.2, `${formatMs(warm)} / ${formatMs(first)}`);
    if (times.has('encode')) hooks.ratioRow('cli', 'encode (start-up + its modules) vs node -e 0', median(times.get('encode')!), bare, undefined);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
