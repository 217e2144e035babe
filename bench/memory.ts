/**
 * Memory of a process as Linux reports it in /proc/PID/status, for the benches that measure peak
 * RSS (bench/store.ts, bench/store-edge.ts). The peak is `VmHWM`, the high-water mark of the
 * process's own address space: `process.resourceUsage().maxRSS` is not, as Linux carries the peak
 * of the forked parent across `execve` into a child (a bench process of 1 GiB would make every
 * child look 1 GiB big). bench/peak-rss.mjs, preloaded into programs the bench runs, reads the same
 * fields.
 */
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';

/** A field of /proc/PID/status in bytes: `VmRSS` (resident now) or `VmHWM` (peak resident). */
export function statusBytes(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`/proc/${pid}/status has no ${field}`);
  return Number(match[1]) * 1024;
}

/** Resets the process's peak RSS (`VmHWM`) to its current RSS. */
export function resetPeak(pid: number): void {
  const fd = openSync(`/proc/${pid}/clear_refs`, 'w');
  try {
    writeSync(fd, '5');
  } finally {
    closeSync(fd);
  }
}

