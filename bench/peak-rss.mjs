// Preloaded by the store-edge bench (`node --import bench/peak-rss.mjs dist/node/cli.js …`): when the
// process exits, writes `{"start": RSS at preload, "peak": peak RSS}` (bytes) as JSON to file
// descriptor 3, which the bench opens as a pipe. Standard output and error stay the program's own.
import { writeSync } from 'node:fs';

const start = process.memoryUsage().rss;
process.on('exit', () => {
  writeSync(3, JSON.stringify({ start, peak: process.resourceUsage().maxRSS * 1024 }));
});
