// Runs e2e.test.mjs with node's test runner (spec reporter) and closes with one
// `N passed, N failed` line, the line `npm run test:dsh-host` ends with (`npm test` adds the counts to its totals).
import { writeFileSync } from 'node:fs';
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { fileURLToPath } from 'node:url';

let passed = 0;
let failed = 0;
const stream = run({ files: [fileURLToPath(new URL('./e2e.test.mjs', import.meta.url))], timeout: 600_000 });
// Suites and the file itself report too; count the tests. A file or hook that fails outright counts as a failure.
stream.on('test:pass', (event) => {
  if (event.details?.type !== 'suite') passed += 1;
});
stream.on('test:fail', (event) => {
  if (event.details?.type !== 'suite') failed += 1;
});
const report = stream.compose(spec);
report.pipe(process.stdout);
await new Promise((resolve) => report.on('end', resolve));
if (passed + failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);
// `npm test` (scripts/test-matrix.mjs) adds these counts to its totals.
if (process.env.DSH_HOST_REPORT) writeFileSync(process.env.DSH_HOST_REPORT, JSON.stringify({ passed, failed }));
process.exitCode = failed === 0 ? 0 : 1;
