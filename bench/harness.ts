/**
 * A small timing harness for ratios measured side by side in one process.
 *
 * Each case is calibrated to a repetition count whose sample lasts at least `minSampleMs`; then
 * samples of all cases of one comparison are taken interleaved (A B A B …, the order rotating), a
 * full GC before each sample when `--expose-gc` is on, and each case reports its median time per
 * operation. Ratios are medians divided by medians of the same interleaved run.
 */

declare const gc: (() => void) | undefined;

export type Op = () => unknown;

/** Keeps results alive so the JIT cannot drop the work. */
export let sink: unknown;

function now(): number {
  return performance.now();
}

function collect(): void {
  if (typeof gc === 'function') gc();
}

/** Runs `op` `reps` times and returns the elapsed milliseconds. */
function run(op: Op, reps: number): number {
  const start = now();
  for (let i = 0; i < reps; i++) sink = op();
  return now() - start;
}

async function runAsync(op: () => Promise<unknown>, reps: number): Promise<number> {
  const start = now();
  for (let i = 0; i < reps; i++) sink = await op();
  return now() - start;
}

export interface Case {
  name: string;
  op: Op | (() => Promise<unknown>);
  async?: boolean;
  /** Runs before each sample, untimed (e.g. {@link evictCaches}). */
  before?: () => void;
}

let evictionBuffer: Uint8Array | undefined;

/**
 * Streams a 256 MiB buffer through the CPU so that no earlier working set is left in any cache
 * level or TLB: a sample that follows starts cold, whatever the size of its input.
 */
export function evictCaches(): number {
  const buffer = (evictionBuffer ??= new Uint8Array(256 << 20).fill(1));
  let sum = 0;
  for (let i = 0; i < buffer.length; i += 64) sum += buffer[i]!;
  sink = sum;
  return sum;
}

export interface Options {
  /** Samples per case (the median is reported). */
  samples?: number;
  /** Minimum duration of one sample, in ms. */
  minSampleMs?: number;
  /** Warm-up duration per case, in ms. */
  warmupMs?: number;
  /** Fixed repetitions per sample (skips calibration). */
  reps?: number;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function sample(c: Case, reps: number): Promise<number> {
  collect();
  c.before?.();
  return c.async ? runAsync(c.op as () => Promise<unknown>, reps) : run(c.op as Op, reps);
}

async function calibrate(c: Case, minSampleMs: number, warmupMs: number): Promise<number> {
  let reps = 1;
  let spent = 0;
  for (;;) {
    const t = await sample(c, reps);
    spent += t;
    if (t >= minSampleMs && spent >= warmupMs) return Math.max(1, Math.round((reps * minSampleMs) / Math.max(t, 1e-3)));
    reps = t < minSampleMs / 8 ? reps * 4 : reps * 2;
    if (t >= minSampleMs) reps = Math.max(1, Math.round((reps * minSampleMs) / Math.max(t, 1e-3) / 2));
  }
}

/** Median milliseconds per operation of each case, sampled interleaved. */
export async function measure(cases: readonly Case[], options: Options = {}): Promise<Map<string, number>> {
  const samples = options.samples ?? 15;
  const minSampleMs = options.minSampleMs ?? 25;
  const warmupMs = options.warmupMs ?? 100;
  const reps = new Map<string, number>();
  for (const c of cases) reps.set(c.name, options.reps ?? (await calibrate(c, minSampleMs, warmupMs)));
  const times = new Map<string, number[]>(cases.map((c) => [c.name, []]));
  for (let s = 0; s < samples; s++) {
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(s + k) % cases.length]!;
      const r = reps.get(c.name)!;
      times.get(c.name)!.push((await sample(c, r)) / r);
    }
  }
  return new Map(cases.map((c) => [c.name, median(times.get(c.name)!)]));
}

export function formatMs(ms: number): string {
  if (ms >= 100) return `${ms.toFixed(0)} ms`;
  if (ms >= 1) return `${ms.toFixed(2)} ms`;
  if (ms >= 0.001) return `${(ms * 1000).toFixed(1)} µs`;
  return `${(ms * 1e6).toFixed(0)} ns`;
}
