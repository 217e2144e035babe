/**
 * `npm run bench -- --only store-edge`: the 1 GiB log of `store-rss` (plain and one-frame zstd)
 * cited through the edge Worker in plain workerd and through the CLI, each checked against the
 * library's own result (issue 14 acceptance, SPEC §11.2.2, §12.2).
 *
 * - The Worker: the three-line Worker of examples/edge-worker as `wrangler deploy --dry-run` builds
 *   it (bench/edge-worker.ts); the logs are uploaded under dsh layout keys, in the bench tenant's
 *   prefix, into a persisted R2 bucket (a streamed put: a one-line upload Worker pipes each request
 *   body into `SESSIONS.put` through a `FixedLengthStream`, as R2 wants a known length); then
 *   Miniflare (no nodejs_compat) runs the Worker over that bucket with its `SessionCatalog`,
 *   `POST /reconcile` catalogs the logs, and `POST /prepare` cites the huge session (one R2 get). Two rows: the growth of the workerd process's
 *   peak RSS during that request (its `VmHWM` is reset through `/proc/PID/clear_refs` first,
 *   after a warm-up request) against 128 MiB + 100 B per event, as in `store-rss` (the process
 *   also runs Miniflare's R2 emulation, so its memory is in the figure); and the peak memory of
 *   the Worker's own isolate (committed V8 heap + ArrayBuffer backing stores, polled every 20 ms
 *   through workerd's inspector, bench/inspector.ts) against 128 MiB, the Workers memory limit,
 *   which applies to the isolate.
 * - The CLI: `npm run build`, then `node dist/node/cli.js prepare --store ROOT --as … --json` in a
 *   child process preloaded with bench/peak-rss.mjs, which reports its peak RSS and its RSS at
 *   start; the row is their difference against 128 MiB + 100 B per event, as in `store-rss`.
 *
 * Both answers must equal, byte for byte once parsed, what `createSessionReferences` over
 * `createDshStoreSessionQuery` composes in this process for the same store and message.
 */
import { spawnSync } from 'node:child_process';
import { createReadStream, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pathToFileURL } from 'node:url';
import type { Miniflare as MiniflareType, MiniflareOptions } from 'miniflare';
import { createSessionReferences, formatSessionReferenceMention, type UserMessage } from '../src/index.js';
import { createDshStoreSessionQuery } from '../src/node/index.js';
import { formatMs } from './harness.js';
import { BENCH_TENANT_PREFIX, buildEdgeWorker, COMPATIBILITY_DATE, edgeOptions, type BuiltWorker } from './edge-worker.js';
import { isolatePeak } from './inspector.js';
import { resetPeak, statusBytes } from './memory.js';
import type { StoreBenchHooks } from './store.js';
import { hugeLog, hugeLogAllowance, hugeLogForms, writeLog, type HugeLog } from './store-logs.js';

const MIB = 1 << 20;
const BENCH = process.env.BENCH_DIR ?? 'bench';
const ROOT = join(BENCH, '..');
const CLI = join(ROOT, 'dist', 'node', 'cli.js');
const PEAK_RSS = join(BENCH, 'peak-rss.mjs');

/** The session the prompt is written in (`as`), and a small one the warm-up request cites. */
const TARGET = { id: 'bench-target', cwd: '/work/bench' };
const WARM = 'bench-warm';

/** Receives one object per `PUT /KEY` (header `x-length`: its size) and streams it into the bucket. */
const UPLOAD_WORKER = `export default {
  async fetch(request, env) {
    const key = decodeURIComponent(new URL(request.url).pathname.slice(1));
    const { readable, writable } = new FixedLengthStream(Number(request.headers.get('x-length')));
    const [object] = await Promise.all([env.SESSIONS.put(key, readable), request.body.pipeTo(writable)]);
    return new Response(String(object.size));
  },
};`;

/** A user message citing `sessionId`, with a fixed id so that every path composes the same message. */
function citing(sessionId: string): UserMessage {
  const mention = formatSessionReferenceMention({ sessionId, label: sessionId });
  return { id: `bench-edge-${sessionId}`, role: 'user', content: [{ type: 'text', text: `Continue from ${mention} please` }], source: { kind: 'user' } };
}

/** What the Worker's `POST /prepare` answers and the CLI's `prepare --json` prints, as the library composes it in Node. */
async function expectedAnswer(root: string, message: UserMessage): Promise<string> {
  const refs = createSessionReferences({ sessionQuery: createDshStoreSessionQuery({ root }) });
  const composed = await refs.referenceUserMessage(TARGET, message);
  return JSON.stringify({ message: composed, metadata: composed.envelope?.contexts[0]?.metadata ?? null });
}

/** A dsh store root: the huge log, the target and the warm-up session, each in its session folder (keys relative to the root). */
function edgeStore(dir: string, log: HugeLog, form: { kind: string; path: string; name: string }): { root: string; files: Map<string, string> } {
  const root = join(dir, `edge-${log.id}-${form.kind}`);
  const files = new Map<string, string>([
    [`bench/${log.id}/${form.name}`, form.path],
    [`bench/${TARGET.id}/session.v3.jsonl`, join(dir, 'edge-target.jsonl')],
    [`bench/${WARM}/session.v3.jsonl`, join(dir, 'edge-warm.jsonl')],
  ]);
  for (const [key, source] of files) {
    mkdirSync(join(root, key, '..'), { recursive: true });
    // A hard link: the store sees the file under its dsh name without a second copy.
    linkSync(source, join(root, key));
  }
  return { root, files };
}

/** A Miniflare instance; the package loads only when this section runs. */
export async function miniflare(options: MiniflareOptions): Promise<MiniflareType> {
  const { Miniflare } = await import('miniflare');
  return new Miniflare(options);
}

/** Ids of the workerd processes that are children of this process. */
export function workerdChildren(): Set<number> {
  const pids = new Set<number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const status = readFileSync(`/proc/${entry}/status`, 'utf8');
      if (/^Name:\s+workerd$/m.test(status) && new RegExp(`^PPid:\\s+${process.pid}$`, 'm').test(status)) pids.add(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/** Streams each file into a persisted R2 bucket `SESSIONS` under its key, through the upload Worker. */
async function uploadBucket(persist: string, files: Map<string, string>): Promise<void> {
  const mf = await miniflare({ modules: true, script: UPLOAD_WORKER, compatibilityDate: COMPATIBILITY_DATE, r2Buckets: ['SESSIONS'], r2Persist: persist });
  try {
    for (const [key, path] of files) {
      const size = statSync(path).size;
      const response = await mf.dispatchFetch(`http://upload.test/${encodeURIComponent(BENCH_TENANT_PREFIX + key)}`, {
        method: 'PUT',
        headers: { 'x-length': String(size) },
        body: Readable.toWeb(createReadStream(path, { highWaterMark: MIB })) as never,
        duplex: 'half',
      });
      const stored = await response.text();
      if (response.status !== 200 || stored !== String(size)) throw new Error(`upload of ${key} failed: ${response.status} ${stored}`);
    }
  } finally {
    await mf.dispose();
  }
}

/** What one `POST /prepare` citing the huge log cost the Worker: workerd's RSS and the isolate's heap (peak and before), and the answer. */
interface WorkerRun {
  body: string;
  baseline: number;
  peak: number;
  isolate: { before: number; peak: number; parts: { used: number; committed: number; backing: number } };
  ms: number;
}

/** The inspector target of the user Worker (Miniflare names it `core:user:`). */
async function userWorkerTarget(mf: MiniflareType): Promise<string> {
  const base = await mf.getInspectorURL();
  const targets = (await (await fetch(new URL('/json', base.href.replace(/^ws:/, 'http:')))).json()) as Array<{ webSocketDebuggerUrl: string }>;
  const target = targets.find((entry) => entry.webSocketDebuggerUrl.endsWith('/core:user:'));
  if (!target) throw new Error(`no inspector target for the Worker among ${targets.map((entry) => entry.webSocketDebuggerUrl).join(', ')}`);
  return target.webSocketDebuggerUrl;
}

/** Peak RSS growth of workerd and peak heap of the Worker's isolate during one `POST /prepare` citing the huge log, and the answer. */
async function preparedByWorker(worker: BuiltWorker, persist: string, log: HugeLog): Promise<WorkerRun> {
  const before = workerdChildren();
  // The Worker's default MAX_LOG_BYTES (64 MiB, for Workers' CPU limits) would refuse the 1 GiB log.
  const mf = await miniflare({ ...edgeOptions(worker, { MAX_LOG_BYTES: String(4 * 1024 * MIB) }, persist), inspectorPort: 0 });
  try {
    await mf.ready;
    // The logs were written to the bucket directly: the catalog learns them by reconciling.
    for (let done = false; !done; ) {
      const response = await mf.dispatchFetch('http://edge.test/reconcile', { method: 'POST' });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`POST /reconcile answered ${response.status}: ${body.slice(0, 500)}`);
      done = (JSON.parse(body) as { done: boolean }).done;
    }
    const started = [...workerdChildren()].filter((pid) => !before.has(pid));
    if (started.length !== 1) throw new Error(`expected one new workerd process, found ${started.length}`);
    const pid = started[0]!;
    const prepare = async (message: UserMessage) => {
      const response = await mf.dispatchFetch('http://edge.test/prepare', {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ as: TARGET.id, message }),
      });
      const body = await response.text();
      if (response.status !== 200) throw new Error(`POST /prepare answered ${response.status}: ${body.slice(0, 500)}`);
      return body;
    };
    // The warm-up compiles the code paths, so that the baseline includes the compiled code.
    await prepare(citing(WARM));
    const target = await userWorkerTarget(mf);
    resetPeak(pid);
    const baseline = statusBytes(pid, 'VmRSS');
    const sent = performance.now();
    const { value: body, ...isolate } = await isolatePeak(target, () => prepare(citing(log.id)));
    const ms = performance.now() - sent;
    return { body, baseline, peak: statusBytes(pid, 'VmHWM'), isolate, ms };
  } finally {
    await mf.dispose();
  }
}

/** The CLI's `prepare --json` on the store, in a child process preloaded with bench/peak-rss.mjs. */
function preparedByCli(root: string, message: UserMessage): { answer: { message: UserMessage; metadata: unknown }; start: number; peak: number; ms: number } {
  const text = (message.content[0] as { text: string }).text;
  const started = performance.now();
  const run = spawnSync(process.execPath, ['--import', pathToFileURL(PEAK_RSS).href, CLI, 'prepare', '--store', root, '--as', TARGET.id, '--json', text], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
    maxBuffer: 64 * MIB,
  });
  const ms = performance.now() - started;
  if (run.status !== 0) throw new Error(`the CLI failed (${run.status}): ${run.stderr}`);
  const { start, peak } = JSON.parse(String(run.output[3])) as { start: number; peak: number };
  return { answer: JSON.parse(run.stdout) as { message: UserMessage; metadata: unknown }, start, peak, ms };
}

export function build(args: string[]): void {
  const run = spawnSync(args[0]!, args.slice(1), { cwd: ROOT, encoding: 'utf8' });
  if (run.status !== 0) throw new Error(`${args.join(' ')} failed: ${run.stdout}${run.stderr}`);
}

const mib = (bytes: number) => (bytes / MIB).toFixed(0);

/** The rows of one huge log, plain and zstd: the Worker's and the CLI's peak RSS growth, each answer checked against the library's. */
async function benchLog(dir: string, hooks: StoreBenchHooks, worker: BuiltWorker, log: HugeLog): Promise<void> {
  const message = citing(log.id);
  const size = `${mib(log.bytes)} MiB${log.compacted ? '' : ' never compacted'}`;
  let plainAnswer: string | undefined;
  for (const form of hugeLogForms(log)) {
    const { root, files } = edgeStore(dir, log, form);
    const expected = await expectedAnswer(root, message);
    plainAnswer ??= expected;
    if (expected !== plainAnswer) throw new Error(`the library composes the ${form.kind} log ${log.id} differently from the plain one`);

    const persist = join(dir, `edge-r2-${log.id}-${form.kind}`);
    await uploadBucket(persist, files);
    const run = await preparedByWorker(worker, persist, log);
    rmSync(persist, { recursive: true, force: true });
    if (run.body !== expected) throw new Error(`the Worker's answer for the ${form.kind} log ${log.id} differs from the library's`);
    const growth = run.peak - run.baseline;
    const allowed = hugeLogAllowance(log);
    hooks.countRow('store', `peak RSS growth MiB, edge Worker in workerd, ${size} ${form.kind}`, Math.round(growth / MIB), Math.floor(allowed / MIB), `${mib(growth)} MiB ≤ 128 MiB + 100 B × ${log.events} events; workerd ${mib(run.baseline)} → ${mib(run.peak)} MiB (R2 emulation and the catalog included); request ${formatMs(run.ms)}; answer = library's`);
    hooks.countRow('store', `peak isolate heap MiB, edge Worker in workerd, ${size} ${form.kind}`, Math.round(run.isolate.peak / MIB), 128, `${mib(run.isolate.peak)} MiB ≤ 128 MiB (Workers limit): committed V8 heap + ArrayBuffer backing stores of the Worker's isolate (inspector, every 20 ms), ${mib(run.isolate.before)} MiB before; peaks of the parts: ${mib(run.isolate.parts.used)} MiB heap used, ${mib(run.isolate.parts.committed)} committed, ${mib(run.isolate.parts.backing)} backing stores`);

    const cli = preparedByCli(root, message);
    const id = cli.answer.message.id;
    if (typeof id !== 'string' || id === '') throw new Error(`the CLI's message has no id: ${JSON.stringify(id)}`);
    // The CLI gives its message a random id; everything else must be the library's answer.
    if (JSON.stringify({ ...cli.answer, message: { ...cli.answer.message, id: message.id } }) !== expected) {
      throw new Error(`the CLI's answer for the ${form.kind} log ${log.id} differs from the library's`);
    }
    const cliGrowth = cli.peak - cli.start;
    hooks.countRow('store', `peak RSS growth MiB, CLI prepare, ${size} ${form.kind}`, Math.round(cliGrowth / MIB), Math.floor(allowed / MIB), `${mib(cliGrowth)} MiB ≤ 128 MiB + 100 B × ${log.events} events; process ${mib(cli.start)} → ${mib(cli.peak)} MiB; run ${formatMs(cli.ms)}; output = library's`);
  }
}

export async function benchEdge(dir: string, hooks: StoreBenchHooks): Promise<void> {
  console.log('\nStores — a 1 GiB log through the edge Worker in plain workerd and through the CLI (SPEC §11.2.2, §12.2)');
  const worker = buildEdgeWorker();
  build(['npm', 'run', 'build']);
  writeLog(join(dir, 'edge-target.jsonl'), 1, 11, TARGET.id, TARGET.cwd);
  writeLog(join(dir, 'edge-warm.jsonl'), MIB, 12, WARM, TARGET.cwd);
  // The log as dsh writes a long session (compacted), then one whose surface keeps every message.
  try {
    for (const compacted of [true, false]) await benchLog(dir, hooks, worker, hugeLog(dir, hooks.quick, compacted));
  } finally {
    worker.remove();
  }
}
