/** CLI `search QUERY` over the sample store (SPEC §16.4, §16.6): the cached index across runs. */
import { appendFileSync, cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { SessionSearchHit } from '../src/index.js';
import { main } from '../src/node/main.js';
import { CJK, REAL } from './sample-ids.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TMP = mkdtempSync(join(tmpdir(), 'dsh-search-cli-'));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

async function cli(args: string[], env: Record<string, string | undefined>) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, env });
  return { code, stdout, stderr };
}

function setup(name: string) {
  const store = join(TMP, name, 'store');
  cpSync(join(ROOT, 'samples/store'), store, { recursive: true });
  // Session directories changed in the last 2 s are listed again by every run (their identity may
  // not show a change yet): set them in the past, as a store's directories are.
  for (const project of readdirSync(store)) for (const session of readdirSync(join(store, project))) utimesSync(join(store, project, session), 1_700_000_000, 1_700_000_000);
  const env = { XDG_CACHE_HOME: join(TMP, name, 'cache') };
  const search = async (query: string, ...flags: string[]) => {
    const { code, stdout, stderr } = await cli(['search', query, '--store', store, '--json', ...flags], env);
    expect([code, stderr]).toEqual([0, '']);
    return JSON.parse(stdout) as SessionSearchHit[];
  };
  const cacheDir = join(env.XDG_CACHE_HOME, 'dsh-session-reference');
  return { store, env, search, cacheDir, cjkLog: join(store, 'global/session-e5f1c2a0/session.jsonl') };
}

const assistantLine = (seq: number, text: string) =>
  `${JSON.stringify({ type: 'assistant/message', seq, time: 1789207912090, data: { turn: 3, step: 1, message: { role: 'assistant', content: [{ type: 'text', text }] } }, surfaceOp: 'append' })}\n`;

describe('CLI search (SPEC §16.6)', () => {
  it('finds a session by what was said, the matched word highlighted, as a table and as JSON', async () => {
    const { search, store, env } = setup('table');
    const [hit] = await search('gemini geliştiriyorduk');
    expect(hit?.sessionId).toBe(REAL);
    const snippet = hit!.snippets[0]!;
    expect(snippet.highlights.map(([a, b]) => snippet.text.slice(a, b).toLowerCase())).toContain('gemini');
    const table = await cli(['search', 'gemini', '--store', store, '--limit', '1'], env);
    expect(table.code).toBe(0);
    expect(table.stdout.split('\n')[0]!.split('\t')).toEqual([hit!.label, hit!.cwd, expect.stringMatching(/^\d+\.\d\d$/), expect.stringContaining('gemini')]);
  });

  it('keeps the index in the cache directory, reuses it, follows an appended message, and rebuilds a damaged one', async () => {
    const { search, cacheDir, cjkLog } = setup('cache');
    // A whole second, which utimes can set again exactly (the identity holds nanoseconds).
    const mtime = 1_700_000_000;
    utimesSync(cjkLog, mtime, mtime);
    expect((await search('设计')).map((h) => h.sessionId)).toContain(CJK);
    const [file] = readdirSync(cacheDir);
    expect(file).toMatch(/^search-[0-9a-f]{24}\.index$/);
    // The user's alone: it holds conversation text.
    expect(statSync(cacheDir).mode & 0o777).toBe(0o700);
    expect(statSync(join(cacheDir, file!)).mode & 0o777).toBe(0o600);
    // Nothing changed: the file is not written again.
    const written = statSync(join(cacheDir, file!)).mtimeMs;
    utimesSync(join(cacheDir, file!), 1_600_000_000, 1_600_000_000);
    expect((await search('设计')).map((h) => h.sessionId)).toContain(CJK);
    expect(statSync(join(cacheDir, file!)).mtimeMs).toBe(1_600_000_000_000);
    expect(written).not.toBe(1_600_000_000_000);
    // A log rewritten in place with its size and mtime put back is read again: its ctime is in
    // its identity (the stop-37 probe: the cached index answered for the old text).
    const original = readFileSync(cjkLog, 'utf8');
    expect((await search('稳定的错误码')).map((h) => h.sessionId)).toEqual([CJK]);
    writeFileSync(cjkLog, original.replaceAll('稳定', '固定'));
    utimesSync(cjkLog, mtime, mtime);
    expect((await search('稳定的错误码')).map((h) => h.sessionId)).toEqual([]);
    expect((await search('固定的错误码')).map((h) => h.sessionId)).toEqual([CJK]);
    writeFileSync(cjkLog, original);
    // Follows an appended message.
    appendFileSync(cjkLog, assistantLine(23, 'We settled on the zeppelinchecksum layout.'));
    expect((await search('zeppelinchecksum')).map((h) => h.sessionId)).toEqual([CJK]);
    // A damaged cache gives the right answer.
    const path = join(cacheDir, file!);
    const bytes = readFileSync(path);
    bytes[bytes.length >> 1] ^= 0x20;
    writeFileSync(path, bytes);
    expect((await search('zeppelinchecksum')).map((h) => h.sessionId)).toEqual([CJK]);
    writeFileSync(path, 'not an index');
    expect((await search('zeppelinchecksum')).map((h) => h.sessionId)).toEqual([CJK]);
  });

  it('ignores a relative XDG_CACHE_HOME (the XDG Base Directory rule): the cache goes under HOME', async () => {
    const { store } = setup('relative');
    const home = join(TMP, 'relative', 'home');
    const { code, stderr } = await cli(['search', 'gemini', '--store', store, '--json'], { XDG_CACHE_HOME: 'relative/cache', HOME: home });
    expect([code, stderr]).toEqual([0, '']);
    expect(existsSync(join(process.cwd(), 'relative'))).toBe(false);
    expect(readdirSync(join(home, '.cache', 'dsh-session-reference'))).toHaveLength(1);
  });

  it('never finds the --as session; usage errors exit 2', async () => {
    const { store, env } = setup('as');
    const { stdout } = await cli(['search', 'gemini', '--store', store, '--as', REAL, '--json'], env);
    expect((JSON.parse(stdout) as SessionSearchHit[]).map((h) => h.sessionId)).not.toContain(REAL);
    expect((await cli(['search', '--store', store], env)).code).toBe(2);
    expect((await cli(['search', 'x', '--match-titles', '--store', store], env)).code).toBe(2);
  });
});
