/**
 * Where and how the CLI keeps its search index between runs (SPEC §16.4): one file per store root
 * under `$XDG_CACHE_HOME/dsh-session-reference/`, else `~/.cache/dsh-session-reference/`. The file
 * holds conversation text and decides what a later run reads, so (issue 28 items 5–6):
 *
 * - the directory must be the user's (owner = effective uid), a real directory (not a symlink) and
 *   writable by nobody else; it is created 0700 when absent; otherwise the cache is refused (the
 *   CLI says so and searches without it);
 * - a file is opened without following symlinks and without blocking (`O_NOFOLLOW | O_NONBLOCK`),
 *   then trusted only as a regular file of the user's, readable by nobody else (`fstat` of what was
 *   opened), of at most {@link MAX_CACHE_BYTES}; its header line is checked against the file's size
 *   before the body is read, and the body is read to that size and no further;
 * - a file is written under an unpredictable temporary name, created exclusively (`O_CREAT |
 *   O_EXCL | O_NOFOLLOW`, mode 0600 whatever the umask), then renamed over the cache file; the
 *   temporary files of a writer that was killed are removed after an hour.
 *
 * Anything else at the cache path (a FIFO, device, socket, symlink, a file of another owner or
 * mode, an oversized, sparse or damaged file) is ignored and the index rebuilt, in time and memory
 * bounded by the header read.
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { constants, type Stats } from 'node:fs';
import { lstat, mkdir, open, readdir, rename, unlink, type FileHandle } from 'node:fs/promises';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';

/**
 * The largest cache file read back, in bytes (1 GiB): a file past it is not the index of any store
 * the CLI searches in memory (the index is about the size of the text it indexes), so it is
 * ignored (rebuilt) without being read, and an index past it is not written.
 */
export const MAX_CACHE_BYTES = 1024 * 1024 * 1024;

/** What a cache file carries: the store's listing (SPEC §12.1, as JSON text) and the search index bytes (SPEC §16.4). */
export interface SearchCacheContents {
  /** What the store's last listing learned (`CarriedDshStore.exportListing()`), JSON text. */
  listing: string;
  /** The bytes of `exportSearchIndex()`. */
  index: Uint8Array;
}

/** Options of {@link readSearchCache} and {@link writeSearchCache}. */
export interface SearchCacheOptions {
  /**
   * The user id the directory and the file must belong to; default the effective uid
   * (`process.geteuid()`; where there is none, on Windows, owners and modes are not checked).
   * Tests give another one to see a file of another owner refused.
   */
  uid?: number | undefined;
}

/** What {@link readSearchCache} found. */
export interface SearchCacheRead {
  /** The cached listing and index; `undefined` when there is no usable file (the index is rebuilt). */
  contents: SearchCacheContents | undefined;
  /**
   * Why the cache directory is not used at all (not the user's, writable by others, a symlink):
   * the caller says so and neither reads nor writes the cache. `undefined` when it may be used.
   */
  refused: string | undefined;
  /** Why a file at the cache path was not trusted (symlink, not a regular file, owner, mode), for a note; `undefined` otherwise. */
  ignored: string | undefined;
}

/** The cache directory refused (see {@link SearchCacheRead.refused}), as a {@link writeSearchCache} rejection. */
export class SearchCacheRefused extends Error {
  override name = 'SearchCacheRefused';
}

/** The cache directory of SPEC §16.4 for `env` (a relative `XDG_CACHE_HOME` is ignored, as the XDG Base Directory spec says). */
export function searchCacheDirectory(env: Readonly<Record<string, string | undefined>>, home: string = homedir()): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(home, '.cache');
  return join(base, 'dsh-session-reference');
}

/** The cache file of the store at `root`: named by a hash of the root's absolute path. */
export function searchCacheFile(directory: string, root: string): string {
  const key = createHash('sha256').update(resolve(root)).digest('hex').slice(0, 24);
  return join(directory, `search-${key}.index`);
}

/** First line of a cache file: magic, version, byte lengths of the index and the listing, SHA-256 of the listing. */
const HEADER = /^dsh-session-reference search-cache 1 (\d{1,10}) (\d{1,10}) ([0-9a-f]{64})\n/;

/** Bytes read for the header line: more than {@link HEADER} can match. */
const HEADER_READ = 256;

/** Bytes per read of the body. */
const READ_CHUNK = 16 * 1024 * 1024;

/** The owner required, or `undefined` where there are no POSIX owners (Windows): then owner and mode are not checked. */
function expectedUid(options: SearchCacheOptions): number | undefined {
  return options.uid ?? process.geteuid?.();
}

/**
 * Reads the cache file `file` as the module's rules say: never an error (whatever cannot be read
 * or trusted is `contents: undefined`), never more than the header line and then the size the
 * header and the file agree on, never through a symlink, never blocking on a FIFO.
 */
export async function readSearchCache(file: string, options: SearchCacheOptions = {}): Promise<SearchCacheRead> {
  const uid = expectedUid(options);
  let refused: string | undefined;
  try {
    refused = directoryProblem(await lstat(dirname(file)), uid);
  } catch {
    return { contents: undefined, refused: undefined, ignored: undefined }; // no directory yet: nothing cached
  }
  if (refused !== undefined) return { contents: undefined, refused: `${dirname(file)} ${refused}`, ignored: undefined };
  let handle: FileHandle;
  try {
    handle = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | constants.O_NOCTTY);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return { contents: undefined, refused: undefined, ignored: code === 'ELOOP' ? `${file} is a symbolic link` : undefined };
  }
  try {
    const stats = await handle.stat();
    const untrusted = fileProblem(stats, uid);
    if (untrusted !== undefined) return { contents: undefined, refused: undefined, ignored: `${file} ${untrusted}` };
    return { contents: await readContents(handle, stats.size), refused: undefined, ignored: undefined };
  } catch {
    return { contents: undefined, refused: undefined, ignored: undefined };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/**
 * Why a directory may not hold the cache, or `undefined` when it may: it must be a directory of
 * `uid` that nobody else can write (`stats` from `lstat`: a symlink is refused). `uid` undefined
 * (no POSIX owners): only the type is checked. Also checks the CLI's compile cache directory.
 */
export function directoryProblem(stats: Stats, uid: number | undefined): string | undefined {
  if (stats.isSymbolicLink()) return 'is a symbolic link';
  if (!stats.isDirectory()) return 'is not a directory';
  if (uid === undefined) return undefined;
  if (stats.uid !== uid) return `belongs to uid ${stats.uid}, not to you (uid ${uid})`;
  if ((stats.mode & 0o022) !== 0) return `is writable by others (mode ${octal(stats.mode)})`;
  return undefined;
}

/** Why an opened cache file is not trusted, or `undefined`: it must be a regular file of `uid`, of mode 0600 or less, within the cap. */
function fileProblem(stats: Stats, uid: number | undefined): string | undefined {
  if (!stats.isFile()) return 'is not a regular file';
  if (uid !== undefined && stats.uid !== uid) return `belongs to uid ${stats.uid}, not to you (uid ${uid})`;
  if (uid !== undefined && (stats.mode & 0o077) !== 0) return `is open to others (mode ${octal(stats.mode)})`;
  if (stats.size > MAX_CACHE_BYTES) return `is larger than ${MAX_CACHE_BYTES} bytes`;
  return undefined;
}

function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8)}`;
}

/**
 * The contents of an open, trusted cache file of `size` bytes: the header line first (its lengths
 * must add up to `size` exactly, each within the cap), then the body in chunks to that size.
 * `undefined` for a damaged file (wrong header, listing checksum, a file that ends early).
 */
async function readContents(handle: FileHandle, size: number): Promise<SearchCacheContents | undefined> {
  const head = new Uint8Array(Math.min(HEADER_READ, size));
  const { bytesRead } = await handle.read(head, 0, head.length, 0);
  const match = HEADER.exec(new TextDecoder('latin1').decode(head.subarray(0, bytesRead)));
  if (match === null) return undefined;
  const [line, indexText, listingText, digest] = match as unknown as [string, string, string, string];
  const indexBytes = Number(indexText);
  const listingBytes = Number(listingText);
  if (line.length + indexBytes + listingBytes !== size) return undefined;
  const body = new Uint8Array(indexBytes + listingBytes);
  for (let done = 0; done < body.length; ) {
    const { bytesRead: read } = await handle.read(body, done, Math.min(READ_CHUNK, body.length - done), line.length + done);
    if (read === 0) return undefined; // the file ended before its size: changed while read
    done += read;
  }
  const listing = body.subarray(indexBytes);
  if (sha256(listing) !== digest) return undefined;
  return { index: body.subarray(0, indexBytes), listing: new TextDecoder('utf-8', { fatal: false }).decode(listing) };
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Writes `contents` to `file` whole or not at all: into a temporary file of an unpredictable name
 * in the same directory, created exclusively without following symlinks (mode 0600), then renamed
 * over `file`. The directory is created 0700 when absent (its parents too) and must pass the
 * checks of {@link readSearchCache}, before the write and again, unchanged, before the rename.
 * @throws SearchCacheRefused when the directory may not hold the cache, or the index is past
 *   {@link MAX_CACHE_BYTES}; other errors are the file system's. The temporary file never outlives a failure.
 */
export async function writeSearchCache(file: string, contents: SearchCacheContents, options: SearchCacheOptions = {}): Promise<void> {
  const uid = expectedUid(options);
  const directory = dirname(file);
  const before = await cacheDirectory(directory, uid);
  const listing = new TextEncoder().encode(contents.listing);
  const header = new TextEncoder().encode(`dsh-session-reference search-cache 1 ${contents.index.length} ${listing.length} ${sha256(listing)}\n`);
  if (header.length + contents.index.length + listing.length > MAX_CACHE_BYTES) {
    throw new SearchCacheRefused(`the index is larger than ${MAX_CACHE_BYTES} bytes`);
  }
  await removeLeftovers(directory, basename(file));
  const temporary = join(directory, `.${basename(file)}.${randomBytes(16).toString('hex')}.tmp`);
  const handle = await open(temporary, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NOCTTY, 0o600);
  try {
    try {
      await handle.chmod(0o600); // whatever the umask left
      for (const part of [header, contents.index, listing]) await handle.writeFile(part);
    } finally {
      await handle.close();
    }
    const after = await lstat(directory);
    const problem = directoryProblem(after, uid);
    if (problem !== undefined || after.dev !== before.dev || after.ino !== before.ino) {
      throw new SearchCacheRefused(`${directory} changed while the cache was written`);
    }
    await rename(temporary, file);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    throw error;
  }
}

/** Milliseconds after which a temporary file is a leftover of a writer that died (a write takes seconds at most). */
const LEFTOVER_MS = 60 * 60 * 1000;

/**
 * Removes the temporary files of `name` that a killed writer left in the (checked) directory,
 * once they are {@link LEFTOVER_MS} old: they hold conversation text and nothing renames them.
 * `unlink` removes a symlink itself, never its target.
 */
async function removeLeftovers(directory: string, name: string): Promise<void> {
  const prefix = `.${name}.`;
  const entries = await readdir(directory).catch(() => [] as string[]);
  for (const entry of entries) {
    if (!entry.startsWith(prefix) || !entry.endsWith('.tmp')) continue;
    const path = join(directory, entry);
    const stats = await lstat(path).catch(() => undefined);
    if (stats !== undefined && Date.now() - stats.mtimeMs > LEFTOVER_MS) await unlink(path).catch(() => undefined);
  }
}

/** The checked cache directory's `lstat`, created 0700 (with its parents) when absent. @throws SearchCacheRefused */
async function cacheDirectory(directory: string, uid: number | undefined): Promise<Stats> {
  await mkdir(dirname(directory), { recursive: true, mode: 0o700 });
  await mkdir(directory, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  const stats = await lstat(directory);
  const problem = directoryProblem(stats, uid);
  if (problem !== undefined) throw new SearchCacheRefused(`${directory} ${problem}`);
  return stats;
}
