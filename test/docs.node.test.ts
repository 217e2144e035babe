/**
 * The documentation stays true: README.md and docs/*.md show code that runs as shown, every relative
 * link and #anchor resolves, and the README stays a page a newcomer reads (at most 400 lines).
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import GithubSlugger from 'github-slugger';
import { Lexer, type Token } from 'marked';
import { describe, expect, it } from 'vitest';
import { createSessionReferences } from '../src/index.js';
import { createMemorySessionQuery, parseSessionLog } from '../src/store/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');
const readme = read('README.md');

/** The fenced block that follows `<!-- marker -->` in a Markdown file. */
function blockAfter(text: string, marker: string): string {
  const at = text.indexOf(`<!-- ${marker} -->`);
  expect(at, `marker ${marker}`).toBeGreaterThanOrEqual(0);
  const open = text.indexOf('\n', text.indexOf('```', at)) + 1;
  return text.slice(open, text.indexOf('```', open));
}

/** Every Markdown file of the repository (not dependencies, builds or fixtures). */
function markdownFiles(dir = root): string[] {
  const skip = new Set(['node_modules', 'dist', '.git', '.wrangler', 'coverage', 'fixtures', 'test-results', 'api']);
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return skip.has(entry.name) ? [] : markdownFiles(path);
    return entry.name.endsWith('.md') ? [relative(root, path)] : [];
  });
}

/** Walks marked's tokens (code blocks and inline code hold no links). */
function* walk(tokens: readonly Token[]): Generator<Token> {
  for (const token of tokens) {
    yield token;
    const nested = token as { tokens?: Token[]; items?: Token[]; header?: Array<{ tokens: Token[] }>; rows?: Array<Array<{ tokens: Token[] }>> };
    if (nested.tokens) yield* walk(nested.tokens);
    if (nested.items) yield* walk(nested.items);
    for (const cell of nested.header ?? []) yield* walk(cell.tokens);
    for (const row of nested.rows ?? []) for (const cell of row) yield* walk(cell.tokens);
  }
}

/** The plain text of a heading's inline tokens, as GitHub slugs it. */
const plain = (tokens: readonly Token[]): string =>
  tokens.map((token) => ('tokens' in token && token.tokens ? plain(token.tokens) : 'text' in token ? String(token.text) : '')).join('');

const parsed = new Map<string, { anchors: Set<string>; links: string[] }>();
function parse(path: string) {
  let entry = parsed.get(path);
  if (!entry) {
    const tokens = new Lexer().lex(read(path));
    const slugger = new GithubSlugger();
    const anchors = new Set<string>();
    const links: string[] = [];
    for (const token of walk(tokens)) {
      if (token.type === 'heading') anchors.add(slugger.slug(plain(token.tokens ?? [])));
      if (token.type === 'link' || token.type === 'image') links.push(token.href);
    }
    entry = { anchors, links };
    parsed.set(path, entry);
  }
  return entry;
}

describe('README stays true', () => {
  it('shows examples/quickstart.ts verbatim', () => {
    expect(blockAfter(readme, 'quickstart:code')).toBe(read('examples/quickstart.ts'));
  });

  it('shows the exact output of examples/quickstart.ts (the model-visible text)', () => {
    const output = execFileSync(process.execPath, [join(root, 'scripts/run-example.mjs'), join(root, 'examples/quickstart.ts')], { encoding: 'utf8' });
    expect(blockAfter(readme, 'quickstart:output')).toBe(output);
  });

  it('names the test command CI runs', () => {
    expect(readme).toContain('npm test ');
    expect(read('.ci/run')).toMatch(/^npm test$/m);
  });

  it('is at most 400 lines: the rest lives in docs/', () => {
    expect(readme.split('\n').length).toBeLessThanOrEqual(400);
  });

  it('links every page of docs/', () => {
    const pages = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md'));
    const linked = new Set(parse('README.md').links.map((href) => href.split('#')[0]));
    expect(pages.filter((name) => !linked.has(`docs/${name}`))).toEqual([]);
  });
});

describe('docs/ stays true', () => {
  it('stores.md: the hand-written log folds and projects as shown (checkpoint by source, replace by seqs)', async () => {
    const page = read('docs/stores.md');
    const log = parseSessionLog(blockAfter(page, 'handwritten-log'));
    const refs = createSessionReferences({ sessionQuery: createMemorySessionQuery([log]) });
    const { context } = await refs.prepare({ id: 'me' }, [], [{ sessionId: 'session-notes' }]);
    const block = /<referenced-sessions>\n(.*)\n<\/referenced-sessions>/s.exec(context!.content[0].text)![1]!;
    expect(JSON.parse(block)[0].conversation).toEqual(JSON.parse(blockAfter(page, 'handwritten-log:conversation')));
    expect(blockAfter(page, 'handwritten-log')).not.toContain('"checkpoint"');
  });

  it('dsh-hosts.md: the table of differences names every difference from the host plugin (SPEC §14.6)', () => {
    const page = read('docs/dsh-hosts.md');
    const table = page.slice(page.indexOf('## What you gain'), page.indexOf('\n\n', page.indexOf('| |', page.indexOf('## What you gain'))));
    for (const difference of [
      'mention parsing', // linear-time parsing
      '`prepare` of a 2,000-message source', // linear-time retention
      'toLocaleLowerCase',
      '`\\`, `[` and `]`', // label escaping
      'candidate labels',
      'title reads',
      'the omission notice',
      'a bad `limit`',
      'the warning text',
      'checkpoint: true',
      'no `capturedThroughSeq`', // the recall's entries
      '`serializedBytes` and `budgetBytes`', // the recall's source.references
      'error messages',
    ]) {
      expect(table, difference).toContain(difference);
    }
  });
});

describe('every relative link and #anchor in the Markdown files resolves', () => {
  const files = markdownFiles();
  it('finds README.md and the docs pages', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/service.md', 'docs/SPEC.md']));
  });
  it.each(files)('%s', (file) => {
    const broken: string[] = [];
    for (const href of parse(file).links) {
      if (/^[a-z][a-z0-9+.-]*:/i.test(href)) continue; // https:, mailto:, dsh-session: …
      const [path = '', anchor] = href.split('#');
      const target = path === '' ? file : relative(root, resolve(root, dirname(file), decodeURI(path)));
      if (target.startsWith('..') || !existsSync(join(root, target))) {
        broken.push(`${href}: no file ${target}`);
        continue;
      }
      if (anchor !== undefined && target.endsWith('.md') && statSync(join(root, target)).isFile() && !parse(target).anchors.has(anchor)) {
        broken.push(`${href}: no heading #${anchor} in ${target}`);
      }
    }
    expect(broken).toEqual([]);
  });
});
