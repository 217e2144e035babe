/**
 * Discovery of sessions a user may cite, for `@` autocomplete (SPEC §6).
 * @module
 */
import { checkSignal, throwIfAborted } from './abort.js';
import { candidateMatcher, type CandidateMatch, type CandidateMatcher } from './candidate-match.js';
import { isPositiveSafeInteger } from './config.js';
import { check, fail } from './errors.js';
import { callHost, isNonEmptyString, presentEntries, readAgent, readTitleRows } from './host.js';
import { cleanTitleLabel } from './label.js';
import { formatSessionReferenceMention } from './mention.js';
import type { SessionHeader, SessionQuery } from './types.js';

/** How messages name the host's listing call. */
const LIST_SESSIONS = 'sessionQuery.listSessions()';

/** A session a user may cite, as `listCandidates` returns it (SPEC §6.5). */
export interface SessionCandidate {
  sessionId: string;
  /** The latest title cleaned as SPEC §6.6 says (at most 120 code points, one line), or the session id when nothing is left. */
  label: string;
  /** Present when the session has a non-empty cwd. */
  cwd?: string;
  /** Epoch milliseconds, from the session header. */
  createdAt: number;
  /** The canonical mention `@[label](dsh-session:…)` to insert into a prompt. */
  mention: string;
}

/** What `listCandidates` takes from the configuration (SPEC §5). */
export interface CandidateOptions {
  /** The default `limit`. */
  candidateLimit: number;
  /** A non-empty query also matches the cleaned title label (SPEC §6.7). */
  matchTitles: boolean;
  /** How a query matches: dsh's substring rule (SPEC §6.2) or words (SPEC §15.10). */
  candidateMatch: CandidateMatch;
}

/** A ranked session and its label. */
interface Labelled {
  header: SessionHeader;
  label: string;
}

/**
 * `listCandidates(agent, query?, limit?, signal?)` of SPEC §6: one `listSessions` call, the agent
 * dropped, a case-insensitive substring filter on id or cwd (or, with `candidateMatch: 'words'`,
 * every folded query word a prefix of a word of the id or cwd, SPEC §15.10), three cwd groups
 * (stable), the first `limit` (default `candidateLimit`), labelled with their cleaned titles (§6.6)
 * read in one call for those only. With `matchTitles` and a query that filters, the filter also
 * matches the label, and titles are read in batches in rank order until `limit` candidates are
 * found (§6.7).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT`, `SESSION_REFERENCE_READ_FAILED`
 * (cause kept; also a record without a string id or a finite `createdAt`), `SESSION_REFERENCE_CANCELLED`.
 */
export async function listCandidates(
  sessionQuery: SessionQuery,
  options: CandidateOptions,
  agentInput: unknown,
  query: unknown,
  limitInput: unknown,
  signalInput: unknown,
): Promise<SessionCandidate[]> {
  // The agent's id and cwd (SPEC §4.6), read once before anything is awaited (SPEC §10.4).
  const { id: agentId, cwd: ownCwd } = readAgent(agentInput);
  check(query == null || typeof query === 'string', 'INVALID_ARGUMENT', 'query must be a string', query);
  const limit = limitInput ?? options.candidateLimit;
  check(isPositiveSafeInteger(limit), 'INVALID_ARGUMENT', 'limit must be a positive safe integer', limitInput);
  const signal = checkSignal(signalInput);
  throwIfAborted(signal);
  const matcher = candidateMatcher(options.candidateMatch, query ?? '');
  const byTitle = options.matchTitles && !matcher.keepsAll;
  // With title matching, every record stays a candidate until its label is known (SPEC §6.7).
  const accept = byTitle || matcher.keepsAll ? () => true : (id: string, cwd: unknown) => matcher.matches([id, cwd]);
  // The listing is read inside callHost (SPEC §10.1): ranked records are plain copies of ours.
  const ranked = await callHost(() => sessionQuery.listSessions(signal), signal, LIST_SESSIONS, (records) =>
    rankRecords(records, agentId, ownCwd, accept, byTitle ? Infinity : limit),
  );
  const selected = byTitle ? await selectByTitle(sessionQuery, ranked, matcher, limit, signal) : await labelled(sessionQuery, ranked, signal);
  throwIfAborted(signal);
  return selected.map(({ header: { id: sessionId, cwd, createdAt }, label }) =>
    // Keys in SPEC §6.5 order; `cwd` only when it is a non-empty string.
    ({ sessionId, label, ...(isNonEmptyString(cwd) && { cwd }), createdAt, mention: formatSessionReferenceMention({ sessionId, label }) }),
  );
}

/**
 * The records `accept` keeps, the agent's dropped, in the three cwd groups of SPEC §6.3 (same
 * cwd, no cwd — `undefined`, `null` or `''` —, other cwd), `listSessions()` order inside each, at
 * most `cap` per group and `cap` in all, as plain copies `{ id, createdAt, cwd }` of their headers
 * (each field read once). Every record is checked, but `accept` is skipped once its group holds
 * `cap`: later ones of that group can never be among the first `cap`.
 * @throws SessionReferenceError `SESSION_REFERENCE_READ_FAILED` for an answer that is not an
 * array, a hole, or a record without a header with a string id and a finite `createdAt`.
 */
function rankRecords(records: unknown, agentId: string, ownCwd: unknown, accept: (id: string, cwd: unknown) => boolean, cap: number): SessionHeader[] {
  check(Array.isArray(records), 'READ_FAILED', `${LIST_SESSIONS} must resolve to an array`, records);
  const groups: SessionHeader[][] = [[], [], []];
  // A hole in a sparse array is a (malformed) record too, found without visiting the rest (SPEC §10.3).
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
    const group = groups[cwdGroup(ownCwd, cwd)]!;
    if (group.length < cap && accept(id, cwd)) group.push({ id, createdAt: createdAt as number, cwd: cwd as string | null | undefined });
  }
  return groups.flat().slice(0, cap);
}

/** The group of SPEC §6.3 a session of `cwd` falls in: 0 same cwd as the agent's, 1 no cwd, 2 other cwd. */
export function cwdGroup(ownCwd: unknown, cwd: unknown): 0 | 1 | 2 {
  return isNonEmptyString(ownCwd) && cwd === ownCwd ? 0 : cwd == null || cwd === '' ? 1 : 2;
}

/** `headers` with their labels, from one title read for exactly those (SPEC §6.4). */
async function labelled(sessionQuery: SessionQuery, headers: SessionHeader[], signal: AbortSignal | undefined): Promise<Labelled[]> {
  const labels = await readTitleLabels(sessionQuery, headers, signal);
  return headers.map((header) => ({ header, label: labels.get(header.id) ?? header.id }));
}

/**
 * Title matching (SPEC §6.7, §15.10): ranked records are examined in order, `limit` at a time, each
 * batch labelled by one title read; a record is kept when `matcher` matches its id, cwd and label,
 * and the examination stops once `limit` are kept. So at most `limit − 1` titles are read past the
 * last record examined.
 */
async function selectByTitle(
  sessionQuery: SessionQuery,
  ranked: readonly SessionHeader[],
  matcher: CandidateMatcher,
  limit: number,
  signal: AbortSignal | undefined,
): Promise<Labelled[]> {
  const kept: Labelled[] = [];
  for (let start = 0; start < ranked.length && kept.length < limit; start += limit) {
    for (const row of await labelled(sessionQuery, ranked.slice(start, start + limit), signal)) {
      if (kept.length < limit && matcher.matches([row.header.id, row.header.cwd, row.label])) kept.push(row);
    }
  }
  return kept;
}

/**
 * The cleaned labels (SPEC §6.6) of the sessions whose title read succeeded with a string title
 * that is not empty once cleaned, by session id; one `readTitleSnapshots` call (none for no
 * headers or without the method). A failed read only loses the labels, unless it is the signal's
 * abort; rows are matched by `sessionId`, not position, and a row that cannot be read is skipped
 * (SPEC §6.4, §10.1). The ids whose title read failed (the whole call, or a `rejected` row) are
 * added to `failed` when given: search indexes them again on its next run.
 */
export async function readTitleLabels(
  sessionQuery: SessionQuery,
  headers: readonly SessionHeader[],
  signal: AbortSignal | undefined,
  failed?: Set<string>,
): Promise<Map<string, string>> {
  const labels = new Map<string, string>();
  if (headers.length === 0 || typeof sessionQuery.readTitleSnapshots !== 'function') return labels;
  const ids = headers.map((header) => header.id);
  const read = (answer: unknown) => readTitleRows(answer, failed);
  const rows = await callHost(() => sessionQuery.readTitleSnapshots!(ids, signal), signal, 'readTitleSnapshots()', read).catch(() => {
    throwIfAborted(signal);
    for (const id of ids) failed?.add(id);
  });
  throwIfAborted(signal);
  // An id not asked for is never looked up.
  for (const [sessionId, title] of rows ?? []) {
    const label = cleanTitleLabel(title);
    if (label) labels.set(sessionId, label);
  }
  return labels;
}
