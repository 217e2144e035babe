/**
 * Where the CLI keeps its search index between runs (SPEC §16.4): one file per store root under
 * `$XDG_CACHE_HOME/dsh-session-reference/`, else `~/.cache/dsh-session-reference/`. The index holds
 * conversation text, so the directory is the user's alone (0700) and each file too (0600), whatever
 * the umask; a file larger than {@link MAX_CACHE_BYTES} is not read (it is rebuilt).
 * @module
 */
import { createHash } from 'node:crypto';
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/**
 * The largest cache file read back, in bytes (1 GiB): a file past it is not the index of any store
 * the CLI searches in memory (the index is about the size of the text it indexes), so it is damage
 * and is rebuilt, never read whole.
 */
export const MAX_CACHE_BYTES = 1024 * 1024 * 1024;

/** The cache directory of SPEC §16.4 for `env` (a relative `XDG_CACHE_HOME` is ignored, as the XDG Base Directory spec says). */
export function searchCacheDirectory(env: Readonly<Record<string, string | undefined>>, home: string = homedir()): string {
  const xdg = env.XDG_CACHE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(home, '.cache');
  return join(base, 'dsh-session-reference');
}

/** The index file of the store at `root`: named by a hash of the root's absolute path. */
export function searchCacheFile(directory: string, root: string): string {
  const key = createHash('sha256').update(resolve(root)).digest('hex').slice(0, 24);
  return join(directory, `search-${key}.index`);
}

/** The cached bytes, or `undefined` when there are none or they cannot be read (the index is then rebuilt). */
export async function readSearchCache(file: string): Promise<Uint8Array | undefined> {
  try {
    if ((await stat(file)).size > MAX_CACHE_BYTES) return undefined;
    return new Uint8Array(await readFile(file));
  } catch {
    return undefined;
  }
}

/**
 * Writes `bytes` to `file` whole or not at all (a temporary file renamed over it), creating the
 * directory. Rejects with the file system's error.
 */
export async function writeSearchCache(file: string, bytes: Uint8Array): Promise<void> {
  const directory = join(file, '..');
  await mkdir(directory, { recursive: true, mode: 0o700 });
  await chmod(directory, 0o700);
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, bytes, { mode: 0o600 });
  await rename(temporary, file);
}
