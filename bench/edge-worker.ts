/**
 * The edge service as the bench runs it (SPEC §17.2): the three-line Worker of
 * examples/edge-worker built by a plain `wrangler deploy --dry-run --outdir` (after
 * `scripts/build-edge.mjs --bundle-only` writes dist/edge/), and the Miniflare options that run
 * that output with its R2 bucket, `SessionCatalog` Durable Object and queue. Used by
 * `store-edge`, `store-worst` and `edge-bundle` (the upload size row).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { MiniflareOptions } from 'miniflare';
import type { StoreBenchHooks } from './store.js';

const BENCH = process.env.BENCH_DIR ?? 'bench';
const ROOT = join(BENCH, '..');
/** The Worker's compatibility date and flags (examples/edge-worker/wrangler.toml). */
export const COMPATIBILITY_DATE = '2026-04-01';

/** What `wrangler deploy --dry-run --outdir` wrote, and the sizes it reported. */
export interface BuiltWorker {
  dir: string;
  scriptPath: string;
  /** Removes `dir`. */
  remove(): void;
  /** wrangler's "Total Upload" and its gzip, in KiB, as printed. */
  upload: { kib: number; gzipKib: number };
}

function run(args: string[], cwd: string): string {
  const result = spawnSync(args[0]!, args.slice(1), { cwd, encoding: 'utf8', env: { ...process.env, WRANGLER_SEND_METRICS: 'false', NO_COLOR: '1' } });
  if (result.status !== 0) throw new Error(`${args.join(' ')} failed: ${result.stdout}${result.stderr}`);
  return `${result.stdout}${result.stderr}`;
}

/** Builds the three-line Worker as an app's `wrangler deploy` would. */
export function buildEdgeWorker(): BuiltWorker {
  run([process.execPath, join(ROOT, 'scripts', 'build-edge.mjs'), '--bundle-only'], ROOT);
  const dir = mkdtempSync(join(tmpdir(), 'dsh-bench-edge-'));
  const output = run([join(ROOT, 'node_modules', '.bin', 'wrangler'), 'deploy', '--dry-run', '--outdir', dir], join(ROOT, 'examples', 'edge-worker'));
  const sizes = /Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/.exec(output);
  if (!sizes) throw new Error(`wrangler printed no upload size: ${output}`);
  return { dir, scriptPath: join(dir, 'worker.js'), remove: () => rmSync(dir, { recursive: true, force: true }), upload: { kib: Number(sizes[1]), gzipKib: Number(sizes[2]) } };
}

/**
 * Miniflare options of the built Worker: R2 bucket `SESSIONS` (persisted at `r2Persist` when
 * given), the `SessionCatalog` namespace `CATALOG` on SQLite, `AUTH_MODE = "none"` (the bench's
 * logs are tenant `default`'s, under `tenants/default/`) and the given `[vars]`.
 */
export function edgeOptions(worker: BuiltWorker, vars: Record<string, string> = {}, r2Persist?: string): MiniflareOptions {
  return {
    modules: true,
    scriptPath: worker.scriptPath,
    modulesRoot: worker.dir,
    modulesRules: [{ type: 'CompiledWasm', include: ['**/*.wasm'] }],
    compatibilityDate: COMPATIBILITY_DATE,
    compatibilityFlags: ['enable_request_signal'],
    r2Buckets: ['SESSIONS'],
    ...(r2Persist !== undefined && { r2Persist }),
    durableObjects: { CATALOG: { className: 'SessionCatalog', useSQLite: true } },
    bindings: { AUTH_MODE: 'none', ...vars },
  };
}

/** The R2 key prefix of the bench's tenant (`AUTH_MODE = "none"`). */
export const BENCH_TENANT_PREFIX = 'tenants/default/';

/** `npm run bench -- --only edge-bundle`: what a plain `wrangler deploy` of the three-line Worker uploads (SPEC §17.2). */
export function benchEdgeBundle(hooks: StoreBenchHooks): void {
  console.log('\nEdge — the upload of the three-line Worker (wrangler deploy --dry-run, SPEC §17.2)');
  const worker = buildEdgeWorker();
  const files = readdirSync(worker.dir).filter((file) => file.endsWith('.js') || file.endsWith('.wasm'));
  const parts = files.map((file) => {
    const bytes = readFileSync(join(worker.dir, file));
    return `${file.replace(/^[0-9a-f]{40}-/, '')} ${(bytes.length / 1024).toFixed(0)} KiB (gzip ${(gzipSync(bytes).length / 1024).toFixed(0)})`;
  });
  worker.remove();
  hooks.countRow(
    'edge',
    'KiB gzip uploaded by wrangler deploy of the three-line Worker',
    Math.round(worker.upload.gzipKib),
    800,
    `wrangler: ${worker.upload.kib} KiB, gzip ${worker.upload.gzipKib} KiB ≤ 800 KiB; ${parts.join(', ')}; no JavaScript form of libzstd or SQLite`,
  );
}
