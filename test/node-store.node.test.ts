/** dsh's on-disk store as a SessionQuery (SPEC §12.1), over temp directories and the sample store. */
import { appendFileSync, closeSync, fstatSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, truncateSync, utimesSync, writeFileSync, writeSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { createSessionReferences, type SessionEvent, type SessionHeader } from '../src/index.js';
import { createDshStoreSessionQuery, defaultSessionStoreRoot, sampleStoreRoot } from '../src/node/index.js';
import { openDshStore } from '../src/node/store.js';
import { concatBytes } from './fixtures/base64.js';
import { rawZstdFrame } from './fixtures/object-store.js';
import { SessionReferenceError } from '../src/errors.js';
import { eventually, expectCode, expectRejectCode } from './helpers.js';
import { withFs, type FsCall } from './fixtures/node-fs.js';
import { CJK, COMPACTED, ENVELOPED, LARGE, REAL, TARGET, VERSIONS } from './sample-ids.js';

const TMP = mkdtempSync(join(tmpdir(), 'dsh-store-test-'));
afterAll(() => rmSync(TMP, { recursive: true, force: true }));
afterEach(() => {
  vi.unstubAllEnvs();
});

let counter = 0;
/** A fresh empty root directory. */
function freshRoot(): string {
  const root = join(TMP, `root-${++counter}`);
  mkdirSync(root, { recursive: true });
  return root;
}

function header(id: string, createdAt: number, extra: Record<string, unknown> = {}): SessionHeader {
  return { type: 'session', version: 3, id, createdAt, ...extra } as SessionHeader;
}

function userEvent(seq: number, text: string): SessionEvent {
  return {
    type: 'user/message',
    seq,
    time: 1_800_000_000_000 + seq,
    data: { content: [{ type: 'text', text }], source: { kind: 'user' }, role: 'user', id: `u${seq}` },
    surfaceOp: 'append',
  };
}

function titleEvent(seq: number, title: string): SessionEvent {
  return { type: 'session/title', seq, time: 1_800_000_000_000 + seq, data: { title, messageSeqs: [], source: { kind: 'model' } } };
}

function jsonl(h: SessionHeader, events: SessionEvent[] = []): string {
  return [h, ...events].map((row) => JSON.stringify(row) + '\n').join('');
}

/** Writes `<root>/<project>/<session>/<name>` and returns its path. */
function put(root: string, project: string, session: string, name: string, content: string | Uint8Array): string {
  const dir = join(root, project, session);
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** A multi-frame zstd log: one frame for the header line, one per batch of events (as dsh writes). */
function zstdLog(h: SessionHeader, batches: SessionEvent[][]): Uint8Array {
  const frames = [rawZstdFrame(JSON.stringify(h) + '\n'), ...batches.map((batch) => rawZstdFrame(batch.map((e) => JSON.stringify(e) + '\n').join('')))];
  return concatBytes(...frames);
}

/**
 * A slow disk under `root`, as a {@link withFs} replacement of `read`: while `holding`, each read
 * of a file that was under `root` when this was made waits in `held` until the test releases it;
 * reads of any other file (the test runner's own) go through. `mostInFlight` counts the reads of
 * those files started and not yet answered, held or released, at the most. The files are told by
 * device and inode, so a descriptor number reused by another file is never mistaken for them.
 */
function slowDisk(root: string) {
  const identity = (stats: { dev: number; ino: number }) => `${stats.dev}:${stats.ino}`;
  const files = new Set(
    (readdirSync(root, { recursive: true }) as string[])
      .map((name) => statSync(join(root, name)))
      .filter((stats) => stats.isFile())
      .map(identity),
  );
  const isOurs = (fd: unknown) => {
    try {
      return files.has(identity(fstatSync(fd as number)));
    } catch {
      return false;
    }
  };
  let inFlight = 0;
  const disk = {
    holding: true,
    held: [] as Array<() => void>,
    mostInFlight: 0,
    read: (original: FsCall) => (...args: unknown[]) => {
      if (!isOurs(args[0])) return original(...args);
      disk.mostInFlight = Math.max(disk.mostInFlight, ++inFlight);
      const done = args.at(-1) as (...results: unknown[]) => void;
      const go = () =>
        original(...args.slice(0, -1), (...results: unknown[]) => {
          inFlight--;
          done(...results);
        });
      if (!disk.holding) return go();
      disk.held.push(go);
      return undefined;
    },
    /** Lets the held read at `index` go to the disk. */
    release(index: number) {
      disk.held.splice(index, 1)[0]!();
    },
    releaseAll() {
      for (const go of disk.held.splice(0)) go();
    },
  };
  return disk;
}

/** {@link withFs} recording the arguments (callback left out) of each call into `calls`. */
function recordingInto(calls: unknown[][]): (original: FsCall) => FsCall {
  return (original) =>
    (...args) => {
      calls.push(args.slice(0, -1));
      return original(...args);
    };
}

/** The title `readTitleSnapshots` gives for one session, or its row's reason when the read failed. */
async function titleOf(store: ReturnType<typeof createDshStoreSessionQuery>, sessionId: string): Promise<unknown> {
  const [row] = await store.readTitleSnapshots([sessionId]);
  return row?.status === 'fulfilled' ? row.value.title?.title : row?.reason;
}

const ids = async (root: string) => (await createDshStoreSessionQuery({ root }).listSessions()).map((r) => r.header.id);

describe('createDshStoreSessionQuery: layout and listing (SPEC §12.1)', () => {
  it('lists 100 sessions, plain and zstd, headers within the first read and past it, each with its own header (first-read buffers shared by no two reads)', async () => {
    const root = freshRoot();
    const expected: SessionHeader[] = [];
    for (let i = 0; i < 100; i++) {
      // Every seventh header is longer than the first read (4 KiB): its line spans reads.
      const h = header(`many-${i}`, 10_000 - i, { cwd: `/w/${i}`, ...(i % 7 === 0 ? { note: `${i}:`.repeat(1500) } : {}) });
      expected.push(h);
      const events = [[userEvent(0, `hi ${i}`)], [titleEvent(1, `t${i}`)]];
      if (i % 2 === 0) put(root, `proj-${i % 3}`, `s-${i}`, 'session.v3.jsonl', jsonl(h, events.flat()));
      else put(root, `proj-${i % 3}`, `s-${i}`, 'session.v3.jsonl.zstd', zstdLog(h, events));
    }
    const store = createDshStoreSessionQuery({ root });
    expect((await store.listSessions()).map((r) => r.header)).toEqual(expected);
    const titles = await store.readTitleSnapshots(expected.map((h) => h.id));
    expect(titles.map((row) => (row.status === 'fulfilled' ? row.value.title?.title : row.reason))).toEqual(expected.map((_, i) => `t${i}`));
  });

  it('finds <root>/<project>/<session>/<log> in every naming, newest first, ids from headers', async () => {
    const root = freshRoot();
    put(root, 'proj-a', 'folder-1', 'session.v3.jsonl', jsonl(header('plain-v3', 3000, { cwd: '/a' })));
    put(root, 'proj-a', 'folder-2', 'session.jsonl', jsonl(header('old-name', 1000)));
    put(root, 'proj-b', 'folder-3', 'session.v3.jsonl.zstd', zstdLog(header('zstd-v3', 2000, { cwd: '/b' }), [[userEvent(0, 'hi')]]));
    put(root, 'proj-b', 'folder-4', 'session.jsonl.zstd', zstdLog(header('zstd-old', 2000), []));
    // Not logs: ignored.
    put(root, 'proj-b', 'folder-5', 'notes.txt', 'hello');
    put(root, 'proj-b', 'folder-5', 'session.v3.json', jsonl(header('wrong-ext', 1)));
    writeFileSync(join(root, 'proj-b', 'stray-file.jsonl'), jsonl(header('stray', 1)));
    writeFileSync(join(root, 'README'), 'not a project');
    const records = await createDshStoreSessionQuery({ root }).listSessions();
    // createdAt descending, ties by id ascending (code units).
    expect(records.map((r) => r.header.id)).toEqual(['plain-v3', 'zstd-old', 'zstd-v3', 'old-name']);
    expect(records[0]!.header).toMatchObject({ type: 'session', version: 3, id: 'plain-v3', createdAt: 3000, cwd: '/a' });
  });

  it('a missing root lists no sessions; a root that is a file is READ_FAILED with its path', async () => {
    expect(await ids(join(TMP, 'does', 'not', 'exist'))).toEqual([]);
    const file = join(freshRoot(), 'file');
    writeFileSync(file, 'x');
    const error = await expectRejectCode(createDshStoreSessionQuery({ root: file }).listSessions(), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.message).toContain(JSON.stringify(file));
  });

  it('lists from headers only: a log whose tail is garbage lists fine, and fails only when read whole', async () => {
    const root = freshRoot();
    const plain = put(root, 'p', 's1', 'session.v3.jsonl', jsonl(header('garbage-tail', 2, { cwd: '/x' })) + 'this is not JSON\n'.repeat(1000) + '\u0000\u0001');
    const zstd = put(
      root,
      'p',
      's2',
      'session.v3.jsonl.zstd',
      concatBytes(rawZstdFrame(JSON.stringify(header('garbage-frames', 1)) + '\n'), new Uint8Array(50_000).fill(0xab)),
    );
    const store = createDshStoreSessionQuery({ root });
    expect((await store.listSessions()).map((r) => r.header.id)).toEqual(['garbage-tail', 'garbage-frames']);
    const e1 = await expectRejectCode(store.readSurface('garbage-tail'), 'SESSION_REFERENCE_INVALID_LOG');
    expect(e1.message).toContain(JSON.stringify(plain));
    expect(e1.message).toContain('line 2');
    const e2 = await expectRejectCode(store.readSurface('garbage-frames'), 'SESSION_REFERENCE_INVALID_LOG');
    expect(e2.message).toContain(JSON.stringify(zstd));
    // Titles of unreadable logs are rejected rows, not a failed call.
    const rows = await store.readTitleSnapshots(['garbage-tail']);
    expect(rows).toEqual([{ sessionId: 'garbage-tail', status: 'rejected', reason: expect.objectContaining({ code: 'SESSION_REFERENCE_INVALID_LOG' }) }]);
  });

  it('lists 3 GiB logs (sparse files) by their headers; reading them whole fails with the path, bounded (SPEC §11.2.2)', async () => {
    // Node cannot read a file over 2 GiB into one buffer: a listing that read whole logs would fail.
    const root = freshRoot();
    const plain = put(root, 'p', 'huge-plain', 'session.v3.jsonl', jsonl(header('huge-plain', 2)));
    const zstd = put(root, 'p', 'huge-zstd', 'session.v3.jsonl.zstd', rawZstdFrame(JSON.stringify(header('huge-zstd', 1)) + '\n'));
    truncateSync(plain, 3 * 1024 ** 3);
    truncateSync(zstd, 3 * 1024 ** 3);
    const store = createDshStoreSessionQuery({ root });
    expect((await store.listSessions()).map((r) => r.header.id)).toEqual(['huge-plain', 'huge-zstd']);
    // Streamed, not read into one buffer: the zeros after the header are one endless line, refused
    // once it passes the longest line a string can hold, or the maxLogBytes limit.
    const error = await expectRejectCode(store.readSurface('huge-plain'), 'SESSION_REFERENCE_INVALID_LOG');
    expect(error.message).toContain(JSON.stringify(plain));
    const limited = createDshStoreSessionQuery({ root, maxLogBytes: 1 << 20 });
    const limit = await expectRejectCode(limited.readSurface('huge-plain'), 'SESSION_REFERENCE_INVALID_LOG');
    expect(limit.message).toContain(JSON.stringify(plain));
    expect(limit.message).toContain('maxLogBytes (1048576 bytes)');
  });

  it('lists a log past maxLogBytes by its header and fails its whole read, naming the limit (SPEC §11.2.1)', async () => {
    const root = freshRoot();
    put(root, 'p', 'limited', 'session.v3.jsonl', jsonl(header('limited', 2), [userEvent(1, 'x'.repeat(10_000))]));
    for (const maxLogBytes of [1, 300, 4095]) {
      const limited = createDshStoreSessionQuery({ root, maxLogBytes });
      expect((await limited.listSessions()).map((r) => r.header.id)).toEqual(['limited']);
      const error = await expectRejectCode(limited.readSurface('limited'), 'SESSION_REFERENCE_INVALID_LOG');
      expect(error.message).toContain(`maxLogBytes (${maxLogBytes} bytes)`);
    }
  });

  it('lists a sparse 8 GiB log behind two 4 GiB skippable frames, skipping them unread (SPEC §11.2.1.1)', async () => {
    // A header read counts skippable content it receives against its 1 MiB: had the store read
    // through the skippable frames instead of skipping them, this listing would fail.
    const root = freshRoot();
    const path = put(root, 'p', 'sparse', 'session.v3.jsonl.zstd', '');
    const skip = (at: number) => {
      const head = Buffer.from([0x5e, 0x2a, 0x4d, 0x18, 0xff, 0xff, 0xff, 0xff]);
      writeSync(fd, head, 0, 8, at);
      return at + 8 + 0xffffffff;
    };
    const fd = openSync(path, 'r+');
    try {
      const at = skip(skip(0));
      writeSync(fd, rawZstdFrame(JSON.stringify(header('sparse', 1)) + '\n'), 0, undefined, at);
    } finally {
      closeSync(fd);
    }
    put(root, 'p', 'ok', 'session.v3.jsonl', jsonl(header('ok', 2)));
    expect(await ids(root)).toEqual(['ok', 'sparse']);
    // A skippable frame declaring more than the file holds: a truncated frame, not listed yet.
    put(root, 'p', 'sparse', 'session.v3.jsonl.zstd', Buffer.from([0x50, 0x2a, 0x4d, 0x18, 0xff, 0xff, 0xff, 0xff, 0x28, 0xb5]));
    expect(await ids(root)).toEqual(['ok']);
  });

  it('skips logs without a complete header yet (empty, torn first line, truncated first frame)', async () => {
    const root = freshRoot();
    put(root, 'p', 'empty', 'session.v3.jsonl', '');
    put(root, 'p', 'torn', 'session.v3.jsonl', '{"type":"session","version":3,"id":"torn","crea');
    const frame = rawZstdFrame(JSON.stringify(header('cut', 1)) + '\n');
    put(root, 'p', 'cut', 'session.v3.jsonl.zstd', frame.subarray(0, frame.length - 5));
    put(root, 'p', 'no-newline', 'session.v3.jsonl', JSON.stringify(header('complete-without-newline', 1)));
    put(root, 'p', 'ok', 'session.v3.jsonl', jsonl(header('ok', 1)));
    expect(await ids(root)).toEqual(['complete-without-newline', 'ok']);
  });

  it('fails the listing with INVALID_LOG and the path for a complete but invalid header', async () => {
    const root = freshRoot();
    put(root, 'p', 'ok', 'session.v3.jsonl', jsonl(header('ok', 1)));
    const bad = put(root, 'p', 'bad', 'session.v3.jsonl', '{"type":"not-a-session"}\n');
    const error = await expectRejectCode(createDshStoreSessionQuery({ root }).listSessions(), 'SESSION_REFERENCE_INVALID_LOG');
    expect(error.message).toContain(JSON.stringify(bad));
    const corrupt = freshRoot();
    const path = put(corrupt, 'p', 'z', 'session.v3.jsonl.zstd', Uint8Array.from([0x28, 0xb5, 0x2f, 0xfd, 0x08, 0, 0, 0, 0]));
    const e2 = await expectRejectCode(createDshStoreSessionQuery({ root: corrupt }).listSessions(), 'SESSION_REFERENCE_INVALID_LOG');
    expect(e2.message).toContain(JSON.stringify(path));
  });

  it('highest N wins; session.jsonl ranks lowest; plain .jsonl wins a tie with its .zstd', async () => {
    const root = freshRoot();
    const dir = 'many-versions';
    put(root, 'p', dir, 'session.jsonl', jsonl(header('s', 1), [titleEvent(0, 'unversioned')]));
    put(root, 'p', dir, 'session.v2.jsonl', jsonl(header('s', 1), [titleEvent(0, 'v2')]));
    put(root, 'p', dir, 'session.v10.jsonl.zstd', zstdLog(header('s', 1, { version: 10 }), [[titleEvent(0, 'v10 zstd')]]));
    put(root, 'p', dir, 'session.v9.jsonl', jsonl(header('s', 1), [titleEvent(0, 'v9')]));
    const store = createDshStoreSessionQuery({ root });
    expect(await store.listSessions()).toEqual([{ header: expect.objectContaining({ id: 's', version: 10 }), identity: expect.any(String) }]);
    expect(await store.readTitleSnapshots(['s'])).toEqual([{ sessionId: 's', status: 'fulfilled', value: { title: { title: 'v10 zstd' } } }]);

    put(root, 'p', dir, 'session.v10.jsonl', jsonl(header('s', 1), [titleEvent(0, 'v10 plain')]));
    expect(await store.readTitleSnapshots(['s'])).toEqual([{ sessionId: 's', status: 'fulfilled', value: { title: { title: 'v10 plain' } } }]);
  });

  it('uses the header id, never the folder name; duplicate ids resolve to the first log path', async () => {
    const root = freshRoot();
    put(root, 'p', 'session-folder-name', 'session.v3.jsonl', jsonl(header('会话-🚀', 5), [titleEvent(0, 'from a')]));
    put(root, 'q', 'copy-of-it', 'session.v3.jsonl', jsonl(header('会话-🚀', 5), [titleEvent(0, 'from q')]));
    const store = createDshStoreSessionQuery({ root });
    expect((await store.listSessions()).map((r) => r.header.id)).toEqual(['会话-🚀']);
    await expectRejectCode(store.readSurface('session-folder-name'), 'SESSION_REFERENCE_NOT_FOUND');
    expect(await store.readTitleSnapshots(['会话-🚀'])).toEqual([{ sessionId: '会话-🚀', status: 'fulfilled', value: { title: { title: 'from a' } } }]);
  });

  it.each([
    // Directory `a` sorts before `a-b`, but its log path `…/a/session…` after `…/a-b/session…` ('/' > '-').
    [['a', 'a-b'], 'a-b'],
    [['a-b', 'b'], 'a-b'],
    [['x', 'x.y', 'x-y'], 'x-y'],
  ])('of session directories %j with one id, the log whose path sorts first (code units) wins: %s', async (dirs, winner) => {
    const root = freshRoot();
    for (const dir of dirs) put(root, 'p', dir, 'session.v3.jsonl', jsonl(header('dup', 5), [titleEvent(0, `from ${dir}`)]));
    const store = createDshStoreSessionQuery({ root });
    expect((await store.listSessions()).map((r) => r.header.id)).toEqual(['dup']);
    expect(await titleOf(store, 'dup')).toBe(`from ${winner}`);
  });
});

describe('createDshStoreSessionQuery: reading (SPEC §12.1, §4.2)', () => {
  it('readSurface folds the whole log; capturedThroughSeq is the last event seq', async () => {
    const root = freshRoot();
    const events: SessionEvent[] = [
      userEvent(0, 'first'),
      userEvent(1, 'second'),
      { type: 'step/start', seq: 2, time: 0, data: {} },
      { ...userEvent(3, 'checkpoint'), data: { content: [{ type: 'text', text: 'summary' }], source: { kind: 'plugin', plugin: 'compact' }, role: 'user', id: 'c' }, surfaceOp: { op: 'replace', start: 0, end: 1 } },
      titleEvent(4, 'Title'),
      { type: 'step/end', seq: 5, time: 0, data: {} },
    ];
    put(root, 'p', 's', 'session.v3.jsonl.zstd', zstdLog(header('s', 1, { cwd: '/w' }), [events.slice(0, 2), events.slice(2)]));
    const surface = await createDshStoreSessionQuery({ root }).readSurface('s');
    expect(surface.session).toMatchObject({ id: 's', cwd: '/w' });
    expect(surface.capturedThroughSeq).toBe(5);
    expect(surface.events.map((e) => e.seq)).toEqual([3]);
  });

  it('a log with a header only: capturedThroughSeq null, no title', async () => {
    const root = freshRoot();
    put(root, 'p', 's', 'session.v3.jsonl', jsonl(header('empty-log', 1)));
    const store = createDshStoreSessionQuery({ root });
    expect(await store.readSurface('empty-log')).toEqual({ session: header('empty-log', 1), capturedThroughSeq: null, events: [] });
    expect(await store.readTitleSnapshots(['empty-log'])).toEqual([{ sessionId: 'empty-log', status: 'fulfilled', value: {} }]);
  });

  it('unknown ids: readSurface rejects NOT_FOUND, title rows are rejected NOT_FOUND', async () => {
    const root = freshRoot();
    put(root, 'p', 's', 'session.v3.jsonl', jsonl(header('known', 1), [titleEvent(0, 'T')]));
    const store = createDshStoreSessionQuery({ root });
    const error = await expectRejectCode(store.readSurface('nope'), 'SESSION_REFERENCE_NOT_FOUND');
    expect(error.message).toContain('"nope"');
    const rows = await store.readTitleSnapshots(['nope', 'known']);
    expect(rows[0]).toMatchObject({ sessionId: 'nope', status: 'rejected', reason: { code: 'SESSION_REFERENCE_NOT_FOUND' } });
    expect(rows[1]).toEqual({ sessionId: 'known', status: 'fulfilled', value: { title: { title: 'T' } } });
    await expectRejectCode(store.readSurface(42 as unknown as string), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });

  it('sees sessions created, upgraded or removed after the last scan', async () => {
    const root = freshRoot();
    put(root, 'p', 'a', 'session.v3.jsonl', jsonl(header('a', 1)));
    const store = createDshStoreSessionQuery({ root });
    expect((await store.listSessions()).length).toBe(1);
    put(root, 'p', 'b', 'session.v3.jsonl', jsonl(header('b', 2), [userEvent(0, 'new')]));
    expect((await store.readSurface('b')).capturedThroughSeq).toBe(0);
    put(root, 'p', 'a', 'session.v4.jsonl', jsonl(header('a', 1, { version: 4 }), [userEvent(7, 'upgraded')]));
    expect((await store.readSurface('a')).capturedThroughSeq).toBe(7);
    rmSync(join(root, 'p', 'b'), { recursive: true });
    await expectRejectCode(store.readSurface('b'), 'SESSION_REFERENCE_NOT_FOUND');
  });

  it('a second title read of an unchanged store lists no directory and stats only the log on the thread pool; a log added since is chosen (SPEC §12.1)', async () => {
    const root = freshRoot();
    put(root, 'p', 'a', 'session.v3.jsonl', jsonl(header('a', 1), [titleEvent(0, 'v3 title')]));
    const anHourAgo = Date.now() / 1000 - 3600;
    utimesSync(join(root, 'p', 'a'), anHourAgo, anHourAgo); // settled: its listing may be cached
    const store = createDshStoreSessionQuery({ root });
    await store.listSessions();
    const title = () => titleOf(store, 'a');
    expect(await title()).toBe('v3 title');
    const listed: unknown[][] = [];
    const stated: unknown[][] = [];
    await withFs('readdir', recordingInto(listed), () => withFs('stat', recordingInto(stated), async () => {
      expect(await title()).toBe('v3 title');
      // The directory's own stat is synchronous, after the log's has walked through it.
      expect(stated).toEqual([[join(root, 'p', 'a', 'session.v3.jsonl')]]);
    }));
    await withFs('readdir', recordingInto(listed), async () => {
      expect(await title()).toBe('v3 title');
      expect(listed).toEqual([]);
      put(root, 'p', 'a', 'session.v4.jsonl', jsonl(header('a', 1, { version: 4 }), [titleEvent(0, 'v4 title')]));
      expect(await title()).toBe('v4 title');
      expect(listed).toEqual([[join(root, 'p', 'a'), { withFileTypes: true }]]);
    });
  });

  describe('cache checks of many sessions at once (a warm listing, a second title read)', () => {
    /** 20 settled sessions with a title each (their listings may be cached). */
    function titledStore(): string {
      const root = freshRoot();
      const anHourAgo = Date.now() / 1000 - 3600;
      for (let i = 0; i < 20; i++) {
        put(root, 'p', `s${i}`, 'session.v3.jsonl', jsonl(header(`s${i}`, i), [titleEvent(0, `title ${i}`)]));
        utimesSync(join(root, 'p', `s${i}`), anHourAgo, anHourAgo);
      }
      return root;
    }

    /** What a store answers: its listing, and each title row (a failure as its code). */
    async function answers(store: ReturnType<typeof createDshStoreSessionQuery>, sessionIds: string[]) {
      const listed = (await store.listSessions()).map((row) => [row.header.id, row.header.version, row.identity]);
      const rows = await store.readTitleSnapshots(sessionIds);
      return { listed, titles: rows.map((row) => (row.status === 'fulfilled' ? row.value.title?.title : (row.reason as SessionReferenceError).code)) };
    }

    it('answer an unchanged store with one stat per log on the thread pool, 16 in flight at most, and no listing or open of a session', async () => {
      const root = titledStore();
      const store = createDshStoreSessionQuery({ root });
      const sessionIds = (await store.listSessions()).map((row) => row.header.id);
      const before = await answers(store, sessionIds);
      const calls: Record<'stat' | 'readdir' | 'open', unknown[][]> = { stat: [], readdir: [], open: [] };
      let inFlight = 0;
      let mostInFlight = 0;
      const countingStats = (original: FsCall): FsCall => (...args) => {
        calls.stat.push(args.slice(0, -1));
        mostInFlight = Math.max(mostInFlight, ++inFlight);
        const done = args.at(-1) as (...results: unknown[]) => void;
        return original(...args.slice(0, -1), (...results: unknown[]) => (inFlight--, done(...results)));
      };
      const after = await withFs('stat', countingStats, () => withFs('readdir', recordingInto(calls.readdir), () => withFs('open', recordingInto(calls.open), () => answers(store, sessionIds))));
      expect(after).toEqual(before);
      const logs = sessionIds.map((id) => [join(root, 'p', id, 'session.v3.jsonl')]);
      // The listing's stats, then the title read's: each log once, its directory synchronously.
      expect(calls.stat.slice(0, 20).sort()).toEqual([...logs].sort());
      expect(calls.stat.slice(20)).toEqual(logs);
      expect(mostInFlight).toBe(16);
      expect(calls.readdir).toEqual([[root, { withFileTypes: true }], [join(root, 'p'), { withFileTypes: true }]]);
      expect(calls.open).toEqual([]);
    });

    it.each([false, true])('answer as a fresh store does after logs changed, moved, vanished or were added (statSync %s)', async (statSync) => {
      const root = titledStore();
      const store = openDshStore({ root }, { statSync }).query;
      const sessionIds = [...Array.from({ length: 20 }, (_, i) => `s${i}`), 'unknown'];
      await answers(store, sessionIds);
      const dir = (i: number) => join(root, 'p', `s${i}`);
      // A log changed in place (its directory unchanged): the new title.
      appendFileSync(join(dir(1), 'session.v3.jsonl'), JSON.stringify(titleEvent(1, 'appended title')) + '\n');
      // A higher version added (the directory changed): it is chosen.
      put(root, 'p', 's2', 'session.v4.jsonl', jsonl(header('s2', 2, { version: 4 }), [titleEvent(0, 'v4 title')]));
      // The log removed: not listed, its title row NOT_FOUND.
      rmSync(join(dir(3), 'session.v3.jsonl'));
      // Another file in the directory (it changed, its choice did not): the title as before.
      put(root, 'p', 's4', 'notes.txt', 'not a log');
      // The log replaced by another file of the same name (another inode).
      put(root, 'p', 's5', 'session.next', jsonl(header('s5', 5), [titleEvent(0, 'replaced title')]));
      renameSync(join(dir(5), 'session.next'), join(dir(5), 'session.v3.jsonl'));
      // The log replaced by another session's: s6 is gone, s6b found.
      writeFileSync(join(dir(6), 'session.v3.jsonl'), jsonl(header('s6b', 6), [titleEvent(0, 'other session')]));
      // The session directory moved to another project.
      mkdirSync(join(root, 'q'));
      renameSync(dir(7), join(root, 'q', 's7'));
      // The session directory removed.
      rmSync(dir(8), { recursive: true });
      const expected = await answers(createDshStoreSessionQuery({ root }), [...sessionIds, 's6b']);
      expect(expected.titles.slice(1, 9)).toEqual(['appended title', 'v4 title', 'SESSION_REFERENCE_NOT_FOUND', 'title 4', 'replaced title', 'SESSION_REFERENCE_NOT_FOUND', 'title 7', 'SESSION_REFERENCE_NOT_FOUND']);
      expect(await answers(store, [...sessionIds, 's6b'])).toEqual(expected);
      // And again, from the caches the last reads filled.
      expect(await answers(store, [...sessionIds, 's6b'])).toEqual(expected);
    });

    it('a title read whose cache checks are in flight rejects with SESSION_REFERENCE_CANCELLED when its signal aborts, starting no other stat (SPEC §10.2)', async () => {
      const root = titledStore();
      const store = createDshStoreSessionQuery({ root });
      const sessionIds = (await store.listSessions()).map((row) => row.header.id);
      await store.readTitleSnapshots(sessionIds);
      const held: Array<() => void> = [];
      const holdingStats = (original: FsCall): FsCall => (...args) => {
        const done = args.at(-1) as (...results: unknown[]) => void;
        return original(...args.slice(0, -1), (...results: unknown[]) => held.push(() => done(...results)));
      };
      const controller = new AbortController();
      await withFs('stat', holdingStats, async () => {
        const titles = store.readTitleSnapshots(sessionIds, controller.signal);
        await eventually(() => expect(held).toHaveLength(16));
        controller.abort(new Error('stop'));
        for (const release of held.splice(0)) release();
        await expectRejectCode(titles, 'SESSION_REFERENCE_CANCELLED');
        expect(held).toEqual([]);
      });
    });
  });

  it('a log added or removed within the mtime tick of the last listing is seen (a recently changed directory is listed again)', async () => {
    const root = freshRoot();
    const dir = join(root, 'p', 'a');
    put(root, 'p', 'a', 'session.v3.jsonl', jsonl(header('a', 1), [titleEvent(0, 'v3 title')]));
    // A coarse mtime clock: every change below leaves the directory's mtime (and size) as they were.
    const tick = Date.now() / 1000;
    utimesSync(dir, tick, tick);
    const store = createDshStoreSessionQuery({ root });
    await store.listSessions();
    const title = () => titleOf(store, 'a');
    expect(await title()).toBe('v3 title');
    put(root, 'p', 'a', 'session.v4.jsonl', jsonl(header('a', 1, { version: 4 }), [titleEvent(0, 'v4 title')]));
    utimesSync(dir, tick, tick);
    expect(await title()).toBe('v4 title');
    expect((await store.readSurface('a')).capturedThroughSeq).toBe(0);
    rmSync(join(dir, 'session.v4.jsonl'));
    utimesSync(dir, tick, tick);
    expect(await title()).toBe('v3 title');
  });

  it('a log rewritten in place with its size and mtime put back, or a log added with the directory mtime put back, is seen: the ctime is in the identity (stop-37 probe)', async () => {
    const root = freshRoot();
    const dir = join(root, 'p', 'a');
    const log = put(root, 'p', 'a', 'session.v3.jsonl', jsonl(header('a', 1), [titleEvent(0, 'first title')]));
    const anHourAgo = Date.now() / 1000 - 3600;
    utimesSync(log, anHourAgo, anHourAgo);
    utimesSync(dir, anHourAgo, anHourAgo);
    const store = createDshStoreSessionQuery({ root });
    const [before] = await store.listSessions();
    expect(await titleOf(store, 'a')).toBe('first title');
    await new Promise((resolve) => setTimeout(resolve, 20)); // a ctime later than the first
    writeFileSync(log, jsonl(header('a', 1), [titleEvent(0, 'other title')]));
    utimesSync(log, anHourAgo, anHourAgo);
    const [after] = await store.listSessions();
    expect(after!.identity).not.toBe(before!.identity);
    expect(await titleOf(store, 'a')).toBe('other title');
    put(root, 'p', 'a', 'session.v4.jsonl', jsonl(header('a', 1, { version: 4 }), [titleEvent(0, 'v4 title')]));
    utimesSync(dir, anHourAgo, anHourAgo);
    expect(await titleOf(store, 'a')).toBe('v4 title');
  });

  it('holds whole reads to 4 in flight, in whatever order they end (cache checks run 16 at a time)', async () => {
    const root = freshRoot();
    const count = 24;
    for (let i = 0; i < count; i++) put(root, 'p', `s${i}`, 'session.v3.jsonl', jsonl(header(`s${i}`, i), [titleEvent(0, `title ${i}`)]));
    const store = createDshStoreSessionQuery({ root });
    const sessionIds = (await store.listSessions()).map((row) => row.header.id);
    const disk = slowDisk(root);
    const rows = await withFs('read', disk.read, async () => {
      const titles = store.readTitleSnapshots(sessionIds);
      // Each title read of these small logs is one read. Whenever reads are left, 4 are in flight
      // (held here); one ends (not the oldest: they end out of order), and the next one starts.
      for (let left = count; left > 0; left--) {
        await eventually(() => expect(disk.held.length).toBeGreaterThanOrEqual(Math.min(4, left)));
        expect(disk.held).toHaveLength(Math.min(4, left));
        disk.release((left * 7) % disk.held.length);
      }
      return titles;
    });
    expect(rows.every((row) => row.status === 'fulfilled' && row.value.title?.title.startsWith('title '))).toBe(true);
    expect(disk.mostInFlight).toBe(4);
  });

  it('a read waiting for a slot rejects at once when its signal aborts, and leaves no slot taken (SPEC §10.2)', async () => {
    const root = freshRoot();
    for (let i = 0; i < 6; i++) put(root, 'p', `s${i}`, 'session.v3.jsonl', jsonl(header(`s${i}`, i), [titleEvent(0, `title ${i}`)]));
    put(root, 'p', 'bad', 'session.v3.jsonl', jsonl(header('bad', 9)) + 'not json\n');
    const store = createDshStoreSessionQuery({ root });
    await store.listSessions();
    const disk = slowDisk(root);
    await withFs('read', disk.read, async () => {
      // One failing read and three good ones take the 4 slots.
      const failing = store.readSurface('bad').catch((error: unknown) => error);
      const busy = Promise.all(['s0', 's1', 's2'].map((id) => store.readSurface(id)));
      await eventually(() => expect(disk.held.length).toBeGreaterThanOrEqual(4));
      const controller = new AbortController();
      const waiting = store.readSurface('s3', controller.signal);
      const waitingResult = waiting.catch((error: unknown) => error);
      await new Promise((resolve) => setTimeout(resolve, 20));
      expect(disk.held).toHaveLength(4); // s3 waits for a slot
      controller.abort(new Error('stop'));
      const cancelled = (await waitingResult) as SessionReferenceError;
      expect(cancelled).toBeInstanceOf(SessionReferenceError);
      expect(cancelled.code).toBe('SESSION_REFERENCE_CANCELLED');
      expect(disk.held).toHaveLength(4); // still held: the rejection did not wait for a slot
      disk.holding = false;
      disk.releaseAll();
      expect(((await failing) as SessionReferenceError).code).toBe('SESSION_REFERENCE_INVALID_LOG');
      expect((await busy).map((surface) => surface.capturedThroughSeq)).toEqual([0, 0, 0]);
      // Every slot is free again: 4 reads held at once, none left waiting behind a lost slot.
      disk.holding = true;
      const again = Promise.all(['s2', 's3', 's4', 's5'].map((id) => store.readSurface(id)));
      await eventually(() => expect(disk.held.length).toBeGreaterThanOrEqual(4));
      disk.holding = false;
      disk.releaseAll();
      expect(await again).toHaveLength(4);
    });
    expect(disk.mostInFlight).toBe(4);
  });

  /** A plain log of exactly `size` bytes: a header, a title, and user messages (the last padded). */
  function logOfSize(id: string, size: number): { text: string; messages: number } {
    const head = jsonl(header(id, 1), [titleEvent(0, 'sized')]);
    const lines: string[] = [];
    let length = head.length;
    const line = (seq: number, pad: number) => JSON.stringify(userEvent(seq, 'm'.repeat(pad))) + '\n';
    for (let seq = 1; length + 2 * line(seq, 0).length + 50_000 < size; seq++) {
      lines.push(line(seq, 50_000));
      length += lines.at(-1)!.length;
    }
    const last = lines.length + 1;
    lines.push(line(last, size - length - line(last, 0).length));
    const text = head + lines.join('');
    expect(text.length).toBe(size);
    return { text, messages: lines.length };
  }

  it.each([4095, 4096, 4097, 1024 * 1024 - 1, 1024 * 1024, 1024 * 1024 + 1, 2 * 1024 * 1024])(
    'reads a log of %i bytes whole, at and around the read sizes',
    async (size) => {
      const root = freshRoot();
      const log = logOfSize('a', size);
      put(root, 'p', 'a', 'session.v3.jsonl', log.text);
      const store = createDshStoreSessionQuery({ root });
      await store.listSessions();
      const surface = await store.readSurface('a');
      expect(surface.events.length).toBe(log.messages);
      expect(surface.capturedThroughSeq).toBe(log.messages);
      const [row] = await store.readTitleSnapshots(['a']);
      expect(row).toEqual({ sessionId: 'a', status: 'fulfilled', value: { title: { title: 'sized' } } });
    },
  );

  it('a log truncated between open and the first read is a short read; one grown is read as it was at open (SPEC §11.2.4)', async () => {
    const root = freshRoot();
    const full = jsonl(header('a', 1), [userEvent(1, 'one'), userEvent(2, 'two')]);
    const path = put(root, 'p', 'a', 'session.v3.jsonl', full);
    const store = createDshStoreSessionQuery({ root });
    await store.listSessions();
    let change: (() => void) | undefined;
    const changingFirst = (original: FsCall) => (...args: unknown[]) => {
      change?.();
      change = undefined;
      return original(...args);
    };
    await withFs('read', changingFirst, async () => {
      const oneLine = jsonl(header('a', 1), [userEvent(1, 'one')]);
      change = () => truncateSync(path, oneLine.length);
      const error = await expectRejectCode(store.readSurface('a'), 'SESSION_REFERENCE_READ_FAILED');
      expect(error.message).toBe(`${JSON.stringify(path)}: short read: ${oneLine.length} of ${full.length} bytes`);
      writeFileSync(path, full);
      const grown = jsonl(header('a', 1), [userEvent(1, 'one'), userEvent(2, 'two'), userEvent(3, 'x'.repeat(20_000))]);
      change = () => writeFileSync(path, grown);
      expect((await store.readSurface('a')).capturedThroughSeq).toBe(2);
    });
  });

  it('reads on after a short read before the end (a file system that returns them mid-file)', async () => {
    const root = freshRoot();
    const events = Array.from({ length: 40 }, (_, i) => userEvent(i, `message ${i} ${'y'.repeat(200)}`));
    put(root, 'p', 'a', 'session.v3.jsonl', jsonl(header('a', 1), events));
    const store = createDshStoreSessionQuery({ root });
    await store.listSessions();
    // Every read returns at most 100 bytes, as some network and FUSE file systems do.
    const shortReads = (original: FsCall) => (fd: unknown, buffer: unknown, offset: unknown, length: unknown, position: unknown, done: unknown) =>
      original(fd, buffer, offset, Math.min(length as number, 100), position, done);
    const surface = await withFs('read', shortReads, () => store.readSurface('a'));
    expect(surface.capturedThroughSeq).toBe(39);
  });

  it('reads a small log whole in one read of its size (its size at open is its end: no read past it)', async () => {
    const root = freshRoot();
    const events = Array.from({ length: 50 }, (_, i) => userEvent(i, `message ${i} ${'x'.repeat(100)}`));
    const path = put(root, 'p', 'a', 'session.v3.jsonl', jsonl(header('a', 1), events));
    const store = createDshStoreSessionQuery({ root });
    await store.listSessions();
    const reads: unknown[][] = [];
    const surface = await withFs('read', recordingInto(reads), () => store.readSurface('a'));
    expect(surface.capturedThroughSeq).toBe(49);
    expect(reads.map((call) => call[3])).toEqual([readFileSync(path).length]);
  });

  /** `count` user messages of about 5 KB from seq `from` on. */
  const bigMessages = (from: number, count: number) => Array.from({ length: count }, (_, i) => userEvent(from + i, `message ${from + i} ${'z'.repeat(5000)}`));

  it('reads a whole zstd log a chunk ahead; a skippable frame met meanwhile gives up that chunk and reads on after the frame, its content unread (SPEC §11.2.1.1)', async () => {
    const root = freshRoot();
    const SKIPPED = 3 * 1024 * 1024;
    const skippable = new Uint8Array(8 + SKIPPED);
    skippable.set([0x50, 0x2a, 0x4d, 0x18]);
    new DataView(skippable.buffer).setUint32(4, SKIPPED, true);
    const head = concatBytes(rawZstdFrame(JSON.stringify(header('skips', 1)) + '\n'), rawZstdFrame(jsonl(header('x', 1), bigMessages(1, 300)).split(/(?<=\n)/).slice(1).join('')));
    // The frame's content starts inside the second 1 MiB read and ends past the third.
    expect(head.length).toBeGreaterThan(1024 * 1024);
    expect(head.length + 8).toBeLessThan(2 * 1024 * 1024);
    const tail = rawZstdFrame(jsonl(header('x', 1), bigMessages(301, 10)).split(/(?<=\n)/).slice(1).join(''));
    put(root, 'p', 'skips', 'session.v3.jsonl.zstd', concatBytes(head, skippable, tail));
    const store = createDshStoreSessionQuery({ root });
    await store.listSessions();
    const reads: unknown[][] = [];
    const surface = await withFs('read', recordingInto(reads), () => store.readSurface('skips'));
    expect(surface.capturedThroughSeq).toBe(310);
    expect(surface.events).toHaveLength(310);
    const after = head.length + skippable.length;
    const positions = reads.map((call) => call[4] as number);
    // The reads: 0, 1 MiB, 2 MiB read ahead (inside the frame's content, given up), then from the frame's end.
    expect(positions).toEqual([0, 1024 * 1024, 2 * 1024 * 1024, after]);
  });

  it.each([
    ['fails on a line of its first chunk', false],
    ['is cancelled', true],
  ])('a whole read that %s while a read is in flight closes the file only once that read settles', async (_name, cancel) => {
    const root = freshRoot();
    const text = jsonl(header('s', 1), bigMessages(1, 600));
    put(root, 'p', 's', 'session.v3.jsonl', cancel ? text : text.replace('"type":"user/message","seq":2,', '"type":"user/message","seq":2,,'));
    const store = createDshStoreSessionQuery({ root });
    await store.listSessions();
    const disk = slowDisk(root);
    const reads: unknown[][] = [];
    const controller = new AbortController();
    await withFs('read', (original) => recordingInto(reads)(disk.read(original)), async () => {
      const read = store.readSurface('s', controller.signal).catch((error: unknown) => error as SessionReferenceError);
      await eventually(() => expect(disk.held).toHaveLength(1));
      const fd = reads[0]![0] as number;
      const identity = `${fstatSync(fd).dev}:${fstatSync(fd).ino}`;
      const open = () => {
        try {
          return `${fstatSync(fd).dev}:${fstatSync(fd).ino}` === identity;
        } catch {
          return false;
        }
      };
      if (cancel) {
        controller.abort(new Error('stop'));
      } else {
        disk.release(0); // the first chunk: the read ahead of the second starts as the pipeline parses it
        await eventually(() => expect(disk.held).toHaveLength(1));
      }
      const error = await read;
      expect(error.code).toBe(cancel ? 'SESSION_REFERENCE_CANCELLED' : 'SESSION_REFERENCE_INVALID_LOG');
      expect(open()).toBe(true);
      disk.holding = false;
      disk.releaseAll();
      await eventually(() => expect(open()).toBe(false));
    });
  });

  it('a log replaced by another session since the scan is found again by id', async () => {
    const root = freshRoot();
    put(root, 'p', 'one', 'session.v3.jsonl', jsonl(header('x', 1)));
    const store = createDshStoreSessionQuery({ root });
    await store.listSessions();
    // Folder "one" now holds session y, and x moved to folder "two".
    put(root, 'p', 'one', 'session.v3.jsonl', jsonl(header('y', 1)));
    put(root, 'p', 'two', 'session.v3.jsonl', jsonl(header('x', 1), [userEvent(3, 'moved')]));
    expect((await store.readSurface('x')).capturedThroughSeq).toBe(3);
  });

  it('cancels with SESSION_REFERENCE_CANCELLED', async () => {
    const root = freshRoot();
    put(root, 'p', 's', 'session.v3.jsonl', jsonl(header('s', 1)));
    const store = createDshStoreSessionQuery({ root });
    const signal = AbortSignal.abort(new Error('stop'));
    await expectRejectCode(store.listSessions(signal), 'SESSION_REFERENCE_CANCELLED');
    await expectRejectCode(store.readSurface('s', signal), 'SESSION_REFERENCE_CANCELLED');
    await expectRejectCode(store.readTitleSnapshots(['s'], signal), 'SESSION_REFERENCE_CANCELLED');
  });

  it('validates its options', () => {
    expectCode(() => createDshStoreSessionQuery({ root: '' }), 'SESSION_REFERENCE_INVALID_CONFIG');
    expectCode(() => createDshStoreSessionQuery({ root: 7 as unknown as string }), 'SESSION_REFERENCE_INVALID_CONFIG');
    expectCode(() => createDshStoreSessionQuery({ rot: '/x' } as never), 'SESSION_REFERENCE_INVALID_CONFIG');
    expectCode(() => createDshStoreSessionQuery(null as never), 'SESSION_REFERENCE_INVALID_CONFIG');
  });
});

describe('default root (SPEC §12.1)', () => {
  it('is $DSH_HOME/sessions, else ~/.dsh/sessions', async () => {
    expect(defaultSessionStoreRoot({ DSH_HOME: '/opt/dsh' }, '/home/u')).toBe(join('/opt/dsh', 'sessions'));
    expect(defaultSessionStoreRoot({ DSH_HOME: '' }, '/home/u')).toBe(join('/home/u', '.dsh', 'sessions'));
    expect(defaultSessionStoreRoot({}, '/home/u')).toBe(join('/home/u', '.dsh', 'sessions'));

    const dshHome = freshRoot();
    put(join(dshHome, 'sessions'), 'p', 's', 'session.v3.jsonl', jsonl(header('from-dsh-home', 1)));
    vi.stubEnv('DSH_HOME', dshHome);
    const store = createDshStoreSessionQuery();
    expect(store.root).toBe(join(dshHome, 'sessions'));
    expect((await store.listSessions()).map((r) => r.header.id)).toEqual(['from-dsh-home']);

    vi.stubEnv('DSH_HOME', '');
    expect(createDshStoreSessionQuery().root).toBe(join(homedir(), '.dsh', 'sessions'));
  });

  it('resolves a relative root against the current directory', () => {
    expect(createDshStoreSessionQuery({ root: 'rel/store' }).root).toBe(join(process.cwd(), 'rel', 'store'));
  });
});

describe('the bundled sample store (samples/store)', () => {
  const store = createDshStoreSessionQuery({ root: sampleStoreRoot() });
  const refs = createSessionReferences({ sessionQuery: store });
  const agent = { id: TARGET, cwd: '/home/user/projects/01_unicorn/77-Dumen' };

  async function conversation(id: string, maxReferenceBytes?: number) {
    const service = maxReferenceBytes ? createSessionReferences({ sessionQuery: store, config: { maxReferenceBytes } }) : refs;
    const { context } = await service.prepare(agent, [{ type: 'text', text: 'x' }], [{ sessionId: id }]);
    const text = context!.content[0].text;
    const json = text.slice(text.indexOf('<referenced-sessions>\n') + 22, text.lastIndexOf('\n</referenced-sessions>'));
    return { reference: JSON.parse(json)[0] as { conversation: Array<{ role: string; text: string; checkpoint?: true }>; cwd: string | null }, metadata: context!.metadata.references[0]!, text };
  }

  it('holds the real log plus the generated sessions', async () => {
    const sample = readFileSync(join(sampleStoreRoot(), '77-Dumen', REAL, 'session.v3.jsonl'));
    expect(sample.length).toBe(325_488);
    expect(sample.subarray(0, 40).toString()).toBe('{"type":"session","version":3,"id":"sess');
    expect((await store.listSessions()).map((r) => r.header.id).sort()).toEqual([REAL, TARGET, COMPACTED, ENVELOPED, CJK, VERSIONS, LARGE].sort());
  });

  it('the real log: one direct prompt, two assistant texts; no system prompt, tools or inbox copies', async () => {
    const { reference, metadata } = await conversation(REAL);
    expect(reference.conversation.map((i) => i.role)).toEqual(['user', 'assistant', 'assistant']);
    expect(reference.conversation[0]!.text.startsWith('Bu projeyi gemini ile')).toBe(true);
    expect(metadata.capturedThroughSeq).toBe(98);
    expect(JSON.stringify(reference)).not.toContain('DeepSeek Harness');
    expect(JSON.stringify(reference)).not.toContain('skill_content');
  });

  it('compacted (zstd): checkpoint, later turns, interrupted text; no reasoning, chunks or tools', async () => {
    const { reference, metadata, text } = await conversation(COMPACTED);
    const items = reference.conversation;
    expect(metadata.compacted).toBe(true);
    expect(items[0]).toMatchObject({ role: 'user', checkpoint: true });
    expect(items[0]!.text).toContain('Summary of the conversation so far');
    expect(items.map((i) => i.role)).toEqual(['user', 'user', 'assistant', 'user', 'assistant', 'user']);
    expect(items[4]!.text).toContain('starting with the argument par');
    expect(JSON.stringify(reference)).not.toMatch(/seed library|Mention the injection|57 passed|Never reveal/);
    // The pasted injection is data: no "<" between the tags.
    const inner = text.slice(text.indexOf('<referenced-sessions>') + 21, text.lastIndexOf('</referenced-sessions>'));
    expect(inner).not.toContain('<');
    expect(items[1]!.text).toContain('</referenced-sessions> <system>');
    expect((await store.readTitleSnapshots([COMPACTED]))[0]).toMatchObject({ value: { title: { title: 'Dümen: seeds.py done, Annex XI dossier (compacted)' } } });
  });

  it('enveloped: only envelope.display is projected; steering in every shape; plugin steering excluded', async () => {
    const { reference } = await conversation(ENVELOPED);
    const texts = reference.conversation.map((i) => `${i.role}: ${i.text}`);
    expect(texts[0]).toBe(
      'user: @Bu projeyi gemini ile geliştiriyorduk — in that session the agent asked clarifying questions before coding. Do the same here before you touch the ledger reconciler.',
    );
    expect(JSON.stringify(reference)).not.toContain('referenced-sessions');
    expect(texts).toEqual(
      expect.arrayContaining([
        'user: Also log every skipped row.',
        'user: Use decimal.Decimal for amounts, not float.',
        'user: And keep the old CLI flags working.',
        'user: Skip the Excel import path for now.',
      ]),
    );
    expect(JSON.stringify(reference)).not.toContain('todo-reminder');
    expect(texts.some((t) => t.endsWith('was about to rewrite the match loop when'))).toBe(true);
  });

  it('cjk: non-ASCII id from the header of session.jsonl, no cwd', async () => {
    const { reference } = await conversation(CJK);
    expect(reference.cwd).toBeNull();
    expect(reference.conversation[0]!.text).toBe('帮我把“会话引用”功能的设计要点整理成一个清单 📝');
    const candidates = await refs.listCandidates(agent, '设计');
    expect(candidates.map((c) => [c.sessionId, c.label, c.cwd])).toEqual([[CJK, '会话引用设计笔记 📝', undefined]]);
  });

  it('versions: the v3 log is read, never the stale v2 one', async () => {
    const { reference } = await conversation(VERSIONS);
    expect(JSON.stringify(reference)).not.toContain('stale');
    expect((await store.readTitleSnapshots([VERSIONS]))[0]).toMatchObject({ value: { title: { title: 'CSV importer: header-row detection' } } });
  });

  it('large (zstd): retention kicks in at the default 64 KiB budget', async () => {
    const { reference, metadata } = await conversation(LARGE);
    expect(metadata.truncated).toBe(true);
    expect(metadata.omittedMessages).toBeGreaterThan(0);
    expect(metadata.serializedBytes).toBeLessThanOrEqual(65536);
    expect(metadata.originalMessages).toBe(72);
    expect(reference.conversation.at(-1)!.text).toContain('Reconciliation of day 36');
  });

  it('candidates for the demo target: same cwd first, then no cwd, then others', async () => {
    const candidates = await refs.listCandidates(agent);
    expect(candidates.map((c) => c.sessionId)).toEqual([COMPACTED, REAL, CJK, ENVELOPED, VERSIONS, LARGE]);
  });
});

describe('readRetainedSurface over a log never compacted (SPEC §11.2.2)', () => {
  /**
   * 6,000 messages of 4 KiB (24 MiB of text, past the 16 MiB held): a surface that keeps every
   * message. With `replaced`, a last message replaces the newest 1,000, so the messages retention
   * keeps are older than the 1 MiB window of texts still held at the end.
   */
  function longLog(id: string, replaced = false): string {
    const assistant = (seq: number, text: string): SessionEvent => ({ type: 'assistant/message', seq, time: seq, data: { message: { role: 'assistant', content: [{ type: 'text', text }] } } });
    const events = Array.from({ length: 6000 }, (_, seq) => (seq % 2 ? assistant(seq, `reply ${seq} `.padEnd(4096, 'r')) : userEvent(seq, `ask ${seq} `.padEnd(4096, 'u'))));
    if (replaced) events.push({ ...userEvent(6000, 'the last thousand, in short'), surfaceOp: { op: 'replace', start: 5000, end: 5999 } });
    return jsonl(header(id, 10, { cwd: '/work' }), events);
  }

  it.each([
    ['its newest messages held: one pass', false, 1],
    ['its newest messages replaced: the kept ones read again on the same open file', true, 2],
  ])('%s; leaves the rest out, and prepares exactly what a whole read does', async (_name, replaced, passes) => {
    const root = freshRoot();
    const text = longLog('long', replaced);
    put(root, 'p', 'plain', 'session.jsonl', text);
    put(root, 'p', 'zstd', 'session.jsonl.zstd', zstdLog(header('long-zstd', 9), [[], ...chunk(text.split('\n').slice(1, -1).map((row) => JSON.parse(row) as SessionEvent), 500)]));
    const store = createDshStoreSessionQuery({ root });
    await store.listSessions();
    const messages = replaced ? 5001 : 6000;
    for (const id of ['long', 'long-zstd']) {
      const opens: unknown[][] = [];
      const reads: unknown[][] = [];
      const surface = await withFs('open', recordingInto(opens), () => withFs('read', recordingInto(reads), () => store.readRetainedSurface(id, 65536)));
      expect(opens).toHaveLength(1);
      // Each pass reads from the start of the file.
      expect(reads.filter((call) => call[4] === 0)).toHaveLength(passes);
      // 64 KiB of reference keeps at most 16 messages of 4 KiB.
      expect(surface.events.length).toBeLessThanOrEqual(16);
      const kept = replaced ? surface.events.slice(0, -1) : surface.events;
      expect(surface.withheld).toEqual({ messages: messages - surface.events.length, bytes: 4096 * (messages - 1 - kept.length) + (replaced ? 0 : 4096) });
      const retained = await createSessionReferences({ sessionQuery: store }).prepare({ id: 'target' }, [], [{ sessionId: id }]);
      const whole = { listSessions: () => store.listSessions(), readSurface: (sessionId: string) => store.readSurface(sessionId) };
      expect(retained).toEqual(await createSessionReferences({ sessionQuery: whole }).prepare({ id: 'target' }, [], [{ sessionId: id }]));
      // The answer holds what retention may keep, at least what it keeps.
      const counts = retained.context!.metadata.references[0]!;
      expect(counts.originalMessages).toBe(messages);
      expect(counts.retainedMessages).toBeLessThanOrEqual(surface.events.length);
    }
    await expectRejectCode(store.readRetainedSurface('long', 0), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });

  it('fails with READ_FAILED naming the path when the file is rewritten between the two passes', async () => {
    const root = freshRoot();
    const path = put(root, 'p', 's', 'session.jsonl', longLog('rewritten', true));
    const store = createDshStoreSessionQuery({ root });
    await store.listSessions();
    let starts = 0;
    // The second read from position 0 starts the second pass: the file is rewritten in place just before it.
    const rewriting = (original: FsCall): FsCall => (...args) => {
      if (args[4] === 0 && ++starts === 2) writeFileSync(path, readFileSync(path, 'utf8').replaceAll('"seq":4995,', '"seq":99995,'));
      return original(...args);
    };
    const error = await withFs('read', rewriting, () => expectRejectCode(store.readRetainedSurface('rewritten', 65536), 'SESSION_REFERENCE_READ_FAILED'));
    expect(error.message).toContain(JSON.stringify(path));
    expect(error.message).toMatch(/changed while it was being read: line \d+/);
  });

  it('the object store fetches the object a second time, and prepares exactly what a whole read does', async () => {
    const { createObjectStoreSessionQuery } = await import('../src/store/index.js');
    const { fakeBucket } = await import('./fixtures/object-store.js');
    const { bucket, stats } = fakeBucket({ 'a/long.jsonl': longLog('long', true) });
    const store = createObjectStoreSessionQuery(bucket);
    const retained = await createSessionReferences({ sessionQuery: store }).prepare({ id: 'target' }, [], [{ sessionId: 'long' }]);
    expect(stats.gets.filter((get) => get.range === undefined)).toHaveLength(2);
    const whole = { listSessions: () => store.listSessions(), readSurface: (sessionId: string) => createObjectStoreSessionQuery(bucket).readSurface(sessionId) };
    expect(retained).toEqual(await createSessionReferences({ sessionQuery: whole }).prepare({ id: 'target' }, [], [{ sessionId: 'long' }]));
    // A second call at a smaller budget is served by the first read.
    const gets = stats.gets.length;
    expect((await store.readRetainedSurface('long', 1000)).withheld?.messages).toBeGreaterThan(4980);
    expect(stats.gets.length).toBe(gets);
  });
});

function chunk<T>(items: T[], size: number): T[][] {
  const chunks: T[][] = [];
  for (let i = 0; i < items.length; i += size) chunks.push(items.slice(i, i + size));
  return chunks;
}

describe('signals of the Node store (SPEC §10.2)', () => {
  it.each([5, 'abort', {}, { aborted: 'no', addEventListener() {}, removeEventListener() {} }])('a signal of %j is INVALID_ARGUMENT in every method, before any file is read', async (signal) => {
    const store = createDshStoreSessionQuery({ root: sampleStoreRoot() });
    const reads: unknown[][] = [];
    await withFs('read', recordingInto(reads), async () => {
      for (const call of [
        () => store.listSessions(signal as never),
        () => store.readSurface(REAL, signal as never),
        () => store.readRetainedSurface(REAL, 65536, signal as never),
        () => store.readTitleSnapshots([REAL], signal as never),
      ]) {
        const error = await expectRejectCode(call(), 'SESSION_REFERENCE_INVALID_ARGUMENT');
        expect(error.message).toContain('signal must be an AbortSignal');
      }
    });
    expect(reads).toEqual([]);
  });
});

describe('caller data of the Node store is read once, faults named (SPEC §10, §10.4)', () => {
  const revoked = () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    return proxy;
  };
  const throwingTrap = () => new Proxy([], { get: () => { throw new TypeError('trap'); }, ownKeys: () => { throw new TypeError('trap'); } });

  it('a revoked or throwing-trap proxy as options is INVALID_CONFIG naming options; as sessionIds, INVALID_ARGUMENT naming sessionIds', async () => {
    for (const proxy of [revoked, throwingTrap]) {
      const error = expectCode(() => createDshStoreSessionQuery(proxy() as never), 'SESSION_REFERENCE_INVALID_CONFIG');
      expect(error.message).toMatch(/^options(\.\w+)? cannot be read/);
      const query = createDshStoreSessionQuery({ root: sampleStoreRoot() });
      const rejected = await expectRejectCode(query.readTitleSnapshots(proxy() as never), 'SESSION_REFERENCE_INVALID_ARGUMENT');
      expect(rejected.message).toMatch(/^sessionIds(\.\w+|\[\d+\])? cannot be read/);
    }
  });

  it('options are read once: a getter that answers a good root and then a bad one is read as the good one', () => {
    let reads = 0;
    const options = Object.defineProperty({}, 'root', { enumerable: true, get: () => (reads++ === 0 ? sampleStoreRoot() : 42) });
    expect(createDshStoreSessionQuery(options as never).root).toBe(sampleStoreRoot());
    expect(reads).toBe(1);
  });
});
