/**
 * The CLI's compile cache directory (issue 30 item 3): Node's compile cache is turned on only in a
 * directory of the user's alone, under the CLI's checked cache directory, never through a symlink;
 * a runtime without `module.enableCompileCache` (Node < 22.1) runs without it, and nothing throws.
 */
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { enableCliCompileCache } from '../src/node/compile-cache.js';

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A new temporary directory and the environment whose cache home is `cache` inside it. */
function setup(): { dir: string; env: Record<string, string>; parent: string; compile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'dsh-compile-cache-'));
  dirs.push(dir);
  const parent = join(dir, 'cache', 'dsh-session-reference');
  return { dir, env: { XDG_CACHE_HOME: join(dir, 'cache') }, parent, compile: join(parent, 'compile') };
}

const uid = process.geteuid!();

describe('enableCliCompileCache (issue 30 item 3)', () => {
  it('creates the cache directory and compile/ 0700 and hands compile/ to Node', () => {
    const { env, parent, compile } = setup();
    const enable = vi.fn(() => ({ status: 1, directory: compile }));
    expect(enableCliCompileCache(env, enable, uid)).toBe(compile);
    expect(enable).toHaveBeenCalledExactlyOnceWith(compile);
    for (const dir of [parent, compile]) expect(lstatSync(dir).mode & 0o777).toBe(0o700);
    // An existing, checked directory is used again.
    expect(enableCliCompileCache(env, enable, uid)).toBe(compile);
  });

  it('without module.enableCompileCache, nothing is created and nothing is enabled', () => {
    const { dir, env } = setup();
    // `null`, not `undefined`: an undefined argument takes the default, Node's own function (Node >= 22.1).
    expect(enableCliCompileCache(env, null, uid)).toBeUndefined();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('a compile/ that is a symlink, or a directory writable by others, or another uid\'s, is not used', () => {
    const cases: Array<[string, (paths: ReturnType<typeof setup>) => number]> = [
      ['compile/ a symlink', ({ dir, parent, compile }) => (mkdirSync(parent, { recursive: true, mode: 0o700 }), mkdirSync(join(dir, 'elsewhere')), symlinkSync(join(dir, 'elsewhere'), compile), uid)],
      ['cache directory writable by others', ({ parent }) => (mkdirSync(parent, { recursive: true }), chmodSync(parent, 0o777), uid)],
      ['compile/ writable by others', ({ compile }) => (mkdirSync(compile, { recursive: true, mode: 0o700 }), chmodSync(compile, 0o757), uid)],
      ['another uid', () => uid + 1],
    ];
    for (const [name, arrange] of cases) {
      const paths = setup();
      const as = arrange(paths);
      const enable = vi.fn(() => ({ status: 1 }));
      expect(enableCliCompileCache(paths.env, enable, as), name).toBeUndefined();
      expect(enable, name).not.toHaveBeenCalled();
      if (name === 'compile/ a symlink') expect(readdirSync(join(paths.dir, 'elsewhere')), name).toEqual([]);
    }
  });

  it('never throws: a cache home that is a file, or Node failing, leaves the CLI without the cache', () => {
    const { env } = setup();
    expect(enableCliCompileCache({ XDG_CACHE_HOME: '/dev/null' }, () => ({ status: 1 }), uid)).toBeUndefined();
    const failing = () => {
      throw new Error('no cache');
    };
    expect(enableCliCompileCache(env, failing, uid)).toBeUndefined();
  });
});
