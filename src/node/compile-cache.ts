/**
 * Node's compile cache for the CLI (issue 30 item 3): a CLI run is mostly start-up, and most of
 * start-up is compiling JavaScript (our modules, and SQLite's ~1 MB of WebAssembly glue for
 * `search`). Where the runtime has `module.enableCompileCache` (Node >= 22.1), the code V8 compiled
 * is kept in `compile/` under the CLI's own cache directory (`search-cache.ts`:
 * `$XDG_CACHE_HOME/dsh-session-reference/`, else `~/.cache/…`), which must pass the same checks as
 * for the search index: the user's, a real directory (never a symlink), writable by nobody else,
 * created 0700. A directory that fails them, or a runtime without the function, means no compile
 * cache — never an error, never a note (the CLI runs as it would without it).
 * @module
 */
import { lstatSync, mkdirSync } from 'node:fs';
import * as nodeModule from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { directoryProblem, searchCacheDirectory } from './search-cache.js';

/** `module.enableCompileCache` as Node >= 22.1 has it (absent before). */
type EnableCompileCache = (directory?: string) => { status: number; directory?: string };

/**
 * Turns Node's compile cache on for the modules loaded from now on, in the checked directory
 * `compile/` of the CLI's cache directory for `env` (see the module doc). Call it before importing
 * the CLI's modules. Returns the directory handed to Node, or `undefined` when there is none (no
 * `enableCompileCache` in this runtime, or a directory that is not the user's alone). Never throws.
 * `enable` (default Node's own; `null` stands for a runtime without it) and `uid` (default the
 * effective uid) are for tests.
 */
export function enableCliCompileCache(
  env: Readonly<Record<string, string | undefined>>,
  enable: EnableCompileCache | null | undefined = (nodeModule as { enableCompileCache?: EnableCompileCache }).enableCompileCache,
  uid: number | undefined = process.geteuid?.(),
): string | undefined {
  if (typeof enable !== 'function') return undefined;
  try {
    const parent = searchCacheDirectory(env, env.HOME || homedir());
    const directory = join(parent, 'compile');
    mkdirSync(dirname(parent), { recursive: true, mode: 0o700 });
    // The parent is checked before its child is made: once it is the user's alone, nobody else can replace `compile/`.
    for (const dir of [parent, directory]) {
      makeDirectory(dir);
      if (directoryProblem(lstatSync(dir), uid) !== undefined) return undefined;
    }
    enable(directory);
    return directory;
  } catch {
    return undefined;
  }
}

/** Creates `dir` 0700 unless it exists (whatever is there is checked next). */
function makeDirectory(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
}
