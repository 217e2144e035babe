/**
 * Discovery of sessions a user may cite, for `@` autocomplete (SPEC §6).
 * @module
 */
import { checkSignal, throwIfAborted } from './abort.js';
import { isPositiveSafeInteger } from './config.js';
import { check } from './errors.js';
import { agentCwd, callHost, checkAgent, isNonEmptyString } from './host.js';
import { formatSessionReferenceMention } from './mention.js';
import type { SessionHeader, SessionQuery, TargetAgent } from './types.js';

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
 * (cause kept), `SESSION_REFERENCE_CANCELLED`.
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
  check(query == null || typeof query === 'string', 'SESSION_REFERENCE_INVALID_ARGUMENT', 'query must be a string', query);
  const limit = limitInput ?? defaultLimit;
  check(isPositiveSafeInteger(limit), 'SESSION_REFERENCE_INVALID_ARGUMENT', 'limit must be a positive safe integer', limitInput);
  const signal = checkSignal(signalInput);
  throwIfAborted(signal);
  const records = await callHost(() => sessionQuery.listSessions(signal), signal, 'sessionQuery.listSessions()');
  const selected = selectCandidates(records, agent, query ?? '', limit);
  const titles = await readTitles(sessionQuery, selected.map((header) => header.id), signal);
  throwIfAborted(signal);
  return selected.map(({ id: sessionId, cwd, createdAt }) => {
    const label = titles.get(sessionId) ?? sessionId;
    const mention = formatSessionReferenceMention({ sessionId, label });
    return isNonEmptyString(cwd) ? { sessionId, label, cwd, createdAt, mention } : { sessionId, label, createdAt, mention };
  });
}

/** Filter, three cwd groups (stable), first `limit` (SPEC §6.1–§6.4). */
function selectCandidates(records: unknown, agent: TargetAgent, query: string, limit: number): SessionHeader[] {
  check(Array.isArray(records), 'SESSION_REFERENCE_READ_FAILED', 'sessionQuery.listSessions() must resolve to an array', records);
  const needle = query.toLowerCase();
  const cwd = agentCwd(agent);
  const ownCwd = isNonEmptyString(cwd) ? cwd : undefined;
  const sameCwd: SessionHeader[] = [];
  const noCwd: SessionHeader[] = [];
  const otherCwd: SessionHeader[] = [];
  // An index loop, not forEach: a hole in a sparse array is a (malformed) record too. Every
  // record is checked, but the substring test is skipped for one whose group is already full:
  // groups only grow, so it could never be among the first `limit`.
  const list = records as unknown[];
  for (let index = 0; index < list.length; index++) {
    const record = list[index];
    const header = (record as { header?: unknown } | null)?.header as SessionHeader | undefined;
    check(typeof header?.id === 'string', 'SESSION_REFERENCE_READ_FAILED', `sessionQuery.listSessions() record ${index} must have a header with a string id`, record);
    if (header.id === agent.id) continue;
    const headerCwd = header.cwd;
    const group =
      ownCwd !== undefined && headerCwd === ownCwd
        ? sameCwd
        : headerCwd === undefined || headerCwd === null || headerCwd === ''
          ? noCwd
          : otherCwd;
    const before = group === sameCwd ? 0 : group === noCwd ? sameCwd.length : sameCwd.length + noCwd.length;
    if (before + group.length >= limit) continue;
    if (
      needle !== '' &&
      !header.id.toLowerCase().includes(needle) &&
      !(typeof headerCwd === 'string' && headerCwd.toLowerCase().includes(needle))
    ) {
      continue;
    }
    group.push(header);
  }
  return sameCwd.concat(noCwd, otherCwd).slice(0, limit);
}

/** Titles with non-whitespace content by session id; empty when the read fails or is unsupported (SPEC §6.4). */
async function readTitles(sessionQuery: SessionQuery, ids: string[], signal: AbortSignal | undefined): Promise<Map<string, string>> {
  const titles = new Map<string, string>();
  if (ids.length === 0 || typeof sessionQuery.readTitleSnapshots !== 'function') return titles;
  let rows: unknown;
  try {
    rows = await callHost(() => sessionQuery.readTitleSnapshots!(ids, signal), signal, 'sessionQuery.readTitleSnapshots()');
  } catch {
    throwIfAborted(signal);
    return titles;
  }
  if (!Array.isArray(rows)) return titles;
  const wanted = new Set(ids);
  for (const row of rows as unknown[]) {
    const { sessionId, status, value } = (row ?? {}) as { sessionId?: unknown; status?: unknown; value?: { title?: { title?: unknown } } };
    const title = status === 'fulfilled' ? value?.title?.title : undefined;
    if (typeof sessionId === 'string' && wanted.has(sessionId) && typeof title === 'string' && /\S/.test(title)) {
      titles.set(sessionId, title);
    }
  }
  return titles;
}
