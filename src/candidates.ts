/**
 * Discovery of sessions a user may cite, for `@` autocomplete (SPEC §6).
 * @module
 */
import { checkSignal, throwIfAborted } from './abort.js';
import { isPositiveSafeInteger } from './config.js';
import { check } from './errors.js';
import { callHost, checkAgent, isNonEmptyString } from './host.js';
import { formatSessionReferenceMention } from './mention.js';
import type { SessionHeader, SessionQuery, TargetAgent } from './types.js';

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
  const records = await callHost(() => sessionQuery.listSessions(signal), signal, LIST_SESSIONS);
  const selected = selectCandidates(records, agent, query ?? '', limit);
  const ids = selected.map((header) => header.id);
  // Titles with non-whitespace content by session id, read in one call for the selected ids only
  // (SPEC §6.4). A failed read only loses the titles, unless it is the signal's abort.
  const titles = new Map<string, string>();
  const rows: unknown =
    ids.length && typeof sessionQuery.readTitleSnapshots === 'function'
      ? await callHost(() => sessionQuery.readTitleSnapshots!(ids, signal), signal, 'readTitleSnapshots()').catch(() => throwIfAborted(signal))
      : undefined;
  // Rows are matched by sessionId, not position; a row for an id not asked for (or not a string)
  // is never looked up.
  if (Array.isArray(rows)) {
    for (const row of rows as unknown[]) {
      const { sessionId, status, value } = (row ?? {}) as { sessionId?: unknown; status?: unknown; value?: { title?: { title?: unknown } } };
      const title = status === 'fulfilled' ? value?.title?.title : undefined;
      if (typeof title === 'string' && title.trim()) titles.set(sessionId as string, title);
    }
  }
  throwIfAborted(signal);
  return selected.map(({ id: sessionId, cwd, createdAt }) => {
    const label = titles.get(sessionId) ?? sessionId;
    // Keys in SPEC §6.5 order; `cwd` only when it is a non-empty string.
    return { sessionId, label, ...(isNonEmptyString(cwd) && { cwd }), createdAt, mention: formatSessionReferenceMention({ sessionId, label }) };
  });
}

/** Filter, three cwd groups (stable), first `limit` (SPEC §6.1–§6.4). */
function selectCandidates(records: unknown, agent: TargetAgent, query: string, limit: number): SessionHeader[] {
  check(Array.isArray(records), 'READ_FAILED', `${LIST_SESSIONS} must resolve to an array`, records);
  const needle = query.toLowerCase();
  // The agent's cwd (SPEC §4.6); it ranks only when it is a non-empty string.
  const ownCwd = agent.cwd ?? agent.session?.header?.cwd;
  // Same cwd, no cwd (undefined, null or ''), other cwd.
  const groups: SessionHeader[][] = [[], [], []];
  // An index loop, not forEach: a hole in a sparse array is a (malformed) record too. Every
  // record is checked, but the substring test is skipped once its group holds `limit` records:
  // later ones of that group can never be among the first `limit`.
  const list = records as unknown[];
  for (let index = 0; index < list.length; index++) {
    const record = list[index];
    const header = (record as { header?: unknown } | null)?.header as SessionHeader | undefined;
    check(
      typeof header?.id === 'string' && Number.isFinite(header.createdAt),
      'READ_FAILED',
      `${LIST_SESSIONS} record ${index} must have a header { id: string, createdAt: number }`,
      record,
    );
    if (header.id === agent.id) continue;
    const cwd = header.cwd;
    const rank = isNonEmptyString(ownCwd) && cwd === ownCwd ? 0 : cwd == null || cwd === '' ? 1 : 2;
    const group = groups[rank]!;
    if (group.length < limit && (header.id.toLowerCase().includes(needle) || (typeof cwd === 'string' && cwd.toLowerCase().includes(needle)))) {
      group.push(header);
    }
  }
  return groups.flat().slice(0, limit);
}
