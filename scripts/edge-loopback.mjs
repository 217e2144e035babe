// The three-line Worker of examples/edge-worker (SPEC §17.2) as an app deploys it — built by a
// plain `wrangler deploy --dry-run` — run by Miniflare (workerd, real R2 and SQLite-backed Durable
// Objects) and listening on a loopback port, for what talks to the service over HTTP: the CLI's
// `push` and the front-end client (test/edge-client-e2e.node.test.ts, scripts/measure-push.mjs).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Miniflare } from 'miniflare';

const ROOT = join(fileURLToPath(import.meta.url), '..', '..');

/**
 * Builds the Worker and starts it on 127.0.0.1 (a free port).
 * @param {Record<string, string>} bindings The Worker's `[vars]` (e.g. `{ AUTH_JWT_SECRET }`).
 * @returns {Promise<{ url: string; miniflare: Miniflare; dispose(): Promise<void> }>} `url` ends in `/`.
 */
export async function startEdgeWorker(bindings) {
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-edge.mjs'), '--bundle-only'], { cwd: ROOT, stdio: 'pipe' });
  const outDir = mkdtempSync(join(tmpdir(), 'dsh-edge-loopback-'));
  try {
    execFileSync(join(ROOT, 'node_modules/.bin/wrangler'), ['deploy', '--dry-run', '--outdir', outDir], {
      cwd: join(ROOT, 'examples/edge-worker'),
      stdio: 'pipe',
      env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' },
    });
    const miniflare = new Miniflare({
      modules: true,
      scriptPath: join(outDir, 'worker.js'),
      modulesRoot: outDir,
      modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
      compatibilityDate: '2026-04-01',
      compatibilityFlags: ['enable_request_signal'],
      r2Buckets: ['SESSIONS'],
      durableObjects: { CATALOG: { className: 'SessionCatalog', useSQLite: true } },
      bindings,
      host: '127.0.0.1',
      port: 0,
    });
    const url = (await miniflare.ready).href;
    return {
      url,
      miniflare,
      async dispose() {
        await miniflare.dispose();
        rmSync(outDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(outDir, { recursive: true, force: true });
    throw error;
  }
}
