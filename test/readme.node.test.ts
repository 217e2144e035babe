import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { createSessionReferences } from '../src/index.js';
import { createMemorySessionQuery, parseSessionLog } from '../src/store/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const readme = readFileSync(`${root}README.md`, 'utf8');

/** The fenced block that follows `<!-- marker -->` in the README. */
function blockAfter(marker: string): string {
  const at = readme.indexOf(`<!-- ${marker} -->`);
  expect(at, `README marker ${marker}`).toBeGreaterThanOrEqual(0);
  const open = readme.indexOf('\n', readme.indexOf('```', at)) + 1;
  return readme.slice(open, readme.indexOf('```', open));
}

describe('README stays true', () => {
  it('shows examples/quickstart.ts verbatim', () => {
    expect(blockAfter('quickstart:code')).toBe(readFileSync(`${root}examples/quickstart.ts`, 'utf8'));
  });

  it('shows the exact output of examples/quickstart.ts (the model-visible text)', () => {
    const output = execFileSync(process.execPath, [`${root}scripts/run-example.mjs`, `${root}examples/quickstart.ts`], { encoding: 'utf8' });
    expect(blockAfter('quickstart:output')).toBe(output);
  });

  it('the hand-written log folds and projects as shown: checkpoint by source, replace by seqs (SPEC §4.5, §8.2)', async () => {
    const log = parseSessionLog(blockAfter('handwritten-log'));
    const refs = createSessionReferences({ sessionQuery: createMemorySessionQuery([log]) });
    const { context } = await refs.prepare({ id: 'me' }, [], [{ sessionId: 'session-notes' }]);
    const block = /<referenced-sessions>\n(.*)\n<\/referenced-sessions>/s.exec(context!.content[0].text)![1]!;
    expect(JSON.parse(block)[0].conversation).toEqual(JSON.parse(blockAfter('handwritten-log:conversation')));
    expect(blockAfter('handwritten-log')).not.toContain('"checkpoint"');
  });

  it('names the test command CI runs', () => {
    expect(readme).toContain('npm test ');
    expect(readFileSync(`${root}.ci/run`, 'utf8')).toMatch(/^npm test$/m);
  });
});
