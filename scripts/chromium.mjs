// The one headless Chromium every browser launch of the project uses: the Chromium runtime of the
// test matrix (vitest browser mode), the playground e2e test and the screenshot script.
//
// The browser comes from the lockfile: `@sparticuz/chromium` (a devDependency, pinned in
// package-lock.json) ships a headless Chromium inside its npm package. `chromiumExecutable()`
// unpacks it once (about 3 s) into node_modules/.cache/ and returns its path, so `npm ci` is all
// a machine needs — no apt, no browser download (never `playwright install`: downloads fail here).
//
// A system Chromium is used only when asked for: `CHROMIUM_PATH=/usr/bin/chromium npm test`.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Headless, and quiet: without the background-networking flags the closed network refuses many connections. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-dev-shm-usage',
];

/** The version of the packaged Chromium (the `@sparticuz/chromium` package version). */
function packagedVersion() {
  const manifest = join(ROOT, 'node_modules', '@sparticuz', 'chromium', 'package.json');
  if (!existsSync(manifest)) throw new Error('@sparticuz/chromium is not installed: run `npm ci`');
  return JSON.parse(readFileSync(manifest, 'utf8')).version;
}

/**
 * Unpacks the packaged Chromium into `node_modules/.cache/sparticuz-chromium-<version>/` (once;
 * later calls return at once). The package unpacks into `os.tmpdir()`, so a child process does it
 * with TMPDIR pointing at a private folder, which is then renamed into place: concurrent callers
 * never see a half-written browser, and a stale /tmp/chromium of another version is never used.
 * @returns {string} path of the `chromium` executable
 */
function unpackPackagedChromium() {
  const cacheDir = join(ROOT, 'node_modules', '.cache', `sparticuz-chromium-${packagedVersion()}`);
  const executable = join(cacheDir, 'chromium');
  if (existsSync(executable)) return executable;
  const staging = `${cacheDir}.staging-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const unpack = spawnSync(
    process.execPath,
    ['--input-type=module', '-e', "const { default: c } = await import('@sparticuz/chromium'); console.log(await c.executablePath());"],
    { cwd: ROOT, env: { ...process.env, TMPDIR: staging }, encoding: 'utf8' },
  );
  if (unpack.status !== 0 || !existsSync(join(staging, 'chromium'))) {
    rmSync(staging, { recursive: true, force: true });
    throw new Error(`could not unpack @sparticuz/chromium (run \`npm ci\`): ${unpack.stderr.trim() || unpack.stdout.trim()}`);
  }
  try {
    renameSync(staging, cacheDir);
  } catch (error) {
    // Another process won the race: its copy is complete, use it.
    rmSync(staging, { recursive: true, force: true });
    if (!existsSync(executable)) throw error;
  }
  return executable;
}

/**
 * The Chromium executable to launch: `$CHROMIUM_PATH` when set (a system browser, on request only),
 * else the packaged one from `@sparticuz/chromium`.
 * @returns {string}
 */
export function chromiumExecutable() {
  const requested = process.env.CHROMIUM_PATH;
  if (requested) {
    if (!existsSync(requested)) throw new Error(`CHROMIUM_PATH=${requested} does not exist`);
    return requested;
  }
  return unpackPackagedChromium();
}
