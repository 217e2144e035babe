/**
 * Search where WebAssembly cannot run at all (SPEC §16.5): a page whose Content-Security-Policy
 * forbids it, workerd without the module provided, a locked-down browser. Node's `--jitless` runs
 * without WebAssembly, so a bundle of the library run there stands for them: searchSessions
 * rejects with SESSION_REFERENCE_INVALID_CONFIG (the app's setup must change), never hangs, and
 * the rest of the service still works.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const tmp = mkdtempSync(join(tmpdir(), 'dsh-no-wasm-'));

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SCRIPT = `
import { createSessionReferences } from '${join(ROOT, 'src/index.ts')}';
import { fakeQuery, userMessage } from '${join(ROOT, 'test/sessions.ts')}';
const refs = createSessionReferences({ sessionQuery: fakeQuery([{ header: { id: 's', createdAt: 1 }, events: [userMessage(1, 'the zeppelin landed')] }]) });
const outcome = async (promise) => promise.then((value) => ({ value }), (error) => ({ code: error.code, message: error.message }));
console.log(JSON.stringify({
  webAssembly: typeof WebAssembly,
  search: await outcome(refs.searchSessions({ id: 'me' }, 'zeppelin')),
  again: await outcome(refs.searchSessions({ id: 'me' }, 'zeppelin')),
  exported: await outcome(refs.exportSearchIndex()),
  candidates: (await refs.listCandidates({ id: 'me' })).map((row) => row.sessionId),
}));
`;

describe('search without WebAssembly', () => {
  it('rejects with SESSION_REFERENCE_INVALID_CONFIG naming the fix, every time, and the rest of the service works', async () => {
    const entry = join(tmp, 'entry.mjs');
    writeFileSync(entry, SCRIPT);
    const out = join(tmp, 'out');
    await build({ entryPoints: [entry], bundle: true, splitting: true, format: 'esm', platform: 'neutral', mainFields: ['module', 'main'], outdir: out, logLevel: 'silent' });
    const result = JSON.parse(execFileSync(process.execPath, ['--jitless', join(out, 'entry.js')], { encoding: 'utf8' })) as Record<string, any>;
    expect(result.webAssembly).toBe('undefined');
    for (const key of ['search', 'again', 'exported']) {
      expect(result[key].code, key).toBe('SESSION_REFERENCE_INVALID_CONFIG');
      expect(result[key].message).toMatch(/WebAssembly.*'wasm-unsafe-eval'.*provideSqliteWasm/);
    }
    expect(result.candidates).toEqual(['s']);
  });
});
