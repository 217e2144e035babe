/**
 * The `dsh-session-reference` command line (SPEC §12.2), as a function tests call without
 * spawning. The executable wrapper is `cli.ts`.
 *
 * A command loads only the modules it uses (dynamic `import()`): `encode` never loads the store
 * or the service, and only `search` loads the search cache (issue 30 item 3: a CLI run is mostly
 * start-up).
 * @module
 */
import { parseArgs } from 'node:util';
import type { SessionReferenceConfig } from '../config.js';
import { parsePositiveInteger } from '../config.js';
import { describeValue, fail, isSessionReferenceError, type SessionReferenceError, type SessionReferenceErrorJSON } from '../errors.js';
import type { SessionQuery, TargetAgent, UserMessage } from '../types.js';
import type { CarriedDshStore } from './store.js';
import { escapeControls } from './terminal.js';

/** Where {@link main} writes and what it reads from its environment. `process` itself fits. */
export interface CliIO {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Environment for the default store root (`DSH_HOME`); default `process.env`. */
  env?: Readonly<Record<string, string | undefined>> | undefined;
  /**
   * Standard input, read when the argument of `prepare`, `encode`, `decode` or `parse` is `-`
   * (chunks as UTF-8 bytes or strings; `process.stdin` fits). Absent: `-` is a usage error.
   */
  stdin?: AsyncIterable<Uint8Array | string> | undefined;
}

/** How {@link main} may treat the process it runs in. */
export interface CliOptions {
  /**
   * True when `main` is all the process does and it exits after (the executable, `cli.ts`):
   * `main` may then set V8 flags, which hold for the whole process. Default `false` (a test or
   * a host calling `main` keeps its flags). See {@link CliIO} for where it writes.
   */
  ownsProcess?: boolean | undefined;
}

/** The one-line synopsis printed with every usage error. */
export const USAGE =
  'Usage: dsh-session-reference <candidates [QUERY] | search QUERY | prepare MESSAGE | encode ID | decode URI | parse TEXT | push --to URL> [--store DIR | --demo] [--as SESSION_ID] [--limit N] [--match-titles] [--no-cache] [--max-reference-bytes N] [--dry-run] [--json]';

const HELP = `dsh-session-reference — cite other dsh sessions in a prompt (SPEC §12.2)

${USAGE}

Commands
  candidates [QUERY]  Sessions you could cite, best first: same cwd as --as, then no cwd, then
                      others. QUERY filters by a case-insensitive substring of id or cwd
                      (with --match-titles, also of the title).
                      One line per session: label, id, created (UTC), cwd, mention.
  search QUERY        Sessions by what was said in them (every word, by prefix; one typo allowed
                      in words of 5+ letters), best first. One line per session: label, cwd,
                      score, first snippet. The index is kept in $XDG_CACHE_HOME/
                      dsh-session-reference/ (else ~/.cache/…) and follows the store.
  prepare MESSAGE     Parse the @[label](dsh-session:…) mentions in MESSAGE, read the cited
                      sessions and print the prompt the model sees. Needs --as.
  encode ID           Print the dsh-session: URI of a session id.
  decode URI          Print the session id of a canonical dsh-session: URI.
  parse TEXT          Print TEXT with mentions made readable, then one JSON line per reference.
  push --to URL       Upload the store's logs to the edge service at URL, except those it already
                      holds with the same bytes (MD5 = R2's etag). The token comes from the
                      environment variable DSH_SESSION_REFERENCE_TOKEN, never from a flag.
                      Exit status 1 when any upload failed.

Options
  --store DIR                dsh session store (default $DSH_HOME/sessions, else ~/.dsh/sessions)
  --demo                     use the sample store bundled with this package instead
  --as SESSION_ID            the session you are writing in: excluded from candidates, ranks by
                             its cwd, and is the target of prepare (must exist in the store)
  --limit N                  candidates: at most N rows (default 50)
  --match-titles             candidates: QUERY also matches session titles (the words people
                             type after @); titles are read in batches, best-ranked first
  --no-cache                 search: neither read nor write the cached index
  --max-reference-bytes N    prepare: byte budget per cited session (default 65536)
  --to URL                   push: the edge service's base URL (https:, or http: to loopback)
  --dry-run                  push: list what would be uploaded, upload nothing
  --json                     machine-readable output
  -h, --help                 this help

An argument "-" (MESSAGE, TEXT, ID or URI) is read from standard input, as UTF-8, without the
one trailing newline a shell or editor adds: echo "see @[x](dsh-session:ImEi)" | … parse -
Use -- before a MESSAGE or TEXT that starts with "-" (other than "-" itself).
Exit status: 0 success, 1 error (CODE: message on stderr), 2 usage error.
`;

/** Thrown for command-line mistakes: exit status 2 with the usage line. */
class UsageError extends Error {}

interface Flags {
  store?: string;
  demo?: boolean;
  as?: string;
  limit?: string;
  'match-titles'?: boolean;
  'no-cache'?: boolean;
  'max-reference-bytes'?: string;
  to?: string;
  'dry-run'?: boolean;
  token?: string;
  json?: boolean;
  help?: boolean;
}

/** Which flags each command takes, beyond `--json` and `--help`. */
const COMMAND_FLAGS: Record<string, { positionals: [min: number, max: number, name: string]; flags: ReadonlyArray<keyof Flags> }> = {
  candidates: { positionals: [0, 1, 'QUERY'], flags: ['store', 'demo', 'as', 'limit', 'match-titles'] },
  search: { positionals: [1, 1, 'QUERY'], flags: ['store', 'demo', 'as', 'limit', 'no-cache'] },
  prepare: { positionals: [1, 1, 'MESSAGE'], flags: ['store', 'demo', 'as', 'max-reference-bytes'] },
  encode: { positionals: [1, 1, 'ID'], flags: [] },
  decode: { positionals: [1, 1, 'URI'], flags: [] },
  parse: { positionals: [1, 1, 'TEXT'], flags: [] },
  push: { positionals: [0, 0, ''], flags: ['store', 'demo', 'to', 'dry-run'] },
};

/**
 * Runs the CLI (SPEC §12.2) with `argv` (arguments only, without `node` and the script) and
 * resolves to the exit status: `0` success, `1` a `SessionReferenceError` (one line `CODE: message`
 * on stderr; an `--as` id missing from the store is `SESSION_REFERENCE_NOT_FOUND`), `2` a usage
 * error (the problem and the usage line on stderr). Never rejects.
 *
 * Commands: `candidates [QUERY]`, `search QUERY` (SPEC §16.6), `prepare MESSAGE` (needs `--as`),
 * `encode ID`, `decode URI`, `parse TEXT`, `push --to URL [--dry-run]` (SPEC §17.8: token from
 * `DSH_SESSION_REFERENCE_TOKEN`, a `--token` flag is a usage error; exit 1 when an upload failed; see
 * `runPush` in push.ts). Flags: `--store DIR` (default `$DSH_HOME/sessions`,
 * else `~/.dsh/sessions`), `--demo` (the bundled sample store), `--as SESSION_ID`, `--limit N`,
 * `--match-titles` (QUERY also matches titles, SPEC §6.7), `--no-cache` (search: no cache file,
 * see `search-cache.ts`), `--max-reference-bytes N`,
 * `--json`, `--help`. A flag a command does not take, or a non-integer `N`, is a usage error.
 * The argument `-` of `prepare`, `encode`, `decode` and `parse` is read from `io.stdin` (UTF-8,
 * one trailing newline removed); without `io.stdin`, or with invalid UTF-8, it is a usage error.
 * @example
 * process.exitCode = await main(process.argv.slice(2), process);
 */
export async function main(argv: readonly string[], io: CliIO, options: CliOptions = {}): Promise<number> {
  // Every output ends with exactly one added newline, so a value's own trailing newline survives.
  // What it prints is escaped where it is built (escapeControls, SPEC §12.2).
  const out = (text: string) => io.stdout.write(`${text}\n`);
  try {
    const parsed = parseCommandLine(argv);
    if (parsed === 'help') {
      io.stdout.write(HELP);
      return 0;
    }
    if (parsed.name === 'push') return await push(parsed.flags, io);
    if (parsed.name !== 'candidates' && parsed.args[0] === STDIN_ARGUMENT) parsed.args[0] = await readStdin(io);
    await run(parsed, io, out, options);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`dsh-session-reference: ${escapeControls(error.message)}\n${USAGE}\n`);
      return 2;
    }
    if (isSessionReferenceError(error)) {
      const shown = storeError(error);
      io.stderr.write(`${escapeControls(`${shown.code}: ${shown.message}`)}\n`);
      return 1;
    }
    const message = error instanceof Error ? error.message : String(error);
    io.stderr.write(`Error: ${escapeControls(message)}\n`);
    return 1;
  }
}

/**
 * What the CLI reports of `error`: the store's own error where the service wrapped a log the store
 * could not read (`INVALID_LOG`, or `READ_FAILED` from the file system) as a failed host call
 * (`READ_FAILED` naming the call, the store's message cut short in it). The CLI's store is its
 * own, and its error names the log, the line and what is wrong with it (SPEC §11.1), as a damaged
 * header's does (the probe of issue 30, finding 4). A cited session the store does not hold stays
 * the service's `READ_FAILED` (SPEC §10.1).
 */
function storeError(error: SessionReferenceError | SessionReferenceErrorJSON): SessionReferenceError | SessionReferenceErrorJSON {
  const { cause } = error as { cause?: unknown };
  const unreadable = isSessionReferenceError(cause) && (cause.code === 'SESSION_REFERENCE_INVALID_LOG' || cause.code === 'SESSION_REFERENCE_READ_FAILED');
  return error.code === 'SESSION_REFERENCE_READ_FAILED' && unreadable ? storeError(cause) : error;
}

interface Command {
  name: string;
  args: string[];
  flags: Flags;
}

function parseCommandLine(argv: readonly string[]): Command | 'help' {
  let values: Flags;
  let positionals: string[];
  let tokens: ReturnType<typeof parseArgs>['tokens'];
  try {
    ({ values, positionals, tokens } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      tokens: true,
      options: {
        store: { type: 'string' },
        demo: { type: 'boolean' },
        as: { type: 'string' },
        limit: { type: 'string' },
        'match-titles': { type: 'boolean' },
        'no-cache': { type: 'boolean' },
        'max-reference-bytes': { type: 'string' },
        to: { type: 'string' },
        'dry-run': { type: 'boolean' },
        token: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (values.help) return 'help';
  // An option given twice is a mistake to report, not a choice of the last (`--store a --store b`).
  const seen = new Set<string>();
  for (const token of tokens ?? []) {
    if (token.kind !== 'option') continue;
    if (seen.has(token.name)) throw new UsageError(`--${token.name} is given more than once`);
    seen.add(token.name);
  }
  const [name, ...args] = positionals;
  if (name === undefined) throw new UsageError('missing command');
  const spec = Object.hasOwn(COMMAND_FLAGS, name) ? COMMAND_FLAGS[name] : undefined;
  if (!spec) throw new UsageError(`unknown command ${JSON.stringify(name)}`);
  const [min, max, argName] = spec.positionals;
  if (args.length < min) throw new UsageError(`${name} needs ${argName}`);
  if (args.length > max) {
    throw new UsageError(`${name} takes ${max === 0 ? 'no arguments' : `one ${argName}`}; quote it if it has spaces (got ${args.length} arguments)`);
  }
  // Its value is never shown: it may be a real token.
  if (values.token !== undefined) throw new UsageError('--token is refused: flags show up in process lists and shell history; set DSH_SESSION_REFERENCE_TOKEN instead');
  for (const flag of ['store', 'demo', 'as', 'limit', 'match-titles', 'no-cache', 'max-reference-bytes', 'to', 'dry-run'] as const) {
    if (values[flag] !== undefined && !spec.flags.includes(flag)) throw new UsageError(`--${flag} does not apply to ${name}`);
  }
  if (values.store !== undefined && values.demo) throw new UsageError('--store and --demo exclude each other');
  if (values.store === '') throw new UsageError('--store needs a directory');
  if (name === 'push' && !values.to) throw new UsageError('push needs --to URL (the edge service)');
  if (name === 'prepare' && values.as === undefined) throw new UsageError('prepare needs --as SESSION_ID (the session you are writing in)');
  return { name, args, flags: values };
}

/** The positional argument that stands for standard input. */
const STDIN_ARGUMENT = '-';

/**
 * All of standard input as one string: strict UTF-8 (invalid bytes are a usage error, not
 * replacement characters), a leading BOM dropped, and one trailing `\n` or `\r\n` removed.
 */
async function readStdin(io: CliIO): Promise<string> {
  if (!io.stdin) throw new UsageError('"-" reads standard input, which is not available here');
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let text = '';
  try {
    for await (const chunk of io.stdin) text += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    text += decoder.decode();
  } catch (error) {
    throw new UsageError(`cannot read standard input: ${error instanceof Error ? error.message : String(error)}`);
  }
  return text.replace(/\r?\n$/, '');
}

/**
 * A count flag's value, read by the one parser of counts given as text (`parsePositiveInteger`,
 * shared with the edge Worker's settings): decimal digits only, a positive safe integer; anything
 * else is a usage error quoting the value as given (`" 100"`, `0`, `1e3`).
 */
function integerFlag(flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  try {
    return parsePositiveInteger(value, `--${flag}`);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

async function run(command: Command, io: CliIO, out: (text: string) => void, options: CliOptions): Promise<void> {
  const { name, args, flags } = command;
  const json = flags.json === true;
  switch (name) {
    case 'encode': {
      const { encodeSessionReferenceUri } = await import('../uri.js');
      const uri = encodeSessionReferenceUri(args[0]!);
      out(json ? printJson({ sessionId: args[0], uri }) : uri);
      return;
    }
    case 'decode': {
      const { decodeSessionReferenceUri } = await import('../uri.js');
      const sessionId = decodeSessionReferenceUri(args[0]!);
      out(json ? printJson({ uri: args[0], sessionId }) : escapeControls(sessionId));
      return;
    }
    case 'parse': {
      const { parseSessionReferenceText } = await import('../mention.js');
      const parsed = parseSessionReferenceText(args[0]!);
      if (json) {
        out(printJson(parsed));
      } else {
        out(escapeControls(parsed.text, true));
        for (const reference of parsed.references) out(printJson(reference));
      }
      return;
    }
    case 'candidates':
      return candidates(args[0], flags, io, out);
    case 'search':
      return search(args[0]!, flags, io, out, options);
    case 'prepare':
      return prepare(args[0]!, flags, io, out);
  }
}

/** The store root of `--store` / `--demo` / the default (SPEC §12.1). */
async function storeRoot(flags: Flags, io: CliIO): Promise<string> {
  if (flags.demo) return (await import('./samples.js')).sampleStoreRoot();
  if (flags.store !== undefined) return flags.store;
  return (await import('./store.js')).defaultSessionStoreRoot(io.env ?? process.env);
}

/**
 * `push` (SPEC §17.8), loaded only for this command; a `--to` or token it cannot use is a usage error.
 * @returns The exit status.
 */
async function push(flags: Flags, io: CliIO): Promise<number> {
  const { PushUsageError, runPush } = await import('./push.js');
  const root = await storeRoot(flags, io);
  try {
    return await runPush({ to: flags.to!, root, dryRun: flags['dry-run'] === true, json: flags.json === true }, io);
  } catch (error) {
    throw error instanceof PushUsageError ? new UsageError(error.message) : error;
  }
}

/**
 * The store at `root`, listed once (its listing caches first filled from `listing`, the text a
 * cache file carried); the target agent from `--as`. The service is handed the listing it was
 * given here (no second scan of the store).
 */
async function openStore(
  root: string,
  flags: Flags,
  io: CliIO,
  listing?: string,
  onRead?: () => void,
): Promise<{ sessionQuery: SessionQuery; agent: TargetAgent; carried: CarriedDshStore; reads: { logs: number } }> {
  // The CLI waits for the listing and runs nothing else meanwhile: cached identities are stat'ed synchronously.
  const carried = (await import('./store.js')).openDshStore({ root }, { listing, statSync: true });
  const store = carried.query;
  const records = await store.listSessions();
  /** Calls that read logs (surfaces, titles) made through the service. */
  const reads = { logs: 0 };
  /** Counts a call that reads logs, telling `onRead` of the first. */
  const read = () => {
    if (reads.logs++ === 0) onRead?.();
  };
  // An empty listing is not an error (a missing root lists nothing), but a mistyped --store should not look like "no sessions".
  if (records.length === 0) io.stderr.write(`note: no dsh sessions found under ${printJson(store.root)}\n`);
  const sessionQuery: SessionQuery = {
    listSessions: async () => records,
    readSurface: (id, signal) => (read(), store.readSurface(id, signal)),
    readRetainedSurface: (id, maxReferenceBytes, signal) => (read(), store.readRetainedSurface(id, maxReferenceBytes, signal)),
    readTitleSnapshots: (ids, signal) => (read(), store.readTitleSnapshots(ids, signal)),
  };
  if (flags.as !== undefined) {
    const target = records.find((record) => record.header.id === flags.as);
    if (!target) {
      throw fail('NOT_FOUND', `--as session ${describeValue(flags.as)} is not in the dsh store at ${JSON.stringify(store.root)}`);
    }
    const agent: TargetAgent = { id: target.header.id };
    if (typeof target.header.cwd === 'string') agent.cwd = target.header.cwd;
    return { sessionQuery, agent, carried, reads };
  }
  // Without --as nothing is excluded: an id no listed session carries.
  const ids = new Set(records.map((record) => record.header.id));
  let id = '\u0000dsh-session-reference-cli';
  while (ids.has(id)) id += '\u0000';
  return { sessionQuery, agent: { id }, carried, reads };
}

async function candidates(query: string | undefined, flags: Flags, io: CliIO, out: (text: string) => void): Promise<void> {
  const limit = integerFlag('limit', flags.limit);
  const { sessionQuery, agent } = await openStore(await storeRoot(flags, io), flags, io);
  const { createSessionReferences } = await import('../service.js');
  const refs = createSessionReferences({ sessionQuery, config: { matchTitles: flags['match-titles'] === true } });
  const rows = await refs.listCandidates(agent, query, limit);
  if (flags.json) {
    out(printJson(rows, 2));
    return;
  }
  for (const row of rows) {
    const created = Number.isFinite(row.createdAt) ? new Date(row.createdAt).toISOString().slice(0, 16).replace('T', ' ') : '?';
    out([field(row.label), field(row.sessionId), created, row.cwd === undefined ? '(no cwd)' : field(row.cwd), field(row.mention)].join('\t'));
  }
}

async function prepare(text: string, flags: Flags, io: CliIO, out: (text: string) => void): Promise<void> {
  const maxReferenceBytes = integerFlag('max-reference-bytes', flags['max-reference-bytes']);
  const config: SessionReferenceConfig = {};
  if (maxReferenceBytes !== undefined) config.maxReferenceBytes = maxReferenceBytes;
  const [{ resolveConfig }, { parseSessionReferenceText }, { createSessionReferences }, { randomUUID }] = await Promise.all([
    import('../config.js'),
    import('../mention.js'),
    import('../service.js'),
    import('node:crypto'),
  ]);
  // Bad limits and malformed mentions fail before the store is read.
  resolveConfig(config);
  parseSessionReferenceText(text);
  const { sessionQuery, agent } = await openStore(await storeRoot(flags, io), flags, io);
  const refs = createSessionReferences({ sessionQuery, config });
  const message: UserMessage = { id: randomUUID(), role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } };
  const composed = await refs.referenceUserMessage(agent, message);
  if (flags.json) {
    out(printJson({ message: composed, metadata: composed.envelope?.contexts[0]?.metadata ?? null }, 2));
    return;
  }
  let visible = '';
  for (const block of composed.content) if (block.type === 'text' && typeof block.text === 'string') visible += block.text;
  out(escapeControls(visible, true));
}

/**
 * `search QUERY` (SPEC §16.6): hits as a table of label, cwd, score and first snippet, or JSON.
 * Unless `--no-cache`, the store's listing and the index start from this store's cache file
 * (`search-cache.ts`: only a file of the user's, in a directory of the user's), and the file is
 * written again after the search when either changed. A cache refused, or one that cannot be
 * written, is a note on stderr, never a failure.
 */
async function search(query: string, flags: Flags, io: CliIO, out: (text: string) => void, options: CliOptions): Promise<void> {
  const limit = integerFlag('limit', flags.limit);
  const root = await storeRoot(flags, io);
  const cache = flags['no-cache'] ? undefined : await searchCache(root, io);
  const compilers = cache?.contents !== undefined && options.ownsProcess === true ? await baselineCompilersOnly() : undefined;
  const [{ sessionQuery, agent, carried, reads }, { createSessionReferences }] = await Promise.all([
    openStore(root, flags, io, cache?.contents?.listing, compilers?.restore),
    import('../service.js'),
    provideSqlite(),
  ]);
  const refs = createSessionReferences({ sessionQuery, config: { searchIndex: cache?.contents?.index } });
  const hits = await refs.searchSessions(agent, query, { limit });
  if (cache !== undefined && cache.refused === undefined) {
    const listing = carried.exportListing();
    // The cached listing was written with the cached index, which was brought up to that listing.
    // The same listing again, and no log read (the index neither rebuilt nor updated, SPEC §16.4):
    // the index is the one loaded, and the file is left as it is without exporting it.
    const unchanged = listing === cache.contents?.listing && reads.logs === 0;
    const contents = unchanged ? undefined : { listing, index: await refs.exportSearchIndex() };
    // Written only when the search changed something (an unchanged index exports the bytes it was loaded from).
    if (contents !== undefined && (contents.listing !== cache.contents?.listing || !sameBytes(cache.contents.index, contents.index))) {
      await cache.write(contents).catch((error: unknown) => note(io, `search index not cached at ${printJson(cache.file)}: ${describeValue(error)}`));
    }
  }
  if (flags.json) {
    out(printJson(hits, 2));
    return;
  }
  for (const hit of hits) {
    const snippet = hit.snippets[0]?.text ?? '';
    out([field(hit.label), hit.cwd === undefined ? '(no cwd)' : field(hit.cwd), hit.score.toFixed(2), field(snippet)].join('\t'));
  }
}

/**
 * The cache file of the store at `root` and what it holds (SPEC §16.4), with a note on stderr when
 * the cache directory is refused (then it is neither read nor written) or a file there is not
 * trusted (then it is rebuilt).
 */
async function searchCache(root: string, io: CliIO) {
  const { readSearchCache, searchCacheDirectory, searchCacheFile, writeSearchCache } = await import('./search-cache.js');
  const env = io.env ?? process.env;
  const file = searchCacheFile(searchCacheDirectory(env, env.HOME || (await import('node:os')).homedir()), root);
  const read = await readSearchCache(file);
  if (read.refused !== undefined) note(io, `search cache not used: ${read.refused}`);
  if (read.ignored !== undefined) note(io, `search cache ignored and rebuilt: ${read.ignored}`);
  return { file, ...read, write: (contents: Parameters<typeof writeSearchCache>[1]) => writeSearchCache(file, contents) };
}

/**
 * Gives the search engine SQLite's module compiled from the package's own `sqlite3.wasm` file
 * (compiled in the background while the store is listed), so the engine need not load and decode
 * the base64 copy it carries for runtimes without files. Without that file (tests run from the
 * sources), nothing is provided and the engine uses its copy.
 */
async function provideSqlite(): Promise<void> {
  // Without WebAssembly (`node --jitless`) the engine says so itself: INVALID_CONFIG, one line.
  if (typeof WebAssembly === 'undefined') return;
  const [{ readFile }, { provideSqliteWasm }] = await Promise.all([import('node:fs/promises'), import('../search/sqlite-provide.js')]);
  const bytes = await readFile(new URL('../search/sqlite3.wasm', import.meta.url)).catch(() => undefined);
  if (bytes !== undefined) provideSqliteWasm(await WebAssembly.compile(bytes));
}

/**
 * Has V8 run what a search from a cached index runs with its baseline compilers alone, until
 * `restore()`: WebAssembly with Liftoff (`--liftoff-only`), JavaScript without TurboFan
 * (`--no-opt`). Such a search is a few queries, then the process exits: V8 otherwise optimizes
 * SQLite's functions and the CLI's that turn hot in background threads, and the process waits for
 * those compilations at exit, for code that never runs again (on a warm search of 2,000 sessions,
 * `--liftoff-only` saved 200 ms of CPU on Node 20 and 65 ms on Node 22, `--no-opt` 30–90 ms more
 * on Node 20; issue 30 item 3, `scripts/cli-cpu.sh`). The caller restores both once the search
 * turns out to read logs (sessions changed, or the index is rebuilt), which is long work the
 * optimizing compilers pay for (a build of 2,000 sessions: 20% more CPU without TurboFan). V8
 * reads both flags as it decides, so setting them back takes effect at once. Process-wide, hence
 * only when `main` owns the process.
 */
async function baselineCompilersOnly(): Promise<{ restore: () => void }> {
  const { setFlagsFromString } = await import('node:v8');
  setFlagsFromString('--liftoff-only');
  setFlagsFromString('--no-opt');
  return {
    restore: () => {
      setFlagsFromString('--no-liftoff-only');
      setFlagsFromString('--opt');
    },
  };
}

/** One `note:` line on stderr, controls escaped. */
function note(io: CliIO, text: string): void {
  io.stderr.write(`note: ${escapeControls(text)}\n`);
}

/** True when `a` holds exactly the bytes of `b`. */
function sameBytes(a: Uint8Array | undefined, b: Uint8Array): boolean {
  return a !== undefined && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** A table field on one line: JSON-quoted, controls escaped, when it holds control characters (tabs, newlines, ESC, …). */
function field(value: string): string {
  return escapeControls(value) === value ? value : printJson(value);
}

/** JSON of `value` (pretty with `indent`), C1 controls and DEL escaped too: exact JSON, safe on a terminal (SPEC §12.2). */
function printJson(value: unknown, indent?: number): string {
  return escapeControls(JSON.stringify(value, null, indent), true);
}
