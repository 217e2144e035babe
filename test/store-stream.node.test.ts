/**
 * The Node store's file handling (SPEC §12.1, §11.2.1, §11.2.2): only regular files are logs (a
 * FIFO is never opened: listing returns and the process exits), headers and titles cached by file
 * identity, and reads that stay bounded on endless input.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { createDshStoreSessionQuery } from '../src/node/index.js';
import { readSessionLog } from '../src/store/index.js';
import { concatBytes } from './fixtures/base64.js';
import { rleFrame, storedFrame } from './fixtures/zstd-build.js';
import { WAIT_HANG_GUARD_MS } from './hang-guard.js';
import { expectRejectCode } from './helpers.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function freshRoot(): string {
  const root = mkdtempSync(join(tmpdir(), 'dsh-stream-'));
  roots.push(root);
  return root;
}

function put(root: string, session: string, name: string, content: string | Uint8Array): string {
  const dir = join(root, 'project', session);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

function mkfifo(path: string): void {
  mkdirSync(dirname(path), { recursive: true });
  execFileSync('mkfifo', [path]);
}

const header = (id: string, createdAt: number) => `${JSON.stringify({ type: 'session', version: 3, id, createdAt })}\n`;
const title = (seq: number, text: string) => `${JSON.stringify({ type: 'session/title', seq, time: seq, data: { title: text } })}\n`;

describe('only regular files are logs (SPEC §12.1)', () => {
  it('a FIFO, and a symlink to one, named like logs are skipped without being opened', async () => {
    const root = freshRoot();
    put(root, 'ok', 'session.v3.jsonl', header('ok', 1) + title(0, 'Fine'));
    mkfifo(join(root, 'project', 'fifo', 'session.v3.jsonl'));
    // A FIFO that would win over a regular log (higher version) is skipped; the regular one is read.
    put(root, 'shadow', 'session.jsonl', header('shadow', 2));
    mkfifo(join(root, 'project', 'shadow', 'session.v9.jsonl'));
    mkdirSync(join(root, 'project', 'link'), { recursive: true });
    symlinkSync(join(root, 'project', 'fifo', 'session.v3.jsonl'), join(root, 'project', 'link', 'session.v3.jsonl'));
    const store = createDshStoreSessionQuery({ root });
    expect((await store.listSessions()).map((r) => r.header.id)).toEqual(['shadow', 'ok']);
    expect(await store.readTitleSnapshots(['ok'])).toEqual([{ sessionId: 'ok', status: 'fulfilled', value: { title: { title: 'Fine' } } }]);
    expect((await store.readSurface('ok')).session.id).toBe('ok');
  });

  it('a process listing a store with FIFOs prints its result and exits', async () => {
    const root = freshRoot();
    put(root, 'ok', 'session.jsonl', header('ok', 1));
    mkfifo(join(root, 'project', 'fifo', 'session.jsonl'));
    mkfifo(join(root, 'project', 'fifo2', 'session.v2.jsonl.zstd'));
    const dir = freshRoot();
    const script = join(dir, 'list.mjs');
    await build({
      stdin: {
        contents: `import { createDshStoreSessionQuery } from './src/node/index.ts';
          const store = createDshStoreSessionQuery({ root: process.argv[2] });
          const sessions = await store.listSessions();
          const titles = await store.readTitleSnapshots(sessions.map((s) => s.header.id));
          console.log(JSON.stringify([sessions.map((s) => s.header.id), titles.map((t) => t.status)]));`,
        resolveDir: ROOT,
        loader: 'ts',
      },
      bundle: true,
      platform: 'node',
      format: 'esm',
      outfile: script,
      logLevel: 'silent',
    });
    const run = spawnSync(process.execPath, [script, root], { encoding: 'utf8', timeout: WAIT_HANG_GUARD_MS });
    expect(run.error).toBeUndefined();
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual([['ok'], ['fulfilled']]);
  });

  it('a log replaced by a FIFO after the listing is not found, never opened', async () => {
    const root = freshRoot();
    const path = put(root, 'gone', 'session.jsonl', header('gone', 1));
    const store = createDshStoreSessionQuery({ root });
    expect((await store.listSessions()).map((r) => r.header.id)).toEqual(['gone']);
    rmSync(path);
    mkfifo(path);
    await expectRejectCode(store.readSurface('gone'), 'SESSION_REFERENCE_NOT_FOUND');
    expect(await store.readTitleSnapshots(['gone'])).toMatchObject([{ sessionId: 'gone', status: 'rejected', reason: { code: 'SESSION_REFERENCE_NOT_FOUND' } }]);
  });
});

describe('headers and titles cached by file identity (device, inode, size, mtime)', () => {
  it('a changed file is read again: same size and mtime put back (its ctime moved), or another size', async () => {
    const root = freshRoot();
    const when = new Date('2026-01-01T00:00:00Z');
    const path = put(root, 's', 'session.jsonl', header('cached', 1) + title(0, 'First'));
    utimesSync(path, when, when);
    const store = createDshStoreSessionQuery({ root });
    expect((await store.listSessions()).map((r) => r.header.id)).toEqual(['cached']);
    expect(await store.readTitleSnapshots(['cached'])).toMatchObject([{ value: { title: { title: 'First' } } }]);
    // Same size, same mtime, same inode: the ctime, which no user can set, tells (a second
    // listing of an unchanged store reads no file: test/node-store.node.test.ts).
    await new Promise((resolve) => setTimeout(resolve, 20));
    writeFileSync(path, header('cached', 2) + title(0, 'Other'));
    utimesSync(path, when, when);
    expect((await store.listSessions())[0]!.header.createdAt).toBe(2);
    expect(await store.readTitleSnapshots(['cached'])).toMatchObject([{ value: { title: { title: 'Other' } } }]);
    // Another size (a log grows as dsh appends): read again.
    writeFileSync(path, header('cached', 3) + title(0, 'Grown title'));
    expect((await store.listSessions())[0]!.header.createdAt).toBe(3);
    expect(await store.readTitleSnapshots(['cached'])).toMatchObject([{ value: { title: { title: 'Grown title' } } }]);
  });

  it('readSurface refreshes the title cache for the file it read', async () => {
    const root = freshRoot();
    put(root, 's', 'session.jsonl', header('t', 1) + title(0, 'A') + title(1, 'B'));
    const store = createDshStoreSessionQuery({ root });
    expect((await store.readSurface('t')).capturedThroughSeq).toBe(1);
    expect(await store.readTitleSnapshots(['t'])).toMatchObject([{ value: { title: { title: 'B' } } }]);
  });
});

describe('bounded reads of endless input (SPEC §11.2.1, §11.2.2)', () => {
  it('an endless line after the header is refused at 256 MiB, never held whole', async () => {
    const log = concatBytes(storedFrame(header('endless', 1)), rleFrame(0x61, 1 << 20));
    const error = await expectRejectCode(readSessionLog(log), 'SESSION_REFERENCE_INVALID_LOG');
    expect(error.message).toContain('line 2 is longer than 268435456 bytes');
    const root = freshRoot();
    const path = put(root, 's', 'session.jsonl.zstd', log);
    const store = createDshStoreSessionQuery({ root, maxLogBytes: 1 << 20 });
    expect((await store.listSessions()).map((r) => r.header.id)).toEqual(['endless']);
    const limited = await expectRejectCode(store.readSurface('endless'), 'SESSION_REFERENCE_INVALID_LOG');
    expect(limited.message).toContain(JSON.stringify(path));
    expect(limited.message).toContain('maxLogBytes (1048576 bytes)');
  });

  it('validates maxLogBytes and verifyChecksums as store options', () => {
    for (const options of [{ maxLogBytes: 0 }, { maxLogBytes: -1 }, { maxLogBytes: 2 ** 60 }, { verifyChecksums: 'no' }]) {
      expect(() => createDshStoreSessionQuery(options as never)).toThrow(expect.objectContaining({ code: 'SESSION_REFERENCE_INVALID_CONFIG' }));
    }
  });
});
