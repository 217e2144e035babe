/**
 * An in-memory `SessionQuery` over parsed session logs (SPEC §11.3, §4.2).
 * @module
 */
import { checkSignal, throwIfAborted } from '../abort.js';
import { copyCallerData } from '../caller-data.js';
import { describeValue, fail } from '../errors.js';
import { foldSurface } from '../surface.js';
import type { SessionEvent, SessionHeader, SessionQuery, SessionSurface, SessionTitleSnapshot } from '../types.js';
import { eventTitle, isRecord } from './collect.js';
import type { SessionLog } from './log.js';
import { readSessionIds } from './read.js';

/** A {@link SessionQuery} whose optional `readTitleSnapshots` is always present. */
export interface MemorySessionQuery extends SessionQuery {
  readTitleSnapshots(sessionIds: string[], signal?: AbortSignal): Promise<SessionTitleSnapshot[]>;
}

/** What the store keeps per log, computed once at creation. */
interface StoredSession {
  readonly header: SessionHeader;
  /** The log's events, from the private copy of the caller's logs. */
  readonly events: readonly SessionEvent[];
  readonly capturedThroughSeq: number | null;
  /** `data.title` of the last `session/title` event carrying a string title. */
  readonly title: string | undefined;
  /** The folded surface, computed on first `readSurface`. */
  surface?: readonly SessionEvent[];
}

function invalidArgument(message: string) {
  return fail('INVALID_ARGUMENT', message);
}

function notFound(sessionId: string) {
  return fail('NOT_FOUND', `no session with id ${describeValue(sessionId)} in the store`);
}

function checkHeader(header: unknown, where: string): SessionHeader {
  if (
    !isRecord(header) ||
    typeof header.id !== 'string' ||
    typeof header.createdAt !== 'number' ||
    !Number.isFinite(header.createdAt)
  ) {
    throw invalidArgument(`${where}.header must be { id: string, createdAt: number }, got ${describeValue(header)}`);
  }
  return header as SessionHeader;
}

function checkEvents(events: unknown, where: string): SessionEvent[] {
  if (!Array.isArray(events)) throw invalidArgument(`${where}.events must be an array, got ${describeValue(events)}`);
  events.forEach((event: unknown, index) => {
    if (!isRecord(event) || typeof event.type !== 'string' || typeof event.seq !== 'number' || !Number.isFinite(event.seq)) {
      throw invalidArgument(`${where}.events[${index}] must be { type: string, seq: number }, got ${describeValue(event)}`);
    }
  });
  return events as SessionEvent[];
}

/** The title of the last `session/title` event whose `data.title` is a string. */
function lastTitle(events: readonly SessionEvent[]): string | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    const title = eventTitle(events[i]!);
    if (title !== undefined) return title;
  }
  return undefined;
}

function storeLog(log: unknown, index: number): StoredSession {
  const where = `logs[${index}]`;
  if (!isRecord(log)) throw invalidArgument(`${where} must be a parsed session log { header, events }, got ${describeValue(log)}`);
  const header = checkHeader(log.header, where);
  const events = checkEvents(log.events, where);
  const capturedThroughSeq = events.length === 0 ? null : events[events.length - 1]!.seq;
  return { header, events, capturedThroughSeq, title: lastTitle(events) };
}

/** Newest first: `createdAt` descending, then id ascending by UTF-16 code units. */
function newestFirst(a: StoredSession, b: StoredSession): number {
  if (a.header.createdAt !== b.header.createdAt) return b.header.createdAt - a.header.createdAt;
  return a.header.id < b.header.id ? -1 : a.header.id > b.header.id ? 1 : 0;
}

function indexSessions(sessions: readonly StoredSession[]): Map<string, StoredSession> {
  const byId = new Map<string, StoredSession>();
  for (const session of sessions) {
    const id = session.header.id;
    if (byId.has(id)) throw invalidArgument(`two logs have the session id ${describeValue(id)}`);
    byId.set(id, session);
  }
  return byId;
}

function surfaceOf(session: StoredSession): readonly SessionEvent[] {
  session.surface ??= foldSurface(session.events);
  return session.surface;
}

function titleRow(byId: ReadonlyMap<string, StoredSession>, sessionId: string): SessionTitleSnapshot {
  const session = byId.get(sessionId);
  if (!session) return { sessionId, status: 'rejected', reason: notFound(sessionId) };
  const value = session.title === undefined ? {} : { title: { title: session.title } };
  return { sessionId, status: 'fulfilled', value };
}

function checkSessionId(sessionId: unknown): string {
  if (typeof sessionId !== 'string') throw invalidArgument(`sessionId must be a string, got ${describeValue(sessionId)}`);
  return sessionId;
}

/** Validates `signal` and rejects when it is already aborted. */
function enter(signal: unknown): void {
  throwIfAborted(checkSignal(signal));
}

/**
 * A {@link SessionQuery} over parsed session logs, for hosts without a session store: playgrounds,
 * workers, tests (SPEC §11.3, §4.2). Everything is computed once at creation except each
 * session's folded surface, folded on its first `readSurface` and cached.
 *
 * - `listSessions(signal?)` → `{ header, identity }[]`, newest first: `createdAt` descending, then id
 *   ascending by UTF-16 code units; `identity` is unique to this store and session (SPEC §16.4).
 * - `readSurface(sessionId, signal?)` → `{ session: header, capturedThroughSeq, events }`:
 *   `events` is the folded surface of the log (SPEC §8.2); `capturedThroughSeq` is the `seq` of
 *   the log's last event (`null` for a log without events).
 * - `readTitleSnapshots(sessionIds, signal?)` → one row per id, in order: `{ sessionId, status:
 *   'fulfilled', value: { title: { title } } }` from `data.title` of the log's last `session/title`
 *   event carrying a string title, `value: {}` when there is none, and `{ sessionId, status:
 *   'rejected', reason }` (a `SESSION_REFERENCE_NOT_FOUND` error) for an unknown id.
 *
 * Every call returns fresh arrays and fresh header objects; event objects are the store's own
 * (shared between calls) and must be treated as read-only. Methods reject (never throw synchronously):
 * `SESSION_REFERENCE_INVALID_ARGUMENT` for a bad id, id list or signal, `SESSION_REFERENCE_CANCELLED`
 * (cause `signal.reason`) when `signal` is already aborted, `SESSION_REFERENCE_NOT_FOUND` from
 * `readSurface` for an unknown id.
 * @param logs Parsed logs (`parseSessionLog` output or equivalent objects), read once into a
 *   private plain copy (SPEC §10.4): framework state works, and later changes to it do not reach
 *   the store. A sparse array is the entries it holds. The copy is whole, a tool's output
 *   included, so data nested deeper than `MAX_CALLER_DATA_DEPTH` (1,000) levels anywhere in a log
 *   is refused (`INVALID_ARGUMENT` naming its path), though `parseSessionLog` reads such a valid
 *   log: the Node and object stores, which keep no tool output, read it.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` naming the path when a part
 * of `logs` cannot be read or copied (a throwing getter, a revoked proxy, a function, a `Map`).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `logs` is not an array of
 * `{ header: { id: string, createdAt: number }, events: { type: string, seq: number }[] }`, or two
 * logs share a session id.
 */
export function createMemorySessionQuery(logs: readonly SessionLog[]): MemorySessionQuery {
  // Read once into a private plain copy (SPEC §10.4): later changes to the caller's logs, a
  // framework's state or a revoked draft cannot reach the store.
  const copied = copyCallerData(logs, 'logs');
  if (!Array.isArray(copied)) throw invalidArgument(`logs must be an array of session logs, got ${describeValue(copied)}`);
  const sessions = copied.map(storeLog);
  const byId = indexSessions(sessions);
  const ordered = sessions.slice().sort(newestFirst);
  // Logs never change within a store, and another store (another run) never shares its identities
  // (SPEC §16.4): a search index exported from one is read again in full by the other.
  const identity = `memory:${Math.random().toString(36).slice(2)}:${Date.now().toString(36)}`;
  return {
    async listSessions(signal?: AbortSignal) {
      enter(signal);
      return ordered.map((session) => ({ header: { ...session.header }, identity: `${identity}:${session.header.id}` }));
    },
    async readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface> {
      enter(signal);
      const session = byId.get(checkSessionId(sessionId));
      if (!session) throw notFound(sessionId);
      const { header, capturedThroughSeq } = session;
      return { session: { ...header }, capturedThroughSeq, events: surfaceOf(session).slice() };
    },
    async readTitleSnapshots(sessionIds: string[], signal?: AbortSignal) {
      enter(signal);
      return readSessionIds(sessionIds).map((sessionId) => titleRow(byId, sessionId));
    },
  };
}
