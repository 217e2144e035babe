/** The `dsh-session-reference` CLI (SPEC §12.2) through `main()`, the demo, and the built bin once. */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeSessionReferenceUri, formatSessionReferenceMention } from '../src/index.js';
import { main, USAGE } from '../src/node/main.js';
import { CJK, COMPACTED, ENVELOPED, LARGE, REAL, TARGET, VERSIONS } from './sample-ids.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TMP = mkdtempSync(join(tmpdir(), 'dsh-cli-test-'));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

const REAL_MENTION = formatSessionReferenceMention({ sessionId: REAL, label: 'Bu projeyi gemini ile geliştiriyorduk' });

async function cli(args: string[], env: Record<string, string | undefined> = {}, stdin?: AsyncIterable<Uint8Array | string>) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env,
    ...(stdin && { stdin }),
  });
  return { code, stdout, stderr };
}

/** Expects a usage error: exit 2, the problem and the usage line on stderr, nothing on stdout. */
async function expectUsage(args: string[], problem: string | RegExp) {
  const result = await cli(args);
  expect(result.code, JSON.stringify(result)).toBe(2);
  expect(result.stdout).toBe('');
  const [first, second, ...rest] = result.stderr.split('\n');
  expect(first).toMatch(problem);
  expect(second).toBe(USAGE);
  expect(rest).toEqual(['']);
}

/** Expects `CODE: message` on one stderr line and exit 1. */
async function expectError(args: string[], code: string, env: Record<string, string | undefined> = {}) {
  const result = await cli(args, env);
  expect(result.code, JSON.stringify(result)).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(new RegExp(`^${code}: [^\\n]+\\n$`));
  return result.stderr;
}

/** The JSON between the tags of a prepared prompt. */
function block(text: string): unknown {
  const open = '<referenced-sessions>\n';
  const close = '\n</referenced-sessions>';
  expect(text.split(open).length).toBe(2);
  expect(text.split(close).length).toBe(2);
  return JSON.parse(text.slice(text.indexOf(open) + open.length, text.indexOf(close)));
}

describe('encode / decode / parse', () => {
  it('encode prints the URI; --json an object', async () => {
    expect(await cli(['encode', 'session-434'])).toEqual({ code: 0, stdout: 'dsh-session:InNlc3Npb24tNDM0Ig\n', stderr: '' });
    expect(JSON.parse((await cli(['encode', CJK, '--json'])).stdout)).toEqual({ sessionId: CJK, uri: encodeSessionReferenceUri(CJK) });
    expect((await cli(['encode', ''])).stdout).toBe('dsh-session:IiI\n');
  });

  it('decode prints the id; --json an object; a non-canonical URI is INVALID_REFERENCE', async () => {
    expect(await cli(['decode', encodeSessionReferenceUri(CJK)])).toEqual({ code: 0, stdout: `${CJK}\n`, stderr: '' });
    expect(JSON.parse((await cli(['--json', 'decode', 'dsh-session:IiI'])).stdout)).toEqual({ uri: 'dsh-session:IiI', sessionId: '' });
    const stderr = await expectError(['decode', 'dsh-session:InNlc3Npb24tNDM0Ig=='], 'SESSION_REFERENCE_INVALID_REFERENCE');
    expect(stderr).toContain('dsh-session:InNlc3Npb24tNDM0Ig==');
  });

  it('parse prints the readable text then one JSON line per reference', async () => {
    const text = `see ${REAL_MENTION} and ${encodeSessionReferenceUri('s-2')}, again ${REAL_MENTION}`;
    const result = await cli(['parse', text]);
    expect(result.code).toBe(0);
    expect(result.stdout.split('\n')).toEqual([
      'see @Bu projeyi gemini ile geliştiriyorduk and @s-2, again @Bu projeyi gemini ile geliştiriyorduk',
      JSON.stringify({ sessionId: REAL, label: 'Bu projeyi gemini ile geliştiriyorduk' }),
      JSON.stringify({ sessionId: 's-2', label: 's-2' }),
      JSON.stringify({ sessionId: REAL, label: 'Bu projeyi gemini ile geliştiriyorduk' }),
      '',
    ]);
    expect(JSON.parse((await cli(['parse', '--json', 'plain text'])).stdout)).toEqual({ text: 'plain text', references: [] });
    await expectError(['parse', '@[x](dsh-session:)'], 'SESSION_REFERENCE_INVALID_REFERENCE');
    // One newline is added to every output, so the text's own trailing newline survives.
    expect((await cli(['parse', 'two\nlines\n'])).stdout).toBe('two\nlines\n\n');
    // -- lets TEXT start with a dash.
    expect((await cli(['parse', '--', '--not-a-flag'])).stdout).toBe('--not-a-flag\n');
  });
});

describe('"-" reads standard input', () => {
  async function* chunks(...parts: Array<Uint8Array | string>) {
    yield* parts;
  }
  const bytes = (text: string) => new TextEncoder().encode(text);

  it('as UTF-8 across chunk boundaries, without one trailing newline', async () => {
    const id = 'sessão 🦀';
    const encoded = bytes(`${id}\n`);
    // Split inside the 4-byte crab: the decoder must join the halves.
    const result = await cli(['encode', '-'], {}, chunks(encoded.subarray(0, 10), encoded.subarray(10)));
    expect(result).toEqual({ code: 0, stdout: `${encodeSessionReferenceUri(id)}\n`, stderr: '' });
    expect((await cli(['decode', '-'], {}, chunks(`${encodeSessionReferenceUri(id)}\r\n`))).stdout).toBe(`${id}\n`);
    // Only one trailing newline goes; inner and earlier ones are data.
    expect((await cli(['parse', '-'], {}, chunks('a\n\n', 'dsh-session:ImEi\n\n'))).stdout).toBe('a\n\n@a\n\n{"sessionId":"a","label":"a"}\n');
  });

  it('prepare - reads the MESSAGE', async () => {
    const result = await cli(['prepare', '--demo', '--as', TARGET, '-'], {}, chunks(bytes(`Summarize ${REAL_MENTION}\n`)));
    expect(result.stderr).toBe('');
    expect(result.stdout.endsWith('## My request:\n\nSummarize @Bu projeyi gemini ile geliştiriyorduk\n')).toBe(true);
  });

  it('is a usage error without standard input or with invalid UTF-8; a QUERY "-" is literal', async () => {
    await expectUsage(['parse', '-'], /"-" reads standard input, which is not available here/);
    const invalid = await cli(['parse', '-'], {}, chunks(new Uint8Array([0x61, 0xff])));
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/^dsh-session-reference: cannot read standard input: /);
    const listed = await cli(['candidates', '-', '--demo'], {}, chunks('never read'));
    expect(listed.code).toBe(0);
  });
});

describe('usage errors (exit 2) and --help', () => {
  it('--help prints the help on stdout', async () => {
    for (const args of [['--help'], ['-h'], ['prepare', '--help']]) {
      const result = await cli(args);
      expect(result.code).toBe(0);
      expect(result.stderr).toBe('');
      expect(result.stdout).toContain(USAGE);
      for (const word of ['candidates [QUERY]', 'prepare MESSAGE', 'encode ID', 'decode URI', 'parse TEXT', '--store DIR', '--demo', '--as SESSION_ID', '--limit N', '--match-titles', '--max-reference-bytes N', '--json']) {
        expect(result.stdout).toContain(word);
      }
    }
  });

  it('rejects malformed command lines', async () => {
    await expectUsage([], /missing command/);
    await expectUsage(['frobnicate'], /unknown command "frobnicate"/);
    await expectUsage(['encode'], /encode needs ID/);
    await expectUsage(['encode', 'a', 'b'], /encode takes one ID/);
    await expectUsage(['candidates', 'a', 'b'], /candidates takes one QUERY/);
    await expectUsage(['parse', 'x', '--bogus'], /bogus/);
    await expectUsage(['candidates', '--store'], /--store/);
    await expectUsage(['prepare', 'hello', '--demo'], /prepare needs --as/);
    await expectUsage(['candidates', '--demo', '--store', '/tmp'], /exclude each other/);
    await expectUsage(['encode', 'x', '--limit', '3'], /--limit does not apply to encode/);
    await expectUsage(['candidates', '--demo', '--max-reference-bytes', '9'], /--max-reference-bytes does not apply to candidates/);
    await expectUsage(['prepare', 'x', '--demo', '--as', TARGET, '--limit', '2'], /--limit does not apply to prepare/);
    await expectUsage(['candidates', '--demo', '--limit', 'ten'], /--limit must be a positive integer in decimal digits \(at most 9007199254740991\), got "ten"/);
    await expectUsage(['prepare', 'x', '--demo', '--as', TARGET, '--max-reference-bytes', '1.5'], /--max-reference-bytes must be a positive integer .*, got "1\.5"/);
    // One parser of counts for the CLI and the edge Worker: digits only, quoted as given.
    for (const bad of [' 100', '100 ', '+5', '0', '1e3', '0x10', '9007199254740993', '']) {
      await expectUsage(['candidates', '--demo', '--limit', bad], new RegExp(`--limit must be a positive integer .*, got ${JSON.stringify(bad).replace(/[+.]/g, '\\$&')}$`, 'm'));
    }
    await expectUsage(['decode', 'x', '--as', 'y'], /--as does not apply to decode/);
    // An option given twice (the stop-36 probe: the last --store was taken silently).
    await expectUsage(['candidates', '--store', '/tmp/a', '--store', '/tmp/b'], /--store is given more than once/);
    await expectUsage(['candidates', '--demo', '--json', '--json'], /--json is given more than once/);
  });
});

describe('candidates', () => {
  it('lists the demo store: one tab-separated line per session (label, id, created, cwd, mention)', async () => {
    const result = await cli(['candidates', '--demo']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(7);
    const real = lines.map((line) => line.split('\t')).find((fields) => fields[1] === REAL)!;
    expect(real).toEqual(['Bu projeyi gemini ile geliştiriyorduk', REAL, '2026-09-14 19:50', '/home/user/projects/01_unicorn/77-Dumen', REAL_MENTION]);
    expect(lines.find((line) => line.includes(CJK))!.split('\t')[3]).toBe('(no cwd)');
  });

  it('--as excludes the target and ranks by its cwd; QUERY filters; --limit cuts', async () => {
    const json = await cli(['candidates', '--demo', '--as', TARGET, '--json']);
    expect(json.code).toBe(0);
    const rows = JSON.parse(json.stdout) as Array<{ sessionId: string; label: string; mention: string; cwd?: string; createdAt: number }>;
    expect(rows.map((r) => r.sessionId)).toEqual([COMPACTED, REAL, CJK, ENVELOPED, VERSIONS, LARGE]);
    expect(rows[1]).toEqual({
      sessionId: REAL,
      label: 'Bu projeyi gemini ile geliştiriyorduk',
      createdAt: 1789415426008,
      cwd: '/home/user/projects/01_unicorn/77-Dumen',
      mention: REAL_MENTION,
    });
    const filtered = await cli(['candidates', 'LEDGER', '--demo', '--as', TARGET, '--limit', '2', '--json']);
    expect(JSON.parse(filtered.stdout).map((r: { sessionId: string }) => r.sessionId)).toEqual([ENVELOPED, VERSIONS]);
    expect((await cli(['candidates', 'no-such-thing', '--demo'])).stdout).toBe('');
  });

  it('--match-titles: QUERY also matches titles (SPEC §6.7); without it titles are never searched', async () => {
    const matched = await cli(['candidates', 'GEMINI', '--demo', '--as', TARGET, '--match-titles', '--json']);
    expect(matched.code).toBe(0);
    expect(JSON.parse(matched.stdout).map((r: { sessionId: string }) => r.sessionId)).toEqual([REAL]);
    expect((await cli(['candidates', 'GEMINI', '--demo', '--as', TARGET, '--json'])).stdout.trim()).toBe('[]');
    await expectUsage(['prepare', 'x', '--demo', '--as', TARGET, '--match-titles'], /--match-titles does not apply to prepare/);
  });

  it('errors: unknown --as is NOT_FOUND (--limit 0 is a usage error: counts are positive)', async () => {
    const stderr = await expectError(['candidates', '--demo', '--as', 'session-missing'], 'SESSION_REFERENCE_NOT_FOUND');
    expect(stderr).toContain('"session-missing"');
    await expectUsage(['candidates', '--demo', '--limit', '0'], /--limit must be a positive integer/);
  });

  it('errors quote a number past 2^53 − 1 as it was typed, not as it would be rounded (a usage error, exit 2)', async () => {
    for (const args of [['candidates', '--demo', '--limit', '9007199254740993'], ['prepare', 'x', '--demo', '--as', TARGET, '--max-reference-bytes', '9007199254740993']]) {
      const result = await cli(args);
      expect(result.code, JSON.stringify(result)).toBe(2);
      expect(result.stderr).toContain('"9007199254740993"');
      expect(result.stderr).not.toContain('9007199254740992');
    }
  });

  it('--store DIR and the default store ($DSH_HOME/sessions) are read', async () => {
    const dshHome = join(TMP, 'dsh-home');
    const dir = join(dshHome, 'sessions', 'proj', 'folder');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'session.v3.jsonl'), `${JSON.stringify({ type: 'session', version: 3, id: 'mine', createdAt: 0 })}\n`);
    const viaStore = await cli(['candidates', '--store', join(dshHome, 'sessions')]);
    expect(viaStore.stdout).toBe(`mine\tmine\t1970-01-01 00:00\t(no cwd)\t${formatSessionReferenceMention({ sessionId: 'mine' })}\n`);
    const viaEnv = await cli(['candidates'], { DSH_HOME: dshHome });
    expect(viaEnv.stdout).toBe(viaStore.stdout);
    // A store that does not exist has no sessions, and says so on stderr (a mistyped path must not look like an empty store).
    expect(await cli(['candidates', '--store', join(TMP, 'nothing-here')])).toEqual({
      code: 0,
      stdout: '',
      stderr: `note: no dsh sessions found under ${JSON.stringify(join(TMP, 'nothing-here'))}\n`,
    });
    // A corrupt log fails with its path.
    writeFileSync(join(dir, 'session.v3.jsonl'), 'nope\n');
    const stderr = await expectError(['candidates', '--store', join(dshHome, 'sessions')], 'SESSION_REFERENCE_INVALID_LOG');
    expect(stderr).toContain(join(dir, 'session.v3.jsonl'));
  });

  it('puts control characters of a field on one line (JSON-quoted)', async () => {
    const root = join(TMP, 'ctl-store');
    const dir = join(root, 'p', 's');
    mkdirSync(dir, { recursive: true });
    const title = { type: 'session/title', seq: 0, time: 0, data: { title: 'two\nlines' } };
    writeFileSync(join(dir, 'session.jsonl'), `${JSON.stringify({ type: 'session', version: 1, id: 'tab\there', createdAt: 0, cwd: '/c' })}\n${JSON.stringify(title)}\n`);
    const result = await cli(['candidates', '--store', root]);
    expect(result.stdout.split('\n')).toHaveLength(2);
    // The title is a label cleaned to one line (SPEC §6.6); the id is data, printed quoted.
    expect(result.stdout.split('\t').slice(0, 2)).toEqual(['two lines', '"tab\\there"']);
  });
});

describe('prepare', () => {
  const prompt = `Compare ${REAL_MENTION} with ${formatSessionReferenceMention({ sessionId: COMPACTED, label: 'the compacted one' })} please.`;

  it('prints the composed prompt the model sees', async () => {
    const result = await cli(['prepare', prompt, '--demo', '--as', TARGET]);
    expect(result.code).toBe(0);
    expect(result.stderr).toBe('');
    const out = result.stdout;
    expect(out.startsWith('## Referenced sessions\n\n')).toBe(true);
    expect(out.endsWith('\n\n## My request:\n\nCompare @Bu projeyi gemini ile geliştiriyorduk with @the compacted one please.\n')).toBe(true);
    const refs = block(out) as Array<{ sessionId: string; label: string }>;
    expect(refs.map((r) => [r.sessionId, r.label])).toEqual([
      [REAL, 'Bu projeyi gemini ile geliştiriyorduk'],
      [COMPACTED, 'the compacted one'],
    ]);
  });

  it('--json prints { message, metadata }', async () => {
    const result = await cli(['prepare', prompt, '--demo', '--as', TARGET, '--json']);
    expect(result.code).toBe(0);
    const { message, metadata } = JSON.parse(result.stdout);
    expect(message).toMatchObject({ role: 'user', source: { kind: 'user' } });
    expect(message.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(message.content).toHaveLength(2);
    expect(message.content[1]).toEqual({ type: 'text', text: 'Compare @Bu projeyi gemini ile geliştiriyorduk with @the compacted one please.' });
    expect(message.envelope.display).toEqual([message.content[1]]);
    expect(metadata).toEqual(message.envelope.contexts[0].metadata);
    expect(metadata.version).toBe(1);
    expect(metadata.references.map((r: { sessionId: string; compacted: boolean; budgetBytes: number }) => [r.sessionId, r.compacted, r.budgetBytes])).toEqual([
      [REAL, false, 65536],
      [COMPACTED, true, 65536],
    ]);
  });

  it('a message without mentions is printed unchanged; metadata null', async () => {
    expect(await cli(['prepare', 'just text', '--demo', '--as', TARGET])).toEqual({ code: 0, stdout: 'just text\n', stderr: '' });
    expect(JSON.parse((await cli(['prepare', 'just text', '--demo', '--as', TARGET, '--json'])).stdout).metadata).toBeNull();
  });

  it('--max-reference-bytes bounds every reference; too small is BUDGET_EXCEEDED; 0 is a usage error', async () => {
    const mention = formatSessionReferenceMention({ sessionId: LARGE });
    const result = await cli(['prepare', `see ${mention}`, '--demo', '--as', TARGET, '--max-reference-bytes', '3000', '--json']);
    expect(result.code).toBe(0);
    const [reference] = JSON.parse(result.stdout).metadata.references;
    expect(reference).toMatchObject({ truncated: true, budgetBytes: 3000 });
    expect(reference.serializedBytes).toBeLessThanOrEqual(3000);
    await expectError(['prepare', `see ${mention}`, '--demo', '--as', TARGET, '--max-reference-bytes', '20'], 'SESSION_REFERENCE_BUDGET_EXCEEDED');
    await expectUsage(['prepare', `see ${mention}`, '--demo', '--as', TARGET, '--max-reference-bytes', '0'], /--max-reference-bytes must be a positive integer/);
  });

  it('the default budget retains the large session', async () => {
    const result = await cli(['prepare', `see ${formatSessionReferenceMention({ sessionId: LARGE })}`, '--demo', '--as', TARGET, '--json']);
    expect(JSON.parse(result.stdout).metadata.references[0]).toMatchObject({ truncated: true, budgetBytes: 65536 });
  });

  it('errors: unknown --as, self reference, unknown cited session, too many, bad mention', async () => {
    await expectError(['prepare', prompt, '--demo', '--as', 'nobody'], 'SESSION_REFERENCE_NOT_FOUND');
    await expectError(['prepare', `me: ${formatSessionReferenceMention({ sessionId: TARGET })}`, '--demo', '--as', TARGET], 'SESSION_REFERENCE_SELF_REFERENCE');
    const stderr = await expectError(['prepare', `x ${formatSessionReferenceMention({ sessionId: 'ghost' })}`, '--demo', '--as', TARGET], 'SESSION_REFERENCE_READ_FAILED');
    expect(stderr).toContain('ghost');
    const four = [REAL, COMPACTED, CJK, LARGE].map((sessionId) => formatSessionReferenceMention({ sessionId })).join(' ');
    await expectError(['prepare', four, '--demo', '--as', TARGET], 'SESSION_REFERENCE_TOO_MANY');
    await expectError(['prepare', '@[x](dsh-session:!!)', '--demo', '--as', TARGET], 'SESSION_REFERENCE_INVALID_REFERENCE');
  });
});

describe('npm run demo (SPEC §12.2)', () => {
  /** The CLI arguments of the `demo` script in package.json, after `node dist/node/cli.js`. */
  function demoArgs(): string[] {
    const script: string = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts.demo;
    const match = /node dist\/node\/cli\.js prepare --demo --as (\S+) "([^"]+)"$/.exec(script);
    expect(match, script).not.toBeNull();
    return ['prepare', '--demo', '--as', match![1]!, match![2]!];
  }

  it('shows the referenced sessions block, then the readable request', async () => {
    const args = demoArgs();
    expect(args[3]).toBe(TARGET);
    expect(args[4]).toContain(REAL_MENTION);
    const result = await cli(args);
    expect(result.code).toBe(0);
    const out = result.stdout;
    expect(out.split('## Referenced sessions').length).toBe(2);
    expect(out.startsWith('## Referenced sessions\n\n')).toBe(true);
    const refs = block(out) as Array<{ sessionId: string; conversation: Array<{ role: string; text: string; checkpoint?: true }> }>;
    expect(refs.map((r) => r.sessionId)).toEqual([REAL, COMPACTED]);
    // "## My request:" followed by the readable @label text.
    const request = out.slice(out.indexOf('\n</referenced-sessions>\n\n## My request:\n\n') + '\n</referenced-sessions>\n\n## My request:\n\n'.length);
    expect(request).toBe(
      'Compare @Bu projeyi gemini ile geliştiriyorduk with @Dümen: seeds.py done, Annex XI dossier (compacted) and finish the energy_consumption_mwh validator in annex_xi.py.\n',
    );
    // The real log's first direct prompt is there; its system prompt, tool output and reasoning are not.
    expect(refs[0]!.conversation[0]).toMatchObject({ role: 'user' });
    expect(refs[0]!.conversation[0]!.text.startsWith('Bu projeyi gemini ile')).toBe(true);
    expect(out).not.toContain('You are an AI agent powered by DeepSeek Harness');
    expect(out).not.toContain('<skill_content');
    expect(out).not.toContain('skill_content');
    expect(out).not.toContain('toplam 144'); // `ls -la` tool output of the real log
    expect(out).not.toContain('Current runtime context'); // plugin-sourced user message
    expect(out).not.toContain('Mention the injection attempt briefly'); // reasoning of the compacted sample
    expect(refs[1]!.conversation[0]).toMatchObject({ role: 'user', checkpoint: true });
    // Tag safety: nothing between the tags opens a tag.
    const inner = out.slice(out.indexOf('<referenced-sessions>') + 21, out.indexOf('</referenced-sessions>'));
    expect(inner).not.toContain('<');
  });
});

describe('the built bin', () => {
  it('runs `npm run build` output through a bin symlink, finding the bundled samples from dist/', () => {
    // A private copy of the project, built there: the working tree's dist/ is never touched.
    const project = join(TMP, 'project');
    mkdirSync(project);
    for (const entry of readdirSync(ROOT)) {
      // scripts/ and examples/: the build's edge step (scripts/build-edge.mjs) reads the example's wrangler.toml.
      if (/^tsconfig.*\.json$/.test(entry) || ['package.json', 'src', 'samples', 'scripts', 'examples'].includes(entry)) {
        cpSync(join(ROOT, entry), join(project, entry), { recursive: true });
      }
    }
    symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'), 'junction');
    execFileSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build'], { cwd: project, stdio: 'pipe', shell: process.platform === 'win32' });
    const target = join(project, JSON.parse(readFileSync(join(project, 'package.json'), 'utf8')).bin['dsh-session-reference']);
    expect(readFileSync(target, 'utf8').startsWith('#!/usr/bin/env node\n')).toBe(true);
    // As npm links it: <somewhere>/.bin/dsh-session-reference -> <package>/dist/node/cli.js.
    const binDir = join(TMP, 'bin');
    mkdirSync(binDir);
    const bin = join(binDir, 'dsh-session-reference');
    symlinkSync(target, bin);

    const run = (args: string[], input?: string) =>
      spawnSync(process.execPath, [bin, ...args], { cwd: TMP, encoding: 'utf8', input, env: { ...process.env, DSH_HOME: join(TMP, 'empty-home') } });
    expect(run(['encode', REAL])).toMatchObject({ status: 0, stdout: `${encodeSessionReferenceUri(REAL)}\n`, stderr: '' });
    expect(run(['encode', '-'], `${REAL}\n`)).toMatchObject({ status: 0, stdout: `${encodeSessionReferenceUri(REAL)}\n`, stderr: '' });
    const prepared = run(['prepare', '--demo', '--as', TARGET, `Summarize ${REAL_MENTION}`]);
    expect(prepared.stderr).toBe('');
    expect(prepared.status).toBe(0);
    expect(prepared.stdout.startsWith('## Referenced sessions\n')).toBe(true);
    expect(prepared.stdout).toContain('"text":"Bu projeyi gemini ile');
    expect(prepared.stdout.endsWith('## My request:\n\nSummarize @Bu projeyi gemini ile geliştiriyorduk\n')).toBe(true);
    expect(run(['candidates'])).toMatchObject({ status: 0, stdout: '', stderr: expect.stringMatching(/^note: no dsh sessions found under .*empty-home\/sessions/) }); // $DSH_HOME/sessions does not exist
    const failed = run(['decode', 'nope']);
    expect(failed.status).toBe(1);
    expect(failed.stderr).toMatch(/^SESSION_REFERENCE_INVALID_REFERENCE: .*\n$/);
    const usage = run([]);
    expect(usage.status).toBe(2);
    expect(usage.stderr).toContain(USAGE);
    // Without WebAssembly (V8's --jitless), search is the engine's one INVALID_CONFIG line, not a ReferenceError (the second probe of issue 30, finding 4).
    const jitless = spawnSync(process.execPath, ['--jitless', bin, 'search', 'gemini', '--demo', '--no-cache'], { cwd: TMP, encoding: 'utf8' });
    expect(jitless.status).toBe(1);
    expect(jitless.stderr).toMatch(/\nSESSION_REFERENCE_INVALID_CONFIG: search needs WebAssembly .*\n$|^SESSION_REFERENCE_INVALID_CONFIG: search needs WebAssembly .*\n$/);
  });
});

describe('terminal safety: untrusted strings never reach the terminal raw (SPEC §12.2)', () => {
  /** Every C0 and C1 control character (U+0000–U+001F, U+007F–U+009F). */
  const CONTROLS = [...Array.from({ length: 0x20 }, (_, c) => c), ...Array.from({ length: 0x21 }, (_, c) => 0x7f + c)].map((c) => String.fromCharCode(c));
  /** Raw controls in `text` other than the allowed ones (line breaks, table tabs). */
  const rawControls = (text: string, allowed: string) => [...text].filter((c) => CONTROLS.includes(c) && !allowed.includes(c));
  /** The escape SPEC §12.2 asks for, written independently of src/node/terminal.ts. */
  const escaped = (text: string, keepNewlines = false) =>
    [...text].map((c) => (CONTROLS.includes(c) && !(keepNewlines && c === '\n') ? ({ '\b': '\\b', '\t': '\\t', '\n': '\\n', '\f': '\\f', '\r': '\\r' } as Record<string, string>)[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}` : c)).join('');
  /** Terminal attacks: ESC, CSI (7-bit and C1), OSC with BEL, a carriage return, DEL. */
  const ATTACKS = ['\u001b[2J', '\u001b[31mred', '\u009b6n', '\u001b]0;pwned\u0007', '\u001b]8;;http://x\u001b\\', 'over\rwrite', '\u007f', '\u0085'];
  const crafted = fc.string({ unit: fc.oneof(fc.constantFrom(...CONTROLS), fc.constantFrom(...ATTACKS), fc.constantFrom('a', 'é', '"', '\\', '[', ']', '🎉')), minLength: 1, maxLength: 12 });

  it('decode, parse and encode print every control character escaped; --json stays exact JSON', async () => {
    await fc.assert(
      fc.asyncProperty(crafted, crafted, async (id, label) => {
        const uri = encodeSessionReferenceUri(id);
        const decoded = await cli(['decode', uri]);
        expect(decoded.code).toBe(0);
        expect(decoded.stdout).toBe(`${escaped(id)}\n`);
        const text = `see ${formatSessionReferenceMention({ sessionId: id, label })}\nand ${uri}`;
        const parsed = await cli(['parse', '--', text]);
        expect(parsed.code).toBe(0);
        expect(rawControls(parsed.stdout, '\n')).toEqual([]);
        // The readable text keeps its line breaks; the reference lines are exact JSON.
        const readable = escaped(`see @${label}\nand @${id}`, true);
        expect(parsed.stdout.startsWith(`${readable}\n`)).toBe(true);
        const references = parsed.stdout.slice(readable.length + 1).split('\n').slice(0, -1);
        expect(references.map((line) => JSON.parse(line))).toEqual([{ sessionId: id, label }, { sessionId: id, label: id }]);
        for (const args of [['decode', uri, '--json'], ['parse', text, '--json'], ['encode', id, '--json']]) {
          const json = await cli(args);
          expect(rawControls(json.stdout, '\n')).toEqual([]);
          expect(JSON.parse(json.stdout)).toEqual(args[0] === 'parse' ? { text: `see @${label}\nand @${id}`, references: [{ sessionId: id, label }, { sessionId: id, label: id }] } : { sessionId: id, uri });
        }
      }),
      { numRuns: 60 },
    );
  });

  it('error lines escape what they quote: a bad URI, an unknown command, a missing --as id', async () => {
    await fc.assert(
      fc.asyncProperty(crafted, async (junk) => {
        for (const args of [['decode', `dsh-session:${junk}`], ['parse', `@[x](dsh-session:${junk})`], [junk], ['candidates', '--demo', '--as', junk]]) {
          const result = await cli(args);
          expect(rawControls(result.stdout, '\n')).toEqual([]);
          expect(rawControls(result.stderr, '\n')).toEqual([]);
          // One line `CODE: message`, or a usage error: the problem and the usage line.
          if (result.code > 0) expect(result.stderr.split('\n').length, result.stderr).toBeLessThanOrEqual(3);
        }
      }),
      { numRuns: 40 },
    );
  });

  it('candidates and prepare escape crafted ids, cwds, titles and session texts from the store', async () => {
    const root = join(TMP, 'escape-store');
    const id = 'evil\u001b[2J\u009b6n\u0007';
    const cwd = '/tmp/\u001b]0;title\u0007dir';
    const dir = join(root, 'p', 's');
    mkdirSync(dir, { recursive: true });
    const header = { type: 'session', version: 3, id, createdAt: 0, cwd };
    const events = [
      { type: 'session/title', seq: 0, time: 0, data: { title: 'Title \u001b[31mred\u009b\u0085' } },
      { type: 'user/message', seq: 1, time: 0, surfaceOp: 'append', data: { id: 'u', role: 'user', source: { kind: 'user' }, content: [{ type: 'text', text: 'text \u001b]8;;x\u0007link \u009b2J\rover' }] } },
    ];
    writeFileSync(join(dir, 'session.v3.jsonl'), [header, ...events].map((line) => `${JSON.stringify(line)}\n`).join(''));
    const listed = await cli(['candidates', '--store', root]);
    expect(listed.code).toBe(0);
    expect(rawControls(listed.stdout, '\n\t')).toEqual([]);
    const fields = listed.stdout.trimEnd().split('\t');
    expect(JSON.parse(fields[1]!)).toBe(id);
    expect(JSON.parse(fields[3]!)).toBe(cwd);
    const json = await cli(['candidates', '--store', root, '--json']);
    expect(rawControls(json.stdout, '\n')).toEqual([]);
    expect(JSON.parse(json.stdout)[0]).toMatchObject({ sessionId: id, cwd });

    const other = join(root, 'p', 't');
    mkdirSync(other, { recursive: true });
    writeFileSync(join(other, 'session.v3.jsonl'), `${JSON.stringify({ type: 'session', version: 3, id: 'me', createdAt: 1 })}\n`);
    const message = `compare ${formatSessionReferenceMention({ sessionId: id, label: 'lbl\u009b\u001b' })}`;
    const prepared = await cli(['prepare', message, '--store', root, '--as', 'me']);
    expect(prepared.code, prepared.stderr).toBe(0);
    expect(rawControls(prepared.stdout, '\n')).toEqual([]);
    expect(prepared.stdout).toContain('\\u001b]8;;x\\u0007link \\u009b2J\\rover');
    const preparedJson = await cli(['prepare', message, '--store', root, '--as', 'me', '--json']);
    expect(rawControls(preparedJson.stdout, '\n')).toEqual([]);
    expect(JSON.parse(preparedJson.stdout).message.envelope.display[0].text).toBe(`compare @lbl\u009b\u001b`);
  });
});
