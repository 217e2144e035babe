#!/usr/bin/env node
/**
 * Executable wrapper of the `dsh-session-reference` CLI (SPEC §12.2); the logic is `main()` in
 * `main.ts`, imported after Node's compile cache is turned on (`compile-cache.ts`), so that the
 * CLI's modules load from it.
 * @module
 */
import { enableCliCompileCache } from './compile-cache.js';

enableCliCompileCache(process.env);
const { main } = await import('./main.js');

// `dsh-session-reference … | head` closes stdout early: stop quietly instead of crashing.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

process.exitCode = await main(process.argv.slice(2), process, { ownsProcess: true });
