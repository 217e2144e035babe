#!/usr/bin/env node
/**
 * Executable wrapper of the `dsh-session-reference` CLI (SPEC §12.2); the logic is `main()` in
 * `main.ts`.
 * @module
 */
import { main } from './main.js';

// `dsh-session-reference … | head` closes stdout early: stop quietly instead of crashing.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw error;
});

process.exitCode = await main(process.argv.slice(2), process);
