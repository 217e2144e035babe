/**
 * The published package as a user gets it: copies the project without `dist/` into a temp folder
 * (as a fresh clone has it, and so the working tree's `dist/` is never touched while other tests use
 * it), packs it with plain `npm pack` (whose `prepare` script builds),
 * installs the tarball into a fresh ESM project (its one runtime dependency, SQLite for search, comes
 * from the registry; libzstd ships inside it), then imports every entry, type-checks a TypeScript consumer, and
 * runs the `dsh-session-reference` bin.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { optionalsRejectingUndefined } from './public-optionals.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const NPM = 'npm';
const SAMPLE_ID = 'session-904b047f-eb01-493f-b98a-391ecfae5b66';

function sh(command: string, args: string[], cwd: string): string {
  return execFileSync(command, args, {
    cwd,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' },
    maxBuffer: 64 * 1024 * 1024,
  });
}

describe('the npm package (npm pack → npm install → import)', () => {
  let tmp: string;
  let consumer: string;
  let packedFiles: string[];
  let manifest: Record<string, any>;

  beforeAll(() => {
    tmp = mkdtempSync(join(tmpdir(), 'dsh-package-test-'));
    // 1. A private copy of the sources, built there.
    const project = join(tmp, 'project');
    mkdirSync(project);
    for (const entry of ['package.json', 'LICENSE', 'README.md', 'samples', 'src', 'docs', 'examples', 'bench']) {
      if (existsSync(join(ROOT, entry))) cpSync(join(ROOT, entry), join(project, entry), { recursive: true });
    }
    for (const entry of ['tsconfig.json', 'tsconfig.build.json', 'tsconfig.build.node.json', 'tsconfig.build.dsh.json']) {
      cpSync(join(ROOT, entry), join(project, entry));
    }
    symlinkSync(join(ROOT, 'node_modules'), join(project, 'node_modules'), 'dir');
    // 2. The tarball, packed as from a fresh clone: no dist/ yet, so `prepare` must build it.
    expect(existsSync(join(project, 'dist'))).toBe(false);
    const packed = JSON.parse(sh(NPM, ['pack', '--json', '--pack-destination', tmp], project)) as Array<{
      filename: string;
    }>;
    const tarball = join(tmp, packed[0]!.filename);
    // From the tarball itself: npm's --json output redacts UUID-like path segments (session ids).
    packedFiles = sh('tar', ['-tzf', tarball], tmp)
      .split('\n')
      .filter(Boolean)
      .map((f) => f.replace(/^package\//, ''))
      .sort();
    manifest = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
    // 3. A fresh consumer project that installs it.
    consumer = join(tmp, 'consumer');
    mkdirSync(consumer);
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    sh(NPM, ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-save', tarball], consumer);
  });

  /** The entries of the exports map that are JavaScript modules (not files such as samples or a .wasm). */
  const codeEntries = () =>
    Object.entries(manifest.exports as Record<string, string | Record<string, string>>)
      .filter(([, target]) => typeof target === 'object' && /\.js$/.test(target.import ?? target.node ?? ''))
      .map(([entry]) => entry);

  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('ships only what users need', () => {
    expect(packedFiles).toEqual(
      expect.arrayContaining([
        'LICENSE',
        'package.json',
        'dist/index.js',
        'dist/index.d.ts',
        'dist/store/index.js',
        'dist/store/index.d.ts',
        'dist/editor/index.js',
        'dist/editor/index.d.ts',
        'dist/editor/dom/index.js',
        'dist/editor/dom/index.d.ts',
        'dist/node/index.js',
        'dist/node/index.d.ts',
        'dist/node/cli.js',
        'dist/dsh/index.js',
        'dist/dsh/index.d.ts',
        `samples/store/77-Dumen/${SAMPLE_ID}/session.v3.jsonl`,
      ]),
    );
    const unexpected = packedFiles.filter(
      (f) => !/^(dist\/.*\.(js|d\.ts)|dist\/store\/libzstd(\.wasm|\.d\.wasm\.ts)|dist\/search\/sqlite3(\.wasm|\.d\.wasm\.ts)|samples\/.*|docs\/[\w-]+\.md|examples\/quickstart\.ts|bench\/RESULTS\.md|LICENSE|README\.md|package\.json)$/.test(f),
    );
    expect(unexpected).toEqual([]);
    expect(packedFiles.some((f) => f.startsWith('src/') || f.startsWith('test/') || f.endsWith('.map'))).toBe(false);
  });

  it('ships every file the exports map and the bin name (packed without a prior build)', () => {
    const targets = Object.entries(manifest.exports as Record<string, string | Record<string, string>>)
      .filter(([entry]) => !entry.includes('*'))
      .flatMap(([, value]) => (typeof value === 'string' ? [value] : Object.values(value)))
      .concat(Object.values(manifest.bin as Record<string, string>))
      .map((target) => target.replace(/^\.\//, ''));
    expect(targets.length).toBeGreaterThan(10);
    expect(targets.filter((target) => !packedFiles.includes(target))).toEqual([]);
  });

  it('ships the docs pages and the files the README links to (except the 470 KB playground screenshot)', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const linked = [...readme.matchAll(/\]\(([a-z][\w./-]*)(?:#[\w-]*)?\)/gi)].map((m) => m[1]!).filter((target) => !target.startsWith('dsh-session:'));
    expect(linked).toEqual(expect.arrayContaining(['docs/SPEC.md', 'docs/service.md', 'docs/front-ends.md']));
    expect(linked.filter((target) => target !== 'docs/playground.png' && !packedFiles.includes(target))).toEqual([]);
    const pages = readdirSync(join(ROOT, 'docs')).filter((name) => name.endsWith('.md')).map((name) => `docs/${name}`);
    expect(packedFiles.filter((f) => f.startsWith('docs/'))).toEqual(pages.sort());
  });

  it('declares an ESM-only exports map with types, a bin and no side effects', () => {
    expect(manifest.type).toBe('module');
    expect(manifest.sideEffects).toBe(false);
    expect(manifest.exports['.']).toEqual({ types: './dist/index.d.ts', import: './dist/index.js' });
    expect(manifest.exports['./store']).toEqual({ types: './dist/store/index.d.ts', import: './dist/store/index.js' });
    expect(manifest.exports['./editor']).toEqual({ types: './dist/editor/index.d.ts', import: './dist/editor/index.js' });
    expect(manifest.exports['./editor/dom']).toEqual({ types: './dist/editor/dom/index.d.ts', import: './dist/editor/dom/index.js' });
    // Node-only: a `node` condition and nothing for browsers, so bundlers refuse it at build time.
    expect(manifest.exports['./node']).toEqual({ types: './dist/node/index.d.ts', node: './dist/node/index.js' });
    // The bundled sample logs, for web apps (README, The entries).
    expect(manifest.exports['./samples/*']).toBe('./samples/store/*');
    expect(manifest.exports['./dsh']).toEqual({ types: './dist/dsh/index.d.ts', import: './dist/dsh/index.js' });
    // The dsh host packages are optional peers of ./dsh alone (SPEC §14.4): never installed for the core.
    expect(Object.keys(manifest.peerDependencies).sort()).toEqual(['@deepseek-ai/cordis', '@deepseek-ai/dsh-llm', '@deepseek-ai/dsh-typert-protocol']);
    expect(Object.values(manifest.peerDependenciesMeta)).toEqual([{ optional: true }, { optional: true }, { optional: true }]);
    expect(existsSync(join(consumer, 'node_modules/@deepseek-ai'))).toBe(false);
    expect(manifest.bin).toEqual({ 'dsh-session-reference': './dist/node/cli.js' });
    // libzstd's decoder module, for Workers to import as a compiled module (SPEC §11.2).
    expect(manifest.exports['./libzstd.wasm']).toEqual({ types: './dist/store/libzstd.d.wasm.ts', default: './dist/store/libzstd.wasm' });
    expect(existsSync(join(consumer, 'node_modules/dsh-session-reference/dist/store/libzstd.wasm'))).toBe(true);
    // SQLite's module, for Workers to import as a compiled module (SPEC §16.5), copied at build
    // from the dependency's own file.
    expect(manifest.exports['./sqlite3.wasm']).toEqual({ types: './dist/search/sqlite3.d.wasm.ts', default: './dist/search/sqlite3.wasm' });
    expect(readFileSync(join(consumer, 'node_modules/dsh-session-reference/dist/search/sqlite3.wasm'))).toEqual(
      readFileSync(join(ROOT, 'node_modules/@sqlite.org/sqlite-wasm/dist/sqlite3.wasm')),
    );
    // Five dependencies, each imported only by the entry or lazy chunk that needs it: SQLite
    // (@sqlite.org/sqlite-wasm) and fflate (the kept snippet text's compression) by the search
    // chunk (SPEC §16.5), @floating-ui/dom by ./editor/dom's default menu (§15.9), hono and jose by
    // ./edge (§17.2); libzstd ships in the package itself (src/store/libzstd*, from zstddec's module).
    expect(Object.keys(manifest.dependencies ?? {})).toEqual(['@floating-ui/dom', '@sqlite.org/sqlite-wasm', 'fflate', 'hono', 'jose']);
  });

  it('imports the root, ./store, ./editor and ./node entries in Node', () => {
    const script = `
      import { encodeSessionReferenceUri, decodeSessionReferenceUri, parseSessionReferenceText, createSessionReferences } from 'dsh-session-reference';
      import { findMentionTrigger, insertMention, describeReferencedMessage } from 'dsh-session-reference/editor';
      import { parseSessionLog, createMemorySessionQuery } from 'dsh-session-reference/store';
      import { createDshStoreSessionQuery, sampleStoreRoot } from 'dsh-session-reference/node';
      import { readFileSync } from 'node:fs';
      const uri = encodeSessionReferenceUri('session-434');
      const sample = readFileSync(sampleStoreRoot() + '/77-Dumen/${SAMPLE_ID}/session.v3.jsonl');
      const log = parseSessionLog(new Uint8Array(sample));
      const refs = createSessionReferences({ sessionQuery: createMemorySessionQuery([log]) });
      const memory = await refs.listCandidates({ id: 'me' });
      const disk = await createDshStoreSessionQuery({ root: sampleStoreRoot() }).listSessions();
      const typed = 'see @bu';
      const edited = insertMention(typed, findMentionTrigger(typed, typed.length), memory[0].mention).text;
      const found = await refs.searchSessions({ id: 'me' }, 'geliştiriyorduk gemni');
      const composed = await refs.referenceUserMessage({ id: 'me' }, { id: 'm', role: 'user', source: { kind: 'user' }, content: [{ type: 'text', text: edited }] });
      console.log(JSON.stringify({
        uri,
        decoded: decodeSessionReferenceUri(uri),
        parsed: parseSessionReferenceText('see ' + uri).text,
        memory: memory.map((c) => c.label),
        found: found.map((hit) => hit.sessionId),
        diskHasSample: disk.some((r) => r.header.id === '${SAMPLE_ID}'),
        replay: describeReferencedMessage(composed).mentions,
        fromNodeModules: import.meta.resolve('dsh-session-reference').includes('/node_modules/dsh-session-reference/dist/'),
      }));
    `;
    const out = JSON.parse(sh(process.execPath, ['--input-type=module', '-e', script], consumer));
    expect(out).toEqual({
      uri: 'dsh-session:InNlc3Npb24tNDM0Ig',
      decoded: 'session-434',
      parsed: 'see @session-434',
      memory: ['Bu projeyi gemini ile geliştiriyorduk'],
      found: [SAMPLE_ID],
      diskHasSample: true,
      replay: [{ block: 0, start: 4, end: 42, sessionId: SAMPLE_ID }],
      fromNodeModules: true,
    });
  });

  it('imports every entry of the exports map in Node (./dsh, which needs its peers, below)', () => {
    // ./libzstd.wasm is a WebAssembly module, imported as a compiled module by Workers (checked below).
    const entries = codeEntries().filter((entry) => entry !== './dsh' && entry !== './libzstd.wasm' && entry !== './sqlite3.wasm');
    expect(entries).toEqual(expect.arrayContaining(['.', './store', './editor', './node']));
    const script = `
      const counts = {};
      for (const entry of ${JSON.stringify(entries)}) counts[entry] = Object.keys(await import('dsh-session-reference' + entry.slice(1))).length;
      console.log(JSON.stringify(counts));
    `;
    const counts = JSON.parse(sh(process.execPath, ['--input-type=module', '-e', script], consumer)) as Record<string, number>;
    expect(entries.filter((entry) => !(counts[entry]! > 0))).toEqual([]);
    const wasm = readFileSync(join(consumer, 'node_modules/dsh-session-reference/dist/store/libzstd.wasm'));
    expect(WebAssembly.Module.exports(new WebAssembly.Module(wasm)).map((entry) => entry.name)).toContain('ZSTD_decompressStream');
  });

  it('type-checks a TypeScript consumer against the shipped declarations', () => {
    writeFileSync(
      join(consumer, 'index.ts'),
      `import { encodeSessionReferenceUri, type SessionReferenceErrorCode } from 'dsh-session-reference';
       import { createMemorySessionQuery, type SessionLog } from 'dsh-session-reference/store';
       import { createDshStoreSessionQuery } from 'dsh-session-reference/node';
       const uri: string = encodeSessionReferenceUri('x');
       const code: SessionReferenceErrorCode = 'SESSION_REFERENCE_NOT_FOUND';
       const logs: SessionLog[] = [];
       const query = createMemorySessionQuery(logs);
       export { uri, code, query, createDshStoreSessionQuery };
       // @ts-expect-error a number is not a session id
       encodeSessionReferenceUri(42);
      `,
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: [], lib: ['es2023', 'dom'] },
        files: ['index.ts'],
      }),
    );
    expect(() => sh(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], consumer)).not.toThrow();
  });

  it('type-checks a strict front-end consumer (strict, exactOptionalPropertyTypes): the public types narrow (issue 15)', () => {
    writeFileSync(
      join(consumer, 'front-end.ts'),
      `import { createSessionReferences, formatSessionReferenceMention, scanSessionReferenceText, type ContentBlock, type SessionReferenceToken } from 'dsh-session-reference';
       import { createMemorySessionQuery, createObjectStoreSessionQuery, readSessionLog } from 'dsh-session-reference/store';
       import { createDshStoreSessionQuery } from 'dsh-session-reference/node';
       import { describeReferencedMessage, findMentionTrigger, insertMention, mentionRangeAt } from 'dsh-session-reference/editor';

       // block.type === 'text' narrows a ContentBlock: block.text is a string.
       export function render(blocks: readonly ContentBlock[]): string {
         return blocks.map((block) => (block.type === 'text' ? block.text.toUpperCase() : \`[\${block.type}]\`)).join('');
       }
       declare const block: ContentBlock;
       // @ts-expect-error without narrowing, text is not known to be a string
       export const unnarrowed: string = block.text;

       // Filtering out errors narrows a scan token to the valid variant.
       const tokens: SessionReferenceToken[] = scanSessionReferenceText('see dsh-session:ImEi').tokens;
       export const ids: string[] = tokens.filter((token) => token.error === undefined).map((token) => token.sessionId);
       export const labels: string[] = tokens.flatMap((token) => (token.error ? [] : [token.label]));
       export const codes: string[] = tokens.filter((token) => token.error !== undefined).map((token) => token.error.code);
       // @ts-expect-error a token that may be malformed has no sessionId for sure
       export const unchecked: string = tokens[0]!.sessionId;

       // Optional inputs accept undefined under exactOptionalPropertyTypes: every option of every public function.
       declare const label: string | undefined;
       declare const cwd: string | undefined;
       declare const count: number | undefined;
       declare const flag: boolean | undefined;
       declare const signal: AbortSignal | undefined;
       declare const bucket: Parameters<typeof createObjectStoreSessionQuery>[0];
       const config = { maxReferences: count, candidateLimit: count, maxReferenceBytes: count, matchTitles: flag };
       const refs = createSessionReferences({ sessionQuery: createMemorySessionQuery([]), config });
       export const listed = refs.listCandidates({ id: 'me', cwd }, label, count, signal);
       export const prepared = refs.prepare({ id: 'me', cwd }, [{ type: 'text', text: 'x' }], [{ sessionId: 'a', label }], signal);
       export const composed = refs.referenceUserMessage({ id: 'me' }, { id: 'm', role: 'user', source: { kind: 'user' }, content: [] }, signal);
       export const mention: string = formatSessionReferenceMention({ sessionId: 'a', label });
       export const log = readSessionLog('', { maxLogBytes: count, verifyChecksums: flag, signal });
       export const r2 = createObjectStoreSessionQuery(bucket, { prefix: label, rangeReads: flag, concurrency: count, maxLogBytes: count, verifyChecksums: flag });
       export const disk = createDshStoreSessionQuery({ root: label, maxLogBytes: count, verifyChecksums: flag });

       // The editor kit.
       const text = 'ask @a';
       const trigger = findMentionTrigger(text, text.length);
       export const edited: { text: string; caret: number } | undefined = trigger && insertMention(text, trigger, { sessionId: 'a', label });
       const range = mentionRangeAt(text, 0);
       export const chipId: string | undefined = range && !range.token.error ? range.token.sessionId : undefined;
       const described = describeReferencedMessage({});
       export const replay: string = described?.display ? render(described.display) : '';
       export const seqs: Array<number | null> = described?.references.map((row) => row.capturedThroughSeq) ?? [];
      `,
    );
    writeFileSync(
      join(consumer, 'tsconfig.strict.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true, noEmit: true, types: [], lib: ['es2023', 'dom'],
        },
        files: ['front-end.ts'],
      }),
    );
    let output = '';
    try {
      sh(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.strict.json'], consumer);
    } catch (error) {
      output = String((error as { stdout?: unknown }).stdout ?? error);
    }
    expect(output).toBe('');
  });

  it('every optional input property of every public function of every entry accepts undefined (exactOptionalPropertyTypes)', () => {
    const entries = codeEntries();
    expect(entries).toEqual(expect.arrayContaining(['.', './store', './editor', './node', './dsh']));
    expect(optionalsRejectingUndefined(consumer, 'dsh-session-reference', entries)).toEqual([]);
  });

  it('imports ./dsh once the dsh host packages (its optional peers) are installed', () => {
    const host = join(tmp, 'dsh-host');
    mkdirSync(host);
    writeFileSync(join(host, 'package.json'), JSON.stringify({ name: 'dsh-host', private: true, type: 'module' }));
    const pins = ['@deepseek-ai/cordis', '@deepseek-ai/dsh-llm', '@deepseek-ai/dsh-typert-protocol'].map((name) => `${name}@${manifest.devDependencies[name]}`);
    sh(NPM, ['install', '--no-audit', '--no-fund', '--prefer-offline', '--no-save', join(tmp, readdirSync(tmp).find((f) => f.endsWith('.tgz'))!), ...pins], host);
    const script = `
      import SessionReferenceResolver, { encodeSessionReferenceUri, SessionReferenceError } from 'dsh-session-reference/dsh';
      import { Context } from '@deepseek-ai/cordis';
      const ctx = new Context();
      ctx.provide('sessionQuery', { listSessions: async () => [], readSurface: async () => { throw new Error('none'); } });
      await ctx.plugin(SessionReferenceResolver);
      console.log(JSON.stringify({
        uri: encodeSessionReferenceUri('session-434'),
        error: typeof SessionReferenceError,
        inject: SessionReferenceResolver.inject,
        candidates: await ctx.sessionReferenceResolver.listCandidates({ id: 'me' }),
      }));
    `;
    expect(JSON.parse(sh(process.execPath, ['--input-type=module', '-e', script], host))).toEqual({
      uri: 'dsh-session:InNlc3Npb24tNDM0Ig',
      error: 'function',
      inject: ['sessionQuery'],
      candidates: [],
    });
  });

  it('builds a browser consumer of the Web entries with Vite, and refuses ./node at build time', async () => {
    const { build } = await import('vite');
    const bundle = async (name: string, code: string) => {
      const dir = join(consumer, name);
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="./main.js"></script>');
      writeFileSync(join(dir, 'main.js'), code);
      return build({ root: dir, logLevel: 'silent', configFile: false, build: { write: false, minify: false } });
    };
    const web = await bundle(
      'browser-web',
      `import { encodeSessionReferenceUri } from 'dsh-session-reference';
       import { parseSessionLog } from 'dsh-session-reference/store';
       document.title = encodeSessionReferenceUri('x') + typeof parseSessionLog;`,
    );
    const chunks = (Array.isArray(web) ? web : [web]).flatMap((result) => ('output' in result ? result.output : []));
    expect(chunks.some((chunk) => chunk.type === 'chunk' && chunk.code.includes('dsh-session:'))).toBe(true);
    const refused = await bundle('browser-node', `import { createDshStoreSessionQuery } from 'dsh-session-reference/node'; console.log(createDshStoreSessionQuery);`).then(
      () => undefined,
      (error: unknown) => String((error as Error).message).replace(/\u001b\[[0-9;]*m/g, ''),
    );
    expect(refused).toMatch(/"\.\/node" is not exported under the conditions \[[^\]]*"browser"/);
  });

  it('a Vite web app bundles ./editor and loads a bundled sample log through ./samples/* (docs/front-ends.md)', async () => {
    const { build } = await import('vite');
    const dir = join(consumer, 'browser-editor');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'index.html'), '<!doctype html><script type="module" src="./main.js"></script>');
    writeFileSync(
      join(dir, 'main.js'),
      `import { findMentionTrigger, insertMention, describeReferencedMessage } from 'dsh-session-reference/editor';
       import { parseSessionLog } from 'dsh-session-reference/store';
       import sampleUrl from 'dsh-session-reference/samples/77-Dumen/${SAMPLE_ID}/session.v3.jsonl?url';
       const log = parseSessionLog(new Uint8Array(await (await fetch(sampleUrl)).arrayBuffer()));
       const trigger = findMentionTrigger('see @bu', 7);
       document.title = insertMention('see @bu', trigger, { sessionId: log.header.id }).text + typeof describeReferencedMessage;`,
    );
    const result = await build({ root: dir, logLevel: 'silent', configFile: false, build: { write: false, minify: false, assetsInlineLimit: 0 } });
    const output = (Array.isArray(result) ? result : [result]).flatMap((r) => ('output' in r ? r.output : []));
    const sample = readFileSync(join(ROOT, 'samples/store/77-Dumen', SAMPLE_ID, 'session.v3.jsonl'));
    const asset = output.find((file) => file.type === 'asset' && file.fileName.endsWith('.jsonl'));
    expect(asset && Buffer.from(asset.source as Uint8Array | string).equals(sample)).toBe(true);
    const code = output.map((file) => (file.type === 'chunk' ? file.code : '')).join('');
    expect(code).toContain(asset!.fileName);
    expect(code).toContain('function findMentionTrigger');
    // The same path resolves in Node (and so in any bundler that follows the exports map).
    const resolved = sh(process.execPath, ['--input-type=module', '-e', `console.log(import.meta.resolve('dsh-session-reference/samples/77-Dumen/${SAMPLE_ID}/session.v3.jsonl'))`], consumer).trim();
    expect(readFileSync(fileURLToPath(resolved)).equals(sample)).toBe(true);
  });

  it('the front-end example of docs/front-ends.md type-checks (strict, exactOptionalPropertyTypes) and builds with Vite', async () => {
    const page = readFileSync(join(ROOT, 'docs/front-ends.md'), 'utf8');
    const marker = page.indexOf('<!-- front-end:code -->');
    expect(marker).toBeGreaterThanOrEqual(0);
    const open = page.indexOf('\n', page.indexOf('```ts', marker)) + 1;
    const dir = join(consumer, 'browser-readme');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'main.ts'), page.slice(open, page.indexOf('```', open)));
    writeFileSync(join(dir, 'url.d.ts'), "declare module '*?url' { const url: string; export default url; }\n");
    writeFileSync(join(dir, 'index.html'), '<!doctype html><form><div id="composer"></div><ul></ul><output></output></form><script type="module" src="./main.ts"></script>');
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          module: 'esnext', moduleResolution: 'bundler', target: 'es2022', strict: true, exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true, noEmit: true, types: [], lib: ['es2023', 'dom', 'dom.iterable'],
        },
        files: ['main.ts', 'url.d.ts'],
      }),
    );
    let output = '';
    try {
      sh(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', '.'], dir);
    } catch (error) {
      output = String((error as { stdout?: unknown }).stdout ?? error);
    }
    expect(output).toBe('');
    const { build } = await import('vite');
    const result = await build({ root: dir, logLevel: 'silent', configFile: false, build: { write: false, minify: false, assetsInlineLimit: 0 } });
    const files = (Array.isArray(result) ? result : [result]).flatMap((r) => ('output' in r ? r.output : []));
    // Both sample logs are copied into the build as assets, and so are the three files SQLite's own
    // loader names with `new URL(…, import.meta.url)` (its module, its OPFS proxy, its worker):
    // Vite copies them wherever the search chunk is built, and they are never fetched — the library
    // hands SQLite its module itself (src/search/sqlite.ts).
    const assets = files.filter((file) => file.type === 'asset' && file.fileName !== 'index.html').map((file) => file.fileName);
    expect(assets.sort()).toEqual([
      expect.stringMatching(/^assets\/session\.v3-.*\.jsonl$/),
      expect.stringMatching(/^assets\/session\.v3\.jsonl-.*\.zstd$/),
      expect.stringMatching(/^assets\/sqlite3-.*\.wasm$/),
      expect.stringMatching(/^assets\/sqlite3-opfs-async-proxy-.*\.js$/),
      expect.stringMatching(/^assets\/sqlite3-worker1-.*\.js$/),
    ]);
    // readSessionLog keeps the zstd decoders out of the entry chunk: they load when a zstd log is met.
    const chunks = files.filter((file) => file.type === 'chunk');
    const entry = chunks.find((chunk) => chunk.isEntry)!;
    expect(entry.code).toContain('function describeReferencedMessage');
    expect(entry.code).toContain('function createMentionEditor');
    // libzstd's binding (its out-of-memory message) is in a lazy chunk only.
    const libzstd = 'the zstd decoder ran out of memory';
    expect(entry.code).not.toContain(libzstd);
    expect(chunks.some((chunk) => !chunk.isEntry && chunk.code.includes(libzstd))).toBe(true);
    // SQLite (search) is lazy too: its loader and its module (base64url) in chunks of their own.
    expect(entry.code).not.toContain('sqlite3ApiBootstrap');
    expect(chunks.some((chunk) => !chunk.isEntry && chunk.code.includes('sqlite3ApiBootstrap'))).toBe(true);
    expect(chunks.some((chunk) => !chunk.isEntry && chunk.code.includes('SQLITE_WASM_BASE64URL'))).toBe(true);
  });

  it('installs a working dsh-session-reference bin', () => {
    const bin = join(consumer, 'node_modules/.bin/dsh-session-reference');
    expect(sh(bin, ['encode', 'session-434'], consumer).trim()).toBe('dsh-session:InNlc3Npb24tNDM0Ig');
    expect(sh(bin, ['decode', 'dsh-session:InNlc3Npb24tNDM0Ig'], consumer).trim()).toBe('session-434');
    const candidates = JSON.parse(sh(bin, ['candidates', '--demo', '--json'], consumer)) as Array<{ sessionId: string }>;
    expect(candidates.map((c) => c.sessionId)).toContain(SAMPLE_ID);
  });
});
