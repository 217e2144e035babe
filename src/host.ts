/**
 * Talking to the host: the target agent, calls into `sessionQuery`, and reading what they answer
 * (SPEC §4.2, §4.6, §7.2, §10.1, §10.3).
 * @module
 */
import { raceAbort, throwIfAborted } from './abort.js';
import { ownIndices, readCallerFields } from './caller-data.js';
import { check, describeValue, fail, isInstance } from './errors.js';

/** The agent as the module uses it, read once (SPEC §4.6, §10.4): its id, and its cwd when it has one. */
export interface AgentCopy {
  id: string;
  /** `agent.cwd`, or `agent.session.header.cwd` when that is `null` or `undefined`; unchecked. */
  cwd: unknown;
}

/**
 * Reads the agent once (SPEC §4.6, §10.4): `id`, which must be a string, and the cwd —
 * `agent.cwd`, else `agent.session.header.cwd` — each field with one ordinary read (a real dsh
 * `Agent` fits as is, getters included).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` for an agent without a string
 * id, or a field whose read throws (named, e.g. `agent.session.header`).
 */
export function readAgent(agent: unknown): AgentCopy {
  const { id, cwd } = readCallerFields(agent, ['id', 'cwd'], 'agent');
  check(typeof id === 'string', 'INVALID_ARGUMENT', 'agent must have a string id', typeof agent === 'object' && agent !== null ? { id } : agent);
  if (cwd != null) return { id, cwd };
  const { session } = readCallerFields(agent, ['session'], 'agent');
  const { header } = readCallerFields(session, ['header'], 'agent.session');
  return { id, cwd: readCallerFields(header, ['cwd'], 'agent.session.header').cwd };
}

/** True for a string other than `''`. */
export function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/**
 * Calls the host and reads its answer. A synchronous throw or a rejection of `call` becomes
 * `SESSION_REFERENCE_READ_FAILED` naming `what` (cause kept); an abort of `signal` becomes
 * `SESSION_REFERENCE_CANCELLED` at once, and a late answer is ignored. `read` turns the answer
 * into plain data of ours — everything the module needs from it, each value read once — and
 * whatever it throws is host data's fault (SPEC §10.1): a throwing getter, a revoked proxy, a
 * malformed shape anywhere inside becomes `SESSION_REFERENCE_READ_FAILED` (cause kept), except
 * the `READ_FAILED` errors `read` raises itself, which pass as they are. Nothing of the answer is
 * touched after `read`, so no later step can fail on host data.
 */
export function callHost<R>(call: () => unknown, signal: AbortSignal | undefined, what: string, read: (answer: unknown) => R): Promise<R> {
  // The executor runs `call` synchronously and turns its throw into a rejection.
  const answer = new Promise((resolve) => resolve(call())).catch((error: unknown) => {
    throwIfAborted(signal);
    throw fail('READ_FAILED', `${what} failed: ${describeValue(error)}`, error);
  });
  return raceAbort(answer, signal).then((value) => {
    try {
      return read(value);
    } catch (error) {
      if (isInstance(error) && error.code === 'SESSION_REFERENCE_READ_FAILED') throw error;
      throw fail('READ_FAILED', `${what} answered unreadable data: ${describeValue(error)}`, error);
    }
  });
}

/** The entries a host array holds, as {@link presentEntries} finds them: `count`, and the `k`-th by `at(k)`. */
export interface PresentEntries<T> {
  readonly count: number;
  at(k: number): T;
}

/**
 * The entries a host array holds, in index order (SPEC §10.3). `length` is read once. A dense
 * array is walked by index; from its first hole on (`onHole` is called with that index) only the
 * indices it has are visited, so a sparse array with `length` 2³²−1 and three entries has a
 * `count` of 3 and costs three. `at(k)` reads the entry from the array each time it is called,
 * so a throwing getter meets the caller where it can be blamed; such an entry counts as present.
 */
export function presentEntries<T>(array: readonly T[], onHole?: (index: number) => void): PresentEntries<T> {
  const length = Number(array.length);
  for (let index = 0; index < length; index++) {
    if (isHole(array, index)) {
      onHole?.(index);
      const indices = ownIndices(array, length);
      return { count: indices.length, at: (k) => array[indices[k]!]! };
    }
  }
  return { count: length, at: (k) => array[k]! };
}

function isHole(array: readonly unknown[], index: number): boolean {
  try {
    return array[index] === undefined && !Object.hasOwn(array, index);
  } catch {
    return false;
  }
}

/**
 * Titles by session id of a `readTitleSnapshots` answer (SPEC §6.4, §10.1): `[sessionId, title]`
 * for each fulfilled row with a string `sessionId` and a string `value.title.title`, in row
 * order. A row that is malformed or cannot be read (a throwing getter, a revoked proxy) is left
 * out, so only its session falls back to its id; an answer that is not an array gives none.
 * Throws only when the answer itself cannot be read (a revoked proxy, a throwing `length`), which
 * `callHost` turns into `SESSION_REFERENCE_READ_FAILED` and discovery into no titles.
 * Proportional to the rows present (SPEC §10.3).
 */
export function readTitleRows(answer: unknown, failed?: Set<string>): Array<[sessionId: string, title: string]> {
  const titles: Array<[string, string]> = [];
  if (!Array.isArray(answer)) return titles;
  const rows = presentEntries(answer);
  for (let k = 0; k < rows.count; k++) {
    try {
      const { sessionId, status, value } = Object(rows.at(k)) as { sessionId?: unknown; status?: unknown; value?: unknown };
      const title: unknown = status === 'fulfilled' ? Object(Object(value).title).title : undefined;
      if (typeof sessionId === 'string' && typeof title === 'string') titles.push([sessionId, title]);
      else if (typeof sessionId === 'string' && status !== 'fulfilled') failed?.add(sessionId);
    } catch {
      // An unreadable row: its session keeps its id as label.
    }
  }
  return titles;
}
