/**
 * The CLI's search cache file (SPEC §16.4, issue 28 items 5–6) and the store listing it carries
 * (issue 30 item 3): never read or written through a symlink, never trusted unless the user's own,
 * never read past its header when damaged, and a warm listing that stats instead of reading.
 * The tests run as root, so ownership is checked both with `chown` (as root) and with the `uid`
 * option standing for "you"; run by another user, the parts only root can set up (`chown`, a
 * device node) are left out and the `uid` option's tests still cover ownership.
 */
import { spawnSync } from 'node:child_process';
import * as crypto from 'node:crypto';
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  lstatSync,
  lutimesSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  truncateSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { SessionSearchHit } from '../src/index.js';
import { main } from '../src/node/main.js';
import { MAX_CACHE_BYTES, readSearchCache, SearchCacheRefused, writeSearchCache } from '../src/node/search-cache.js';
import { openDshStore } from '../src/node/store.js';
import { withFs } from './fixtures/node-fs.js';
import { CJK, REAL } from './sample-ids.js';

vi.mock('node:crypto', async (importOriginal) => {
  const original = await importOriginal<typeof import('node:crypto')>();
  return { ...original, randomBytes: vi.fn(original.randomBytes) };
});

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const TMP = mkdtempSync(join(tmpdir(), 'dsh-search-cache-'));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));

/** A uid that is not the test's (root's) own: files chowned to it belong to someone else. */
const OTHER_UID = 4242;
const EUID = process.geteuid!();
/** Only root can give a file away (`chown`) or make a device node. */
const ROOT_USER = EUID === 0;

let counter = 0;

async function cli(args: string[], env: Record<string, string | undefined>) {
  let stdout = '';
  let stderr = '';
  const code = await main(args, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) }, env });
  return { code, stdout, stderr };
}

/** A copy of the sample store, its session directories dated in the past (as a store's are), and a cache home for it. */
function setup() {
  const base = join(TMP, `case-${++counter}`);
  const store = join(base, 'store');
  cpSync(join(ROOT, 'samples/store'), store, { recursive: true });
  for (const project of readdirSync(store)) for (const session of readdirSync(join(store, project))) utimesSync(join(store, project, session), 1_700_000_000, 1_700_000_000);
  const env = { XDG_CACHE_HOME: join(base, 'cache') };
  const cacheDir = join(env.XDG_CACHE_HOME, 'dsh-session-reference');
  /** `search QUERY --json`: the hits' ids and stderr. */
  const search = async (query: string, ...flags: string[]) => {
    const { code, stdout, stderr } = await cli(['search', query, '--store', store, '--json', ...flags], env);
    expect(code, stderr).toBe(0);
    return { ids: (JSON.parse(stdout) as SessionSearchHit[]).map((hit) => hit.sessionId), stderr };
  };
  /** The cache file's path (after a first search wrote it). */
  const cacheFile = () => {
    const [name] = readdirSync(cacheDir).filter((entry) => entry.endsWith('.index'));
    return join(cacheDir, name!);
  };
  const victim = join(base, 'victim.txt');
  writeFileSync(victim, 'not yours to overwrite\n', { mode: 0o644 });
  return { base, store, env, cacheDir, search, cacheFile, victim };
}

/** The victim file is as it was: content and mode. */
function expectUntouched(victim: string): void {
  expect(readFileSync(victim, 'utf8')).toBe('not yours to overwrite\n');
  expect(statSync(victim).mode & 0o777).toBe(0o644);
}

/** The cache file is a regular file of the user's, 0600, in a 0700 directory. */
function expectSafeCache(file: string): void {
  const stats = lstatSync(file);
  expect(stats.isFile()).toBe(true);
  expect(stats.uid).toBe(EUID);
  expect(stats.mode & 0o777).toBe(0o600);
  expect(lstatSync(dirname(file)).mode & 0o777).toBe(0o700);
}

function mkfifo(path: string): void {
  const made = spawnSync('mkfifo', [path]);
  if (made.status !== 0) throw new Error(`mkfifo failed: ${made.stderr}`);
}

describe('the cache file is never read or written through a symlink (issue 28.5)', () => {
  it('a symlink at the cache path is not followed: not read (even to a valid cache), then replaced by a file of its own; its target is left as it was', async () => {
    const { search, cacheFile, victim, base } = setup();
    expect((await search('gemini')).ids).toContain(REAL);
    const file = cacheFile();
    // A valid cache elsewhere, reached through a symlink, is not read: the symlink is noted.
    const elsewhere = join(base, 'elsewhere.index');
    cpSync(file, elsewhere);
    rmSync(file);
    symlinkSync(elsewhere, file);
    const viaLink = await search('gemini');
    expect(viaLink.ids).toContain(REAL);
    expect(viaLink.stderr).toMatch(/^note: search cache ignored and rebuilt: .* is a symbolic link\n$/);
    expectSafeCache(file);
    // A symlink to someone's file: the file is neither read nor overwritten.
    rmSync(file);
    symlinkSync(victim, file);
    expect((await search('gemini')).ids).toContain(REAL);
    expectUntouched(victim);
    expectSafeCache(file);
  });

  it('a symlink at a temporary name is never written through: the old predictable name is not used, and a planted name makes the write fail, not follow', async () => {
    const { search, cacheFile, cacheDir, victim, env, store } = setup();
    await search('gemini');
    const file = cacheFile();
    rmSync(file);
    // The name the CLI used to write (`….index.<pid>.tmp`).
    symlinkSync(victim, `${file}.${process.pid}.tmp`);
    await search('gemini');
    expectUntouched(victim);
    expectSafeCache(file);
    // Someone guessed the random name: the exclusive create refuses the symlink there.
    rmSync(file);
    const guessed = Buffer.alloc(16, 0xab);
    vi.mocked(crypto.randomBytes).mockImplementationOnce(() => guessed);
    const planted = join(cacheDir, `.${file.split('/').at(-1)}.${guessed.toString('hex')}.tmp`);
    symlinkSync(victim, planted);
    const { code, stdout, stderr } = await cli(['search', 'gemini', '--store', store, '--json'], env);
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as SessionSearchHit[]).map((hit) => hit.sessionId)).toContain(REAL);
    expect(stderr).toMatch(/^note: search index not cached at .*EEXIST/);
    expectUntouched(victim);
    expect(existsSync(file)).toBe(false);
    expect(lstatSync(planted).isSymbolicLink()).toBe(true);
  });

  it('a cache directory that is a symlink, belongs to someone else or is writable by others is refused: noted, neither read nor written, the search answers', async () => {
    for (const make of ['symlink', ...(ROOT_USER ? (['other owner'] as const) : []), 'mode 0777', 'mode 0770'] as const) {
      const { search, cacheDir, base } = setup();
      mkdirSync(dirname(cacheDir), { recursive: true });
      if (make === 'symlink') {
        mkdirSync(join(base, 'real-dir'), { mode: 0o700 });
        symlinkSync(join(base, 'real-dir'), cacheDir);
      } else {
        mkdirSync(cacheDir, { mode: 0o700 });
        if (make === 'other owner') chownSync(cacheDir, OTHER_UID, OTHER_UID);
        else chmodSync(cacheDir, make === 'mode 0777' ? 0o777 : 0o770);
      }
      const result = await search('gemini');
      expect(result.ids, make).toContain(REAL);
      expect(result.stderr, make).toMatch(/^note: search cache not used: .*(symbolic link|belongs to uid 4242|writable by others)/);
      expect(readdirSync(make === 'symlink' ? join(base, 'real-dir') : cacheDir), make).toEqual([]);
    }
  });
});

describe('the cache file is trusted only as the user\'s own regular file (issue 28.5–6)', () => {
  it('a file of another owner, or readable or writable by others, is ignored (noted), rebuilt and replaced by a 0600 file', async () => {
    for (const change of [...(ROOT_USER ? (['chown'] as const) : []), 'mode 0644', 'mode 0666', 'mode 0640'] as const) {
      const { search, cacheFile, store } = setup();
      await search('gemini');
      const file = cacheFile();
      // A cache answering for a word no log holds: if it were trusted, the search would find it.
      const forged = await forgedCache(store, file);
      writeFileSync(file, forged);
      if (change === 'chown') chownSync(file, OTHER_UID, OTHER_UID);
      else chmodSync(file, Number.parseInt(change.slice(5), 8));
      const result = await search(PLANTED);
      expect(result.ids, change).toEqual([]);
      expect(result.stderr, change).toMatch(/^note: search cache ignored and rebuilt: .*(belongs to uid 4242|is open to others)/);
      expectSafeCache(file);
    }
  });

  it('the uid option stands for "you": a directory or file of another uid is refused or ignored, a write to such a directory rejects', async () => {
    const { search, cacheFile } = setup();
    await search('gemini');
    const file = cacheFile();
    expect((await readSearchCache(file)).contents).toBeDefined();
    const asOther = await readSearchCache(file, { uid: OTHER_UID });
    expect(asOther.contents).toBeUndefined();
    expect(asOther.refused).toMatch(/belongs to uid 0, not to you \(uid 4242\)/);
    await expect(writeSearchCache(file, { listing: '{}', index: new Uint8Array(3) }, { uid: OTHER_UID })).rejects.toBeInstanceOf(SearchCacheRefused);
    if (ROOT_USER) {
      // The directory made the other uid's, the file still root's: the file is not trusted.
      chownSync(dirname(file), OTHER_UID, OTHER_UID);
      const fileOfOther = await readSearchCache(file, { uid: OTHER_UID });
      expect(fileOfOther.refused).toBeUndefined();
      expect(fileOfOther.ignored).toMatch(/belongs to uid 0/);
    }
  });

  it('removes the temporary files a killed writer left, once an hour old, and never what a symlink there points to', async () => {
    const { search, cacheFile, cacheDir, victim } = setup();
    await search('gemini');
    const name = cacheFile().split('/').at(-1)!;
    const old = join(cacheDir, `.${name}.${'1'.repeat(32)}.tmp`);
    const fresh = join(cacheDir, `.${name}.${'2'.repeat(32)}.tmp`);
    const link = join(cacheDir, `.${name}.${'3'.repeat(32)}.tmp`);
    writeFileSync(old, 'conversation text', { mode: 0o600 });
    writeFileSync(fresh, 'being written', { mode: 0o600 });
    symlinkSync(victim, link);
    utimesSync(old, 1_600_000_000, 1_600_000_000);
    const hourAgo = new Date(Date.now() - 2 * 60 * 60 * 1000);
    lutimesSync(link, hourAgo, hourAgo);
    rmSync(cacheFile()); // a write happens
    await search('gemini');
    expect(existsSync(old)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
    expect(existsSync(link) || lstatSync(link, { throwIfNoEntry: false }) !== undefined).toBe(false);
    expectUntouched(victim);
  });

  it('writes 0600 in a 0700 directory whatever the umask', async () => {
    const { search, cacheFile } = setup();
    const umask = process.umask(0);
    try {
      await search('gemini');
    } finally {
      process.umask(umask);
    }
    expectSafeCache(cacheFile());
  });
});

describe('the cache file is read only as far as it can be trusted (issue 28.6)', () => {
  it('a FIFO at the cache path does not block the search; it is replaced by the cache file', async () => {
    const { search, cacheDir, store } = setup();
    mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    const file = join(cacheDir, cacheName(store));
    mkfifo(file);
    const result = await search('gemini');
    expect(result.ids).toContain(REAL);
    expect(result.stderr).toMatch(/is not a regular file/);
    expectSafeCache(file);
  });

  it('a symlink to /dev/zero, a device and a socket at the cache path are not read, and are replaced', async () => {
    const { search, cacheDir, store } = setup();
    mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    const file = join(cacheDir, cacheName(store));
    symlinkSync('/dev/zero', file);
    expect((await search('gemini')).ids).toContain(REAL);
    expectSafeCache(file);
    // A device node inside the directory itself (only root can make one): opened without blocking, never read.
    if (ROOT_USER) {
      rmSync(file);
      expect(spawnSync('mknod', [file, 'c', '1', '5']).status).toBe(0); // /dev/zero's numbers
      const result = await search('gemini');
      expect(result.ids).toContain(REAL);
      expect(result.stderr).toMatch(/is not a regular file/);
      expectSafeCache(file);
    }
    // A socket: opening it fails (ENXIO); the search answers and the socket is replaced.
    rmSync(file);
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(file, resolve));
    try {
      expect((await search('gemini')).ids).toContain(REAL);
      expectSafeCache(file);
    } finally {
      server.close();
    }
  });

  it('sparse files on both sides of the cap are ignored after at most a header read', async () => {
    const { search, cacheDir, store } = setup();
    mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    const file = join(cacheDir, cacheName(store));
    for (const size of [MAX_CACHE_BYTES + 1, MAX_CACHE_BYTES - 1, MAX_CACHE_BYTES]) {
      writeFileSync(file, '', { mode: 0o600 });
      truncateSync(file, size);
      const read = vi.spyOn(await fileHandlePrototype(), 'read');
      let asked = 0;
      try {
        expect((await readSearchCache(file)).contents).toBeUndefined();
        asked = read.mock.calls.reduce((sum, call) => sum + (call[2] as number), 0);
      } finally {
        read.mockRestore();
      }
      // Past the cap: nothing read. Below: the header's 256 bytes, no more.
      expect(asked, `size ${size}`).toBe(size > MAX_CACHE_BYTES ? 0 : 256);
      expect((await search('gemini')).ids).toContain(REAL);
      expectSafeCache(file);
    }
  });

  it('a header whose lengths disagree with the file size, or a listing whose checksum fails, is damage: rebuilt, never read past the header', async () => {
    const { search, cacheFile, store } = setup();
    await search('gemini');
    const file = cacheFile();
    const good = readFileSync(file);
    const newline = good.indexOf(10);
    const header = good.subarray(0, newline + 1).toString('latin1');
    // Claiming a body larger than the file: rejected from the header and the size alone.
    const [, , , index, listing] = header.trim().split(' ');
    const claimed = header.replace(` ${index} `, ` ${Number(index) + 1_000_000_000} `);
    writeFileSync(file, Buffer.concat([Buffer.from(claimed, 'latin1'), good.subarray(newline + 1)]));
    expect((await readSearchCache(file)).contents).toBeUndefined();
    // A listing byte changed: the checksum fails.
    const damaged = Buffer.from(good);
    damaged[damaged.length - 5] ^= 0x01;
    writeFileSync(file, damaged);
    expect((await readSearchCache(file)).contents).toBeUndefined();
    expect(Number(listing)).toBeGreaterThan(0);
    expect((await search('gemini')).ids).toContain(REAL);
    expect(readFileSync(file).equals(good)).toBe(true);
    void store;
  });

  it('property: whatever is at the cache path (bytes, modes, owners, kinds), a search answers as without a cache, the file left behind is safe, and nothing outside is written', async () => {
    const { search, cacheDir, store, victim } = setup();
    const expected = (await search('gemini', '--no-cache')).ids;
    mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    const file = join(cacheDir, cacheName(store));
    const good = await (async () => {
      await search('gemini');
      return readFileSync(file);
    })();
    const thing = fc.oneof(
      fc.record({ kind: fc.constant('bytes' as const), bytes: fc.uint8Array({ maxLength: 600 }), mode: fc.constantFrom(0o600, 0o400, 0o644, 0o604, 0o660) }),
      fc.record({ kind: fc.constant('damaged' as const), at: fc.nat(), flip: fc.integer({ min: 1, max: 255 }) }),
      fc.record({ kind: fc.constant('truncated' as const), keep: fc.nat() }),
      fc.record({ kind: fc.constantFrom('fifo' as const, 'symlink to victim' as const, 'symlink to /dev/zero' as const, 'dangling symlink' as const, ...(ROOT_USER ? ['other owner' as const] : [])) }),
    );
    await fc.assert(
      fc.asyncProperty(thing, async (what) => {
        rmSync(file, { force: true });
        switch (what.kind) {
          case 'bytes':
            writeFileSync(file, what.bytes, { mode: what.mode });
            chmodSync(file, what.mode);
            break;
          case 'damaged': {
            const bytes = Buffer.from(good);
            bytes[what.at % bytes.length] ^= what.flip;
            writeFileSync(file, bytes, { mode: 0o600 });
            break;
          }
          case 'truncated':
            writeFileSync(file, good.subarray(0, what.keep % good.length), { mode: 0o600 });
            break;
          case 'fifo':
            mkfifo(file);
            break;
          case 'symlink to victim':
            symlinkSync(victim, file);
            break;
          case 'symlink to /dev/zero':
            symlinkSync('/dev/zero', file);
            break;
          case 'dangling symlink':
            symlinkSync(join(cacheDir, 'nowhere'), file);
            break;
          case 'other owner':
            writeFileSync(file, good, { mode: 0o600 });
            chownSync(file, OTHER_UID, OTHER_UID);
            break;
        }
        expect((await search('gemini')).ids).toEqual(expected);
        expectSafeCache(file);
        expectUntouched(victim);
        expect(readdirSync(cacheDir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
      }),
      { numRuns: 40, seed: 0x28c5 },
    );
  });
});

describe('the cache carries the store listing (issue 30.3)', () => {
  it.each([false, true])('a warm listing (statSync: %s) opens no log and lists no session directory, and gives what a cold one gives', async (statSync) => {
    const { store } = setup();
    const cold = openDshStore({ root: store });
    const expected = await cold.query.listSessions();
    const listing = cold.exportListing();
    const opened: unknown[] = [];
    const listed: unknown[] = [];
    const warm = openDshStore({ root: store }, { listing, statSync });
    const records = await withFs('open', (original) => (...args) => (opened.push(args[0]), original(...args)), () =>
      withFs('readdir', (original) => (...args) => (listed.push(args[0]), original(...args)), () => warm.query.listSessions()),
    );
    expect(records).toEqual(expected);
    expect(opened).toEqual([]);
    // The root and its project directories only.
    expect(listed.length).toBe(1 + readdirSync(store).length);
    expect(warm.exportListing()).toBe(listing);
  });

  it.each([false, true])('(statSync: %s) a changed log, a new log version, a new session and a removed one are seen; a forged header is used only while its log keeps the identity it was recorded with', async (statSync) => {
    const { store } = setup();
    const first = openDshStore({ root: store });
    const before = await first.query.listSessions();
    const listing = first.exportListing();
    const cjkDir = join(store, 'global', 'session-e5f1c2a0');
    // A forged header for the CJK log, with an identity the log does not have: not used.
    const forged = JSON.parse(listing) as { sessions: unknown[][] };
    for (const row of forged.sessions) if (row[0] === 'global/session-e5f1c2a0') (row[5] as { id: string }).id = 'forged-id';
    const stale = openDshStore({ root: store }, { listing: JSON.stringify(forged), statSync });
    expect((await stale.query.listSessions()).map((r) => r.header.id)).toContain('forged-id');
    // …because its identity still matches; once the log changes, it is read again.
    writeFileSync(join(cjkDir, 'session.jsonl'), readFileSync(join(cjkDir, 'session.jsonl'), 'utf8') + '\n');
    const again = openDshStore({ root: store }, { listing: JSON.stringify(forged), statSync });
    const ids = (await again.query.listSessions()).map((r) => r.header.id);
    expect(ids).toContain(CJK);
    expect(ids).not.toContain('forged-id');
    // What it carries on is what it read, not the text it was given.
    expect(again.exportListing()).not.toContain('forged-id');
    expect(stale.exportListing()).toBe(JSON.stringify(forged));
    // A new session and a removed one.
    const added = join(store, 'global', 'session-new');
    mkdirSync(added);
    writeFileSync(join(added, 'session.jsonl'), `${JSON.stringify({ type: 'session', version: 3, id: 'new-one', createdAt: 5 })}\n`);
    rmSync(join(store, '77-Dumen', readdirSync(join(store, '77-Dumen'))[0]!), { recursive: true });
    const later = await openDshStore({ root: store }, { listing, statSync }).query.listSessions();
    expect(later.map((r) => r.header.id)).toContain('new-one');
    expect(later.length).toBe(before.length);
    // A new log version in a known directory (the directory changes): the higher version is read.
    writeFileSync(join(cjkDir, 'session.v9.jsonl'), `${JSON.stringify({ type: 'session', version: 9, id: 'versioned', createdAt: 6 })}\n`);
    expect((await openDshStore({ root: store }, { listing, statSync }).query.listSessions()).map((r) => r.header.id)).toContain('versioned');
  });

  it('listing text of another root, another version, or malformed rows is ignored, row by row', async () => {
    const { store } = setup();
    const cold = openDshStore({ root: store });
    const expected = await cold.query.listSessions();
    const listing = JSON.parse(cold.exportListing()) as { version: number; root: string; sessions: unknown[][] };
    const variants = [
      'not json',
      JSON.stringify({ ...listing, root: '/elsewhere' }),
      JSON.stringify({ ...listing, version: 2 }),
      JSON.stringify({ ...listing, sessions: listing.sessions.map((row) => [row[0], row[1], '../../etc/passwd', true, row[4], row[5]]) }),
      JSON.stringify({ ...listing, sessions: listing.sessions.map((row) => [...row.slice(0, 5), { id: 'no-type', createdAt: 1 }]) }),
      JSON.stringify({ ...listing, sessions: [1, null, 'x', [], ...listing.sessions] }),
    ];
    for (const text of variants) expect(await openDshStore({ root: store }, { listing: text }).query.listSessions()).toEqual(expected);
  });
});

/** `FileHandle.prototype` (the class is not exported), to count what a read asks for. */
async function fileHandlePrototype(): Promise<{ read: (...args: unknown[]) => unknown }> {
  const handle = await open(thisFile(), 'r');
  await handle.close();
  return Object.getPrototypeOf(handle) as { read: (...args: unknown[]) => unknown };
}

function thisFile(): string {
  return fileURLToPath(import.meta.url);
}

/** The cache file name of the store at `store` (as `searchCacheFile`). */
function cacheName(store: string): string {
  return `search-${crypto.createHash('sha256').update(store).digest('hex').slice(0, 24)}.index`;
}

/** A phrase {@link forgedCache} puts into the CJK session's index entry: no log holds it. */
const PLANTED = '固定的错误码';

/**
 * The cache file of `store` (written by an earlier search) with {@link PLANTED} put into the CJK
 * session's entry of its index, identity and listing unchanged, so that the cache answers for a
 * phrase no log holds. It is a valid cache (header, checksum) of the user's; only its owner or
 * mode makes it untrusted. (A log rewritten in place with its size and mtime put back no longer
 * makes one: its ctime is in the identity.)
 */
async function forgedCache(store: string, file: string): Promise<Buffer> {
  const contents = (await readSearchCache(file)).contents!;
  const { indexFromBytes, indexToBytes } = await import('../src/search/index-bytes.js');
  const index = (await indexFromBytes(contents.index, 256 * 1024))!;
  const session = (await index.session(CJK))!;
  await index.put([{ ...session, items: [...session.items, { role: 'user', text: PLANTED }] }]);
  const bytes = await indexToBytes(index);
  index.close();
  await writeSearchCache(file, { listing: contents.listing, index: bytes });
  // Trusted, it answers for the planted phrase.
  const env = { XDG_CACHE_HOME: dirname(dirname(file)) };
  expect((await cli(['search', PLANTED, '--store', store, '--json'], env)).stdout).toContain(CJK);
  return readFileSync(file);
}

describe('the cached index names Node’s segmentation (src/host-segmenter.ts)', () => {
  it('the index a CLI search caches carries Node’s version and ICU’s in search_meta, and a warm search trusts it', async () => {
    const { search, cacheFile } = setup();
    const first = await search('gemini');
    const contents = (await readSearchCache(cacheFile())).contents!;
    const { indexFromBytes } = await import('../src/search/index-bytes.js');
    const index = (await indexFromBytes(contents.index, 256 * 1024))!;
    const [[by]] = index.sql.all("SELECT value FROM search_meta WHERE key = 'wordsBy'") as [[string]];
    index.close();
    expect(JSON.parse(by)).toEqual(['node', process.version, process.versions.icu, process.versions.unicode, expect.any(Boolean), process.env.NODE_ICU_DATA ?? null, expect.any(Array)]);
    expect((await search('gemini')).ids).toEqual(first.ids);
  });
});

describe('a damaged log body, as the CLI reports it', () => {
  it('search names the log, the line and what is wrong (the store’s INVALID_LOG, not the service’s cut READ_FAILED: the probe of issue 30, finding 4)', async () => {
    const { store, env } = setup();
    // A plain log of the sample store (the others are zstd).
    const logs = readdirSync(store).flatMap((project) => readdirSync(join(store, project)).flatMap((session) => readdirSync(join(store, project, session)).map((name) => join(store, project, session, name))));
    const log = logs.find((path) => path.endsWith('.jsonl'))!;
    const lines = readFileSync(log, 'utf8').split('\n').filter((line) => line !== '').length;
    writeFileSync(log, readFileSync(log, 'utf8') + '{"type":"tool/result","seq":99999,"time":1,"data":{"x":"\\q"}}\n');
    const { code, stderr } = await cli(['search', 'gemini', '--store', store], env);
    expect(code).toBe(1);
    expect(stderr).toMatch(new RegExp(`^SESSION_REFERENCE_INVALID_LOG: ${escapeRegExp(JSON.stringify(log))}: dsh session log line ${lines + 1} is not JSON: `));
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
