// Preloaded by the store-edge bench (`node --import bench/peak-rss.mjs dist/node/cli.js …`): when the
// process exits, writes `{"start": RSS at preload, "peak": peak RSS}` (bytes) as JSON to file
// descriptor 3, which the bench opens as a pipe. Standard output and error stay the program's own.
// Both are read from /proc/self/status (VmRSS, VmHWM) as bench/memory.ts reads them, and for the same
// reason: `process.resourceUsage().maxRSS` would report the bench process's peak, not this one's.
import { readFileSync, writeSync } from 'node:fs';

/** A field of /proc/self/status in bytes. */
function status(field) {
  const match = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
  if (!match) throw new Error(`/proc/self/status has no ${field}`);
  return Number(match[1]) * 1024;
}

const start = status('VmRSS');
process.on('exit', () => {
  writeSync(3, JSON.stringify({ start, peak: status('VmHWM') }));
});
