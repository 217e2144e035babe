/**
 * The playground's session store: sample logs bundled at build time, files the user drops or
 * picks, and edits, all parsed with the library's embedded store (SPEC §11) and served through
 * `createMemorySessionQuery` as a fake `sessionQuery`.
 */
import { isSessionReferenceError } from '../../src/index.js';
import { createMemorySessionQuery, parseSessionLog, type MemorySessionQuery, type SessionLog } from '../../src/store/index.js';
import { isZstd } from '../../src/store/zstd.js';

/** An error as the page shows it: a stable code and a message. */
export interface ErrorInfo {
  code: string;
  message: string;
}

/** One session log in the page's store. */
export interface SessionEntry {
  /** Unique key in the page. */
  key: string;
  /** Where it came from. */
  origin: 'sample' | 'file' | 'new';
  /** Display path: `77-Dumen/session-…/session.v3.jsonl`, or the dropped file's name. */
  path: string;
  /** The log arrived as zstd frames; its editable text is the decoded log, re-serialized. */
  compressed: boolean;
  /** Size of the log as it arrived (bytes). */
  byteLength: number;
  /** JSON Lines, as edited. */
  text: string;
  /** The parsed log; absent when `error` is set. */
  log?: SessionLog;
  /** Why the log is not in the store (parse error or duplicate id). */
  error?: ErrorInfo;
}

/** The real dsh log among the samples (SPEC §11.4): the default target cwd comes from it. */
export const REAL_LOG_ID = 'session-904b047f-eb01-493f-b98a-391ecfae5b66';


export function toErrorInfo(error: unknown): ErrorInfo {
  if (isSessionReferenceError(error)) {
    const { code, message } = error as { code: string; message: string };
    return { code, message };
  }
  const message = error instanceof Error ? error.message : String(error);
  return { code: 'UNEXPECTED_ERROR', message };
}

/** JSON Lines of a parsed log: header, then events (what an edit of a zstd log starts from). */
export function serializeLog(log: SessionLog): string {
  return [log.header, ...log.events].map((row) => JSON.stringify(row)).join('\n') + '\n';
}

let nextKey = 0;
export function newKey(): string {
  nextKey += 1;
  return `s${nextKey}`;
}

/** An entry from a log's bytes (plain JSON Lines or zstd frames). */
export function entryFromBytes(bytes: Uint8Array, origin: SessionEntry['origin'], path: string): SessionEntry {
  const compressed = isZstd(bytes);
  const entry: SessionEntry = { key: newKey(), origin, path, compressed, byteLength: bytes.byteLength, text: '' };
  try {
    entry.log = parseSessionLog(bytes);
  } catch (error) {
    entry.error = toErrorInfo(error);
  }
  if (compressed) entry.text = entry.log ? serializeLog(entry.log) : '';
  else entry.text = new TextDecoder().decode(bytes);
  return entry;
}

/** The entry with its text replaced and re-parsed. */
export function reparse(entry: SessionEntry, text: string): SessionEntry {
  const next: SessionEntry = { ...entry, text, log: undefined, error: undefined };
  try {
    next.log = parseSessionLog(text);
  } catch (error) {
    next.error = toErrorInfo(error);
  }
  return next;
}

/** A fresh, editable session log for "New session". */
export function newSessionEntry(cwd: string): SessionEntry {
  const now = Date.now();
  const id = `session-playground-${now.toString(36)}`;
  const rows = [
    { type: 'session', version: 3, id, createdAt: now, cwd },
    { type: 'user/message', seq: 0, time: now, surfaceOp: 'append', data: { id: 'm1', role: 'user', source: { kind: 'user' }, content: [{ type: 'text', text: 'Write your own session here: one JSON object per line.' }] } },
    { type: 'assistant/message', seq: 1, time: now + 1, surfaceOp: 'append', data: { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'Edits are re-parsed as you type; parse errors show their code.' }] } } },
    { type: 'session/title', seq: 2, time: now + 2, data: { title: 'My hand-written session' } },
  ];
  return reparse({ key: newKey(), origin: 'new', path: 'new session', compressed: false, byteLength: 0, text: '' }, rows.map((row) => JSON.stringify(row)).join('\n') + '\n');
}

/** The title of the last `session/title` event, as `readTitleSnapshots` reports it. */
export function titleOf(log: SessionLog): string | undefined {
  for (let i = log.events.length - 1; i >= 0; i--) {
    const event = log.events[i]!;
    const data = event.data as { title?: unknown } | null;
    if (event.type === 'session/title' && typeof data === 'object' && data !== null && typeof data.title === 'string') return data.title;
  }
  return undefined;
}

export interface Store {
  query: MemorySessionQuery | undefined;
  /** Entries that were left out, by key, with why. */
  problems: Map<string, ErrorInfo>;
  /** Store-wide failure (should not happen: duplicates are left out before). */
  error?: ErrorInfo;
}

/**
 * The fake `sessionQuery` over every entry that parsed. Two logs with one id would make
 * `createMemorySessionQuery` throw, so later duplicates are left out (and flagged) instead.
 */
export function buildStore(entries: readonly SessionEntry[]): Store {
  const problems = new Map<string, ErrorInfo>();
  const seen = new Map<string, SessionEntry>();
  const logs: SessionLog[] = [];
  for (const entry of entries) {
    if (entry.error) {
      problems.set(entry.key, entry.error);
      continue;
    }
    const log = entry.log!;
    const first = seen.get(log.header.id);
    if (first) {
      problems.set(entry.key, {
        code: 'SESSION_REFERENCE_INVALID_ARGUMENT',
        message: `another log in the store (${first.path}) already has the session id ${JSON.stringify(log.header.id)}; this one is left out`,
      });
      continue;
    }
    seen.set(log.header.id, entry);
    logs.push(log);
  }
  try {
    return { query: createMemorySessionQuery(logs), problems };
  } catch (error) {
    return { query: undefined, problems, error: toErrorInfo(error) };
  }
}

/**
 * The rank of a sample file name `session[.vN].jsonl[.zstd]`, as in dsh's store (SPEC §12.1 and
 * `createDshStoreSessionQuery`): the highest N wins, and at equal N the plain `.jsonl` wins over
 * its `.zstd` (a crash while compressing leaves the plain log complete).
 */
function logVersion(fileName: string): number | undefined {
  const match = /^session(?:\.v(\d+))?\.jsonl(\.zstd)?$/.exec(fileName);
  if (!match) return undefined;
  return Number(match[1] ?? 0) * 2 + (match[2] ? 0 : 1);
}

/**
 * Sample logs under samples/store/<project>/<session>/, bundled as separate assets. As in dsh's
 * store (SPEC §12.1), a session folder with several logs contributes the highest version.
 */
const SAMPLE_URLS = import.meta.glob('../../samples/store/**/session*', {
  query: '?url',
  import: 'default',
  eager: true,
}) as Record<string, string>;

export interface SampleFile {
  path: string;
  url: string;
}

export function sampleFiles(): SampleFile[] {
  const best = new Map<string, { version: number; file: SampleFile }>();
  for (const [modulePath, url] of Object.entries(SAMPLE_URLS)) {
    const path = modulePath.replace(/^.*\/samples\/store\//, '');
    const slash = path.lastIndexOf('/');
    const folder = path.slice(0, slash);
    const version = logVersion(path.slice(slash + 1));
    if (version === undefined) continue;
    const current = best.get(folder);
    if (!current || version > current.version) best.set(folder, { version, file: { path, url } });
  }
  return [...best.values()].map((value) => value.file).sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Fetches and parses every sample (a failing one becomes an entry with its error). */
export async function loadSamples(): Promise<SessionEntry[]> {
  return Promise.all(
    sampleFiles().map(async (file) => {
      try {
        const response = await fetch(file.url);
        if (!response.ok) throw new Error(`HTTP ${response.status} for ${file.url}`);
        return entryFromBytes(new Uint8Array(await response.arrayBuffer()), 'sample', file.path);
      } catch (error) {
        const entry: SessionEntry = { key: newKey(), origin: 'sample', path: file.path, compressed: false, byteLength: 0, text: '' };
        entry.error = { code: 'FETCH_FAILED', message: `could not load the sample: ${toErrorInfo(error).message}` };
        return entry;
      }
    }),
  );
}

/** Reads dropped or picked files into entries. */
export async function entriesFromFiles(files: readonly File[]): Promise<SessionEntry[]> {
  return Promise.all(
    files.map(async (file) => {
      const bytes = new Uint8Array(await file.arrayBuffer());
      return entryFromBytes(bytes, 'file', file.name);
    }),
  );
}

/**
 * Adds files to the store: a file whose session id is already there replaces that entry (a newer
 * copy of the same session), anything else is appended.
 */
export function mergeEntries(current: readonly SessionEntry[], added: readonly SessionEntry[]): SessionEntry[] {
  const next = current.slice();
  for (const entry of added) {
    const id = entry.log?.header.id;
    const index = id === undefined ? -1 : next.findIndex((other) => other.log?.header.id === id);
    if (index === -1) next.push(entry);
    else next[index] = entry;
  }
  return next;
}
