#!/usr/bin/env node
// Measures the CLI's `push` (SPEC §17.8) against the real service: the three-line Worker of
// examples/edge-worker (wrangler deploy --dry-run) run by Miniflare on a loopback port. A store of
// N sessions (each a copy of a 325 KB sample log under its own id) is pushed twice with the built
// CLI (dist/node/cli.js: run `npm run build` first); the second push finds every log unchanged
// (MD5 against the service's etags) and uploads nothing. Prints one JSON object: the sessions, the
// store's bytes, each run's wall time and counts, and the second run's time over the first's.
//
// Usage: node scripts/measure-push.mjs [sessions]   (default 500; 2000 is about 650 MB)
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SignJWT } from 'jose';
import { startEdgeWorker } from './edge-loopback.mjs';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');
const sessions = Number(process.argv[2] ?? 500);
const SECRET = 'measure-push-secret-that-is-long-enough-0123456789';
const SAMPLE = join(ROOT, 'samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl');

const store = mkdtempSync(join(tmpdir(), 'dsh-measure-push-store-'));
const worker = await startEdgeWorker({ AUTH_JWT_SECRET: SECRET });
try {
  const { url } = worker;
  const token = await new SignJWT({ sub: 'measure' }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('2h').sign(new TextEncoder().encode(SECRET));
  const [first, ...rest] = readFileSync(SAMPLE, 'utf8').split('\n');
  let bytes = 0;
  for (let i = 0; i < sessions; i++) {
    const header = { ...JSON.parse(first), id: `measure-session-${i}`, createdAt: 1_700_000_000_000 + i };
    const dir = join(store, `project-${i % 20}`, `session-${i}`);
    mkdirSync(dir, { recursive: true });
    const text = [JSON.stringify(header), ...rest].join('\n');
    bytes += Buffer.byteLength(text);
    writeFileSync(join(dir, 'session.v3.jsonl'), text);
  }
  const push = () => {
    const start = process.hrtime.bigint();
    const out = execFileSync(process.execPath, [join(ROOT, 'dist/node/cli.js'), 'push', '--to', url, '--store', store, '--json'], {
      env: { ...process.env, DSH_SESSION_REFERENCE_TOKEN: token },
      maxBuffer: 1 << 28,
    });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    const { uploaded, unchanged, failed } = JSON.parse(out.toString());
    return { ms: Math.round(ms), uploaded, unchanged, failed };
  };
  const firstRun = push();
  const secondRun = push();
  console.log(JSON.stringify({ sessions, storeBytes: bytes, first: firstRun, second: secondRun, secondOverFirst: Number((secondRun.ms / firstRun.ms).toFixed(3)) }));
} finally {
  await worker.dispose();
  rmSync(store, { recursive: true, force: true });
}
