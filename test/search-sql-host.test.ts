/**
 * The search engine's SQL seam (SPEC §17.5: one engine, two SQLite hosts), in every runtime: the
 * engine over the adapter its TSDoc gives for a Durable Object's `ctx.storage.sql` answers exactly
 * as over SQLite's WebAssembly build. The storage here is a stand-in with the Durable Object's
 * shape and refusals (no `BEGIN`/`COMMIT` through `exec`, blobs as `ArrayBuffer` only,
 * `transactionSync` for transactions), over its own SQLite database.
 */
import { describe, expect, it } from 'vitest';
import { SessionSearchIndex } from '../src/search/engine.js';
import { findHits } from '../src/search/hits.js';
import { createIndex } from '../src/search/index-bytes.js';
import * as kit from '../src/search/kit.js';
import { useRoot } from '../src/search/root.js';
import type { SqlHost, SqlValue } from '../src/search/sql-host.js';
import { loadSqlite } from '../src/search/sqlite.js';
import type { IndexedSession } from '../src/search/stored.js';
import { queryWords } from '../src/search/words.js';

useRoot(kit);

type Binding = null | number | string | ArrayBuffer;

/** A stand-in for a SQLite-backed Durable Object's `ctx.storage`, with the refusals of the real one. */
async function durableObjectStorage() {
  const sqlite = await loadSqlite();
  const db = new sqlite.oo1.DB(':memory:');
  let depth = 0;
  const exec = (sql: string, ...bindings: Binding[]) => {
    if (/^\s*(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE)\b/i.test(sql)) throw new Error('use ctx.storage.transactionSync()');
    for (const binding of bindings) if (binding !== null && !['number', 'string'].includes(typeof binding) && !(binding instanceof ArrayBuffer)) throw new TypeError('unsupported binding');
    const rows: unknown[][] = [];
    db.exec({ sql, bind: bindings.map((b) => (b instanceof ArrayBuffer ? new Uint8Array(b) : b)), rowMode: 'array', resultRows: rows });
    const out = rows.map((row) => row.map((v) => (v instanceof Uint8Array ? v.slice().buffer : typeof v === 'bigint' ? Number(v) : v)));
    return { toArray: () => out, raw: () => out[Symbol.iterator](), one: () => out[0] };
  };
  const transactionSync = <T>(fn: () => T): T => {
    const name = `t${depth++}`;
    db.exec(`SAVEPOINT ${name}`);
    try {
      const result = fn();
      db.exec(`RELEASE ${name}`);
      return result;
    } catch (error) {
      db.exec(`ROLLBACK TO ${name}; RELEASE ${name}`);
      throw error;
    } finally {
      depth--;
    }
  };
  return { sql: { exec }, transactionSync, close: () => db.close() };
}

/** The adapter of `SqlHost`'s TSDoc, as a catalog writes it. */
function durableObjectHost(ctx: { storage: Awaited<ReturnType<typeof durableObjectStorage>> }): SqlHost {
  const toBinding = (v: SqlValue) => (v instanceof Uint8Array ? v.slice().buffer : v);
  const fromValue = (v: unknown) => (v instanceof ArrayBuffer ? new Uint8Array(v) : v) as SqlValue;
  return {
    run: (sql, ...bindings) => void ctx.storage.sql.exec(sql, ...bindings.map(toBinding)).toArray(),
    all: (sql, ...bindings) => [...ctx.storage.sql.exec(sql, ...bindings.map(toBinding)).raw()].map((row) => row.map(fromValue)),
    transaction: (fn) => ctx.storage.transactionSync(fn),
  };
}

const SESSIONS: IndexedSession[] = [
  { id: 'ledger', identity: 'e1', seq: 4, title: 'Ledger export', cwd: '/srv/alpha', items: [{ role: 'user', text: 'Which checksum for the ledger?' }, { role: 'assistant', text: 'XXH64, deterministic.' }] },
  { id: 'freight', identity: 'e2', seq: 9, title: 'Freight triage', cwd: '/home/u/proj-x', items: [{ role: 'user', text: 'Triage the freight schemas; the checksum can wait.' }] },
  { id: '数据', identity: undefined, seq: null, title: '数据库迁移', cwd: '', items: [{ role: 'assistant', text: '我们讨论了数据库迁移的方案' }] },
];
const LISTED = SESSIONS.map((session, order) => ({ id: session.id, createdAt: order, cwd: session.cwd, order }));

async function answers(index: SessionSearchIndex) {
  const out: Record<string, unknown> = {};
  for (const query of ['checksum', 'chucksum', 'srv/alpha', 'proj-x', '数据库迁移', 'freight wait']) {
    out[query] = await findHits(index, LISTED, await queryWords(query, async () => {}), 'agent', undefined, 10, undefined);
  }
  return out;
}

describe('the search engine on a SQL seam (SPEC §17.5)', () => {
  it("answers over a Durable Object's storage exactly as over SQLite's WebAssembly build", async () => {
    const wasm = await createIndex(256 * 1024);
    const storage = await durableObjectStorage();
    try {
      const { index, fresh } = SessionSearchIndex.attach(durableObjectHost({ storage }), 256 * 1024);
      expect(fresh).toBe(true);
      await wasm.put(SESSIONS);
      await index.put(SESSIONS);
      const expected = await answers(wasm);
      expect(Object.entries(expected).filter(([, hits]) => (hits as unknown[]).length === 0).map(([query]) => query)).toEqual([]);
      expect(await answers(index)).toEqual(expected);
      expect(index.known()).toEqual(wasm.known());
      index.remove(['freight']);
      wasm.remove(['freight']);
      expect(await answers(index)).toEqual(await answers(wasm));
    } finally {
      wasm.close();
      storage.close();
    }
  });

  it('a persistent database is attached again as it is; one built otherwise is rebuilt, and the host’s own tables stay', async () => {
    const storage = await durableObjectStorage();
    try {
      const host = durableObjectHost({ storage });
      host.run('CREATE TABLE catalog(key TEXT PRIMARY KEY, etag TEXT)');
      host.run("INSERT INTO catalog VALUES ('a', 'x')");
      const first = SessionSearchIndex.attach(host, 1024);
      await first.index.put(SESSIONS);
      const again = SessionSearchIndex.attach(host, 1024);
      expect(again.fresh).toBe(false);
      expect([...again.index.known().keys()].sort()).toEqual(SESSIONS.map((s) => s.id).sort());
      // Another maxIndexBytes is another index: dropped and made anew.
      const other = SessionSearchIndex.attach(host, 2048);
      expect(other.fresh).toBe(true);
      expect(other.index.known().size).toBe(0);
      expect(host.all('SELECT key, etag FROM catalog')).toEqual([['a', 'x']]);
      // A session given twice in one put is put once, as given last.
      await other.index.put([SESSIONS[0]!, { ...SESSIONS[0]!, title: 'Renamed ledger' }]);
      expect((await other.index.session(SESSIONS[0]!.id))?.title).toBe('Renamed ledger');
      other.index.remove([SESSIONS[0]!.id]);
      // A write that fails inside the transaction leaves nothing of the put behind.
      const bad = { ...SESSIONS[0]!, seq: {} as never }; // a binding the storage refuses
      await expect(other.index.put([SESSIONS[1]!, bad as IndexedSession])).rejects.toThrow();
      expect(other.index.known().size).toBe(0);
    } finally {
      storage.close();
    }
  });
});
