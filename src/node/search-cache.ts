/**
 * Where the CLI keeps its search index between runs (SPEC §16.4): one file per store root under
 * `$XDG_CACHE_HOME/dsh-session-reference/`, else `~/.cache/dsh-session-reference/`.
 * @module
 */
import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** The cache directory of SPEC §16.4 for `env`. */
export function searchCacheDirectory(env: Readonly<Record<string, string | undefined>>, home: string = homedir()): string {
  const base = env.XDG_CACHE_HOME ? env.XDG_CACHE_HOME : join(home, '.cache');
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
  await mkdir(join(file, '..'), { recursive: true });
  const temporary = `${file}.${process.pid}.tmp`;
  await writeFile(temporary, bytes);
  await rename(temporary, file);
}
