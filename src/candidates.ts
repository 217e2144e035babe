/**
 * Discovery of sessions a user may cite, for `@` autocomplete (SPEC §6).
 * @module
 */
import { checkSignal, throwIfAborted } from './abort.js';
import { isPositiveSafeInteger } from './config.js';
import { check, fail } from './errors.js';
import { callHost, checkAgent, isNonEmptyString, presentEntries, readTitleRows } from './host.js';
import { formatSessionReferenceMention } from './mention.js';
import type { SessionHeader, SessionQuery } from './types.js';

/** How messages name the host's listing call. */
const LIST_SESSIONS = 'sessionQuery.listSessions()';

/** A session a user may cite, as `listCandidates` returns it (SPEC §6.5). */
export interface SessionCandidate {
  sessionId: string;
  /** The latest title when it has non-whitespace content, else the session id. */
  label: string;
  /** Present when the session has a non-empty cwd. */
  cwd?: string;
  /** Epoch milliseconds, from the session header. */
  createdAt: number;
  /** The canonical mention `@[label](dsh-session:…)` to insert into a prompt. */
  mention: string;
}

/**
 * `listCandidates(agent, query?, limit?, signal?)` of SPEC §6: one `listSessions` call, the agent
 * dropped, a case-insensitive substring filter on id or cwd, three cwd groups (stable), the first
 * `limit` (default `defaultLimit`), labelled with titles read in one call for those only.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT`, `SESSION_REFERENCE_READ_FAILED`
 * (cause kept; also a record without a string id or a finite `createdAt`), `SESSION_REFERENCE_CANCELLED`.
 */
export async function listCandidates(
  sessionQuery: SessionQuery,
  defaultLimit: number,
  agentInput: unknown,
  query: unknown,
  limitInput: unknown,
  signalInput: unknown,
): Promise<SessionCandidate[]> {
  const agent = checkAgent(agentInput);
  check(query == null || typeof query === 'string', 'INVALID_ARGUMENT', 'query must be a string', query);
  const limit = limitInput ?? defaultLimit;
  check(isPositiveSafeInteger(limit), 'INVALID_ARGUMENT', 'limit must be a positive safe integer', limitInput);
  const signal = checkSignal(signalInput);
  throwIfAborted(signal);
  // The agent's cwd (SPEC §4.6), read before the host answers: it ranks only when it is a non-empty string.
  const ownCwd = agent.cwd ?? agent.session?.header?.cwd;
  const { id: agentId } = agent;
  const selected = await callHost(() => sessionQuery.listSessions(signal), signal, LIST_SESSIONS, (records) =>
    selectCandidates(records, agentId, ownCwd, query ?? '', limit),
  );
  const ids = selected.map((header) => header.id);
  // Titles with non-whitespace content by session id, read in one call for the selected ids only
  // (SPEC §6.4). A failed read only loses the titles, unless it is the signal's abort.
  const titles = new Map<string, string>();
  const rows =
    ids.length && typeof sessionQuery.readTitleSnapshots === 'function'
      ? await callHost(() => sessionQuery.readTitleSnapshots!(ids, signal), signal, 'readTitleSnapshots()', readTitleRows).catch(() => throwIfAborted(signal))
      : undefined;
  // Rows are matched by sessionId, not position; a row for an id not asked for is never looked up.
  for (const [sessionId, title] of rows ?? []) if (title.trim()) titles.set(sessionId, title);
  throwIfAborted(signal);
  return selected.map(({ id: sessionId, cwd, createdAt }) => {
    const label = titles.get(sessionId) ?? sessionId;
    // Keys in SPEC §6.5 order; `cwd` only when it is a non-empty string.
    return { sessionId, label, ...(isNonEmptyString(cwd) && { cwd }), createdAt, mention: formatSessionReferenceMention({ sessionId, label }) };
  });
}

/**
 * Filter, three cwd groups (stable), first `limit` (SPEC §6.1–§6.4), over the host's answer: each
 * record's header fields are read once, and the kept ones copied.
 * @throws SessionReferenceError `SESSION_REFERENCE_READ_FAILED` for an answer that is not an
 * array, a hole, or a record without a header with a string id and a finite `createdAt`.
 */
function selectCandidates(records: unknown, agentId: string, ownCwd: unknown, query: string, limit: number): SessionHeader[] {
  check(Array.isArray(records), 'READ_FAILED', `${LIST_SESSIONS} must resolve to an array`, records);
  const needle = query.toLowerCase();
  // Same cwd, no cwd (undefined, null or ''), other cwd.
  const groups: SessionHeader[][] = [[], [], []];
  // A hole in a sparse array is a (malformed) record too, found without visiting the rest
  // (SPEC §10.3). Every record is checked, but the substring test is skipped once its group holds
  // `limit` records: later ones of that group can never be among the first `limit`.
  const list = presentEntries(records, (index) => {
    throw fail('READ_FAILED', `${LIST_SESSIONS} record ${index} is missing (a hole in a sparse array)`);
  });
  for (let index = 0; index < list.count; index++) {
    const record = list.at(index);
    const header: unknown = Object(record).header;
    const { id, createdAt, cwd } = Object(header) as Record<string, unknown>;
    check(
      typeof id === 'string' && Number.isFinite(createdAt),
      'READ_FAILED',
      `${LIST_SESSIONS} record ${index} must have a header { id: string, createdAt: number }`,
      record,
    );
    if (id === agentId) continue;
    const rank = isNonEmptyString(ownCwd) && cwd === ownCwd ? 0 : cwd == null || cwd === '' ? 1 : 2;
    const group = groups[rank]!;
    if (group.length < limit && (id.toLowerCase().includes(needle) || (typeof cwd === 'string' && cwd.toLowerCase().includes(needle)))) {
      group.push({ id, createdAt: createdAt as number, cwd: cwd as string | null | undefined });
    }
  }
  return groups.flat().slice(0, limit);
}
