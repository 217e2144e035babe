/**
 * The session-reference service: discovery, preparation and composition (SPEC §5–§7, §9.5).
 * @module
 */
import { checkSignal, raceAbort, throwIfAborted } from './abort.js';
import { cloneArgument, composePromptMessage, mapTextBlocks } from './compose.js';
import { resolveConfig, isPositiveSafeInteger, type ResolvedSessionReferenceConfig, type SessionReferenceConfig } from './config.js';
import { describeValue, fail, SessionReferenceError } from './errors.js';
import { formatSessionReferenceMention, parseSessionReferenceText, type SessionReference } from './mention.js';
import { projectSurface } from './projection.js';
import { buildHookContext, serializeReference, type ReferenceHead } from './render.js';
import { retainConversation } from './retention.js';
import { foldSurface } from './surface.js';
import type {
  ContentBlock,
  HookContext,
  SessionHeader,
  SessionQuery,
  SessionReferenceMetadataEntry,
  SessionSurface,
  TargetAgent,
  UserMessage,
} from './types.js';

/** Options of {@link createSessionReferences}. */
export interface SessionReferencesOptions {
  /** The host's session store (`ctx.sessionQuery`, SPEC §4.2). */
  sessionQuery: SessionQuery;
  /** Limits; see {@link SessionReferenceConfig} (SPEC §5). */
  config?: SessionReferenceConfig;
}

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

/** Result of `prepare` (SPEC §7.4). */
export interface PreparedSessionReferences {
  /** A deep copy of the input content. */
  content: ContentBlock[];
  /** The aggregated prompt-prefix context; absent when there are no references. */
  context?: HookContext;
}

/** The service returned by {@link createSessionReferences}. */
export interface SessionReferences {
  /** The validated configuration, defaults filled in. */
  readonly config: Readonly<ResolvedSessionReferenceConfig>;
  /**
   * Sessions the user may cite, for `@` autocomplete (SPEC §6): every session but `agent.id`,
   * filtered by a case-insensitive substring of id or cwd, ordered same cwd → no cwd → other cwd
   * (stable), the first `limit` (default `candidateLimit`) with their latest titles as labels.
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` (agent without string id,
   * non-string query, limit not a positive safe integer, bad signal), `SESSION_REFERENCE_READ_FAILED`
   * (`listSessions` failed or answered malformed records; cause kept), `SESSION_REFERENCE_CANCELLED`.
   */
  listCandidates(agent: TargetAgent, query?: string, limit?: number, signal?: AbortSignal): Promise<SessionCandidate[]>;
  /**
   * Reads, projects, bounds and renders the cited sessions (SPEC §7–§9). Atomic: any failure
   * rejects the whole call and no partial context is returned.
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT`, `SESSION_REFERENCE_INVALID_REFERENCE`,
   * `SESSION_REFERENCE_SELF_REFERENCE`, `SESSION_REFERENCE_TOO_MANY`, `SESSION_REFERENCE_READ_FAILED`,
   * `SESSION_REFERENCE_CANCELLED`, `SESSION_REFERENCE_BUDGET_EXCEEDED`.
   */
  prepare(
    agent: TargetAgent,
    content: ContentBlock[],
    references: Array<{ sessionId: string; label?: string }>,
    signal?: AbortSignal,
  ): Promise<PreparedSessionReferences>;
  /**
   * Parses mentions in every text block, prepares them and composes the message in one call: what
   * a host calls before `followup()`/`steer()` (SPEC §9.5).
   * @throws SessionReferenceError every code of `prepare`, plus `SESSION_REFERENCE_INVALID_ARGUMENT`
   * for a message that is not a user message with a content array or already carries an envelope.
   */
  referenceUserMessage(agent: TargetAgent, message: UserMessage, signal?: AbortSignal): Promise<UserMessage>;
}

/**
 * Creates the session-reference service over a host's `sessionQuery` (SPEC §5).
 * @example
 * const refs = createSessionReferences({ sessionQuery, config: { maxReferenceBytes: 32768 } });
 * const candidates = await refs.listCandidates(agent, 'schema');
 * const message = await refs.referenceUserMessage(agent, userMessage);
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` naming the key for a missing
 * or malformed `sessionQuery`, an unknown option or config key, or an invalid config value.
 */
export function createSessionReferences(options: SessionReferencesOptions): SessionReferences {
  const { sessionQuery, config } = checkOptions(options);
  const resolved = Object.freeze(resolveConfig(config));
  return Object.freeze({
    config: resolved,
    listCandidates: (agent: TargetAgent, query?: string, limit?: number, signal?: AbortSignal) =>
      listCandidates(sessionQuery, resolved, agent, query, limit, signal),
    prepare: (agent: TargetAgent, content: ContentBlock[], references: Array<{ sessionId: string; label?: string }>, signal?: AbortSignal) =>
      prepare(sessionQuery, resolved, agent, content, references, signal),
    referenceUserMessage: (agent: TargetAgent, message: UserMessage, signal?: AbortSignal) =>
      referenceUserMessage(sessionQuery, resolved, agent, message, signal),
  });
}

function checkOptions(options: unknown): SessionReferencesOptions {
  if (typeof options !== 'object' || options === null) {
    throw fail('SESSION_REFERENCE_INVALID_CONFIG', `options must be an object with a sessionQuery, got ${describeValue(options)}`);
  }
  for (const key of Object.keys(options)) {
    if (key !== 'sessionQuery' && key !== 'config') {
      throw fail('SESSION_REFERENCE_INVALID_CONFIG', `unknown option ${describeValue(key)}`);
    }
  }
  const { sessionQuery, config } = options as Record<string, unknown>;
  const query = sessionQuery as Record<string, unknown> | null | undefined;
  if (
    typeof query !== 'object' ||
    query === null ||
    typeof query.listSessions !== 'function' ||
    typeof query.readSurface !== 'function' ||
    (query.readTitleSnapshots !== undefined && typeof query.readTitleSnapshots !== 'function')
  ) {
    throw fail(
      'SESSION_REFERENCE_INVALID_CONFIG',
      `sessionQuery must provide listSessions() and readSurface() (and optionally readTitleSnapshots()), got ${describeValue(sessionQuery)}`,
    );
  }
  return { sessionQuery: sessionQuery as SessionQuery, config: config as SessionReferenceConfig | undefined };
}

// ---------------------------------------------------------------------------------------------
// Shared checks

function checkAgent(agent: unknown): TargetAgent {
  if (typeof agent !== 'object' || agent === null || typeof (agent as TargetAgent).id !== 'string') {
    throw fail('SESSION_REFERENCE_INVALID_ARGUMENT', `agent must be an object with a string id, got ${describeValue(agent)}`);
  }
  return agent as TargetAgent;
}

/** The agent's cwd (`agent.cwd ?? agent.session?.header?.cwd`, SPEC §4.6). */
function agentCwd(agent: TargetAgent): unknown {
  return agent.cwd ?? agent.session?.header?.cwd;
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}

/**
 * Calls the host, turning a synchronous throw or a rejection into `SESSION_REFERENCE_READ_FAILED`
 * (cause kept) and an abort into `SESSION_REFERENCE_CANCELLED`.
 */
function callHost<T>(call: () => Promise<T>, signal: AbortSignal | undefined, what: string): Promise<T> {
  let promise: Promise<T>;
  try {
    promise = Promise.resolve(call());
  } catch (error) {
    promise = Promise.reject(error);
  }
  return raceAbort(promise, signal).catch((error: unknown) => {
    throwIfAborted(signal);
    if (error instanceof SessionReferenceError && error.code === 'SESSION_REFERENCE_CANCELLED') throw error;
    throw fail('SESSION_REFERENCE_READ_FAILED', `${what} failed: ${describeValue(errorMessage(error))}`, error);
  });
}

function errorMessage(error: unknown): unknown {
  return error instanceof Error ? error.message : error;
}

// ---------------------------------------------------------------------------------------------
// listCandidates (SPEC §6)

async function listCandidates(
  sessionQuery: SessionQuery,
  config: ResolvedSessionReferenceConfig,
  agentInput: unknown,
  query: unknown,
  limitInput: unknown,
  signalInput: unknown,
): Promise<SessionCandidate[]> {
  const agent = checkAgent(agentInput);
  if (query !== undefined && query !== null && typeof query !== 'string') {
    throw fail('SESSION_REFERENCE_INVALID_ARGUMENT', `query must be a string, got ${describeValue(query)}`);
  }
  const limit = limitInput ?? config.candidateLimit;
  if (!isPositiveSafeInteger(limit)) {
    throw fail('SESSION_REFERENCE_INVALID_ARGUMENT', `limit must be a positive safe integer, got ${describeValue(limitInput)}`);
  }
  const signal = checkSignal(signalInput);
  throwIfAborted(signal);

  const records = await callHost(() => sessionQuery.listSessions(signal), signal, 'sessionQuery.listSessions()');
  const selected = selectCandidates(records, agent, query ?? '', limit);
  const titles = await readTitles(sessionQuery, selected.map((header) => header.id), signal);
  throwIfAborted(signal);
  return selected.map((header) => {
    const label = titles.get(header.id) ?? header.id;
    const candidate: SessionCandidate = {
      sessionId: header.id,
      label,
      createdAt: header.createdAt,
      mention: formatSessionReferenceMention({ sessionId: header.id, label }),
    };
    if (isNonEmptyString(header.cwd)) candidate.cwd = header.cwd;
    return candidate;
  });
}

/** Filter, three cwd groups (stable), first `limit` (SPEC §6.1–§6.4). */
function selectCandidates(records: unknown, agent: TargetAgent, query: string, limit: number): SessionHeader[] {
  if (!Array.isArray(records)) {
    throw fail('SESSION_REFERENCE_READ_FAILED', `sessionQuery.listSessions() must resolve to an array, got ${describeValue(records)}`);
  }
  const needle = query.toLowerCase();
  const cwd = agentCwd(agent);
  const ownCwd = isNonEmptyString(cwd) ? cwd : undefined;
  const sameCwd: SessionHeader[] = [];
  const noCwd: SessionHeader[] = [];
  const otherCwd: SessionHeader[] = [];
  // Array.from, not forEach on the array itself: a hole in a sparse array is a (malformed) record too.
  Array.from(records as unknown[]).forEach((record: unknown, index) => {
    const header = (record as { header?: unknown } | null)?.header as SessionHeader | undefined;
    if (typeof header !== 'object' || header === null || typeof header.id !== 'string') {
      throw fail('SESSION_REFERENCE_READ_FAILED', `sessionQuery.listSessions() record ${index} has no header with a string id: ${describeValue(record)}`);
    }
    if (header.id === agent.id) return;
    const headerCwd = header.cwd;
    if (
      needle !== '' &&
      !header.id.toLowerCase().includes(needle) &&
      !(typeof headerCwd === 'string' && headerCwd.toLowerCase().includes(needle))
    ) {
      return;
    }
    if (ownCwd !== undefined && headerCwd === ownCwd) sameCwd.push(header);
    else if (headerCwd === undefined || headerCwd === null || headerCwd === '') noCwd.push(header);
    else otherCwd.push(header);
  });
  return sameCwd.concat(noCwd, otherCwd).slice(0, limit);
}

/** Titles with non-whitespace content by session id; empty when the read fails or is unsupported (SPEC §6.4). */
async function readTitles(sessionQuery: SessionQuery, ids: string[], signal: AbortSignal | undefined): Promise<Map<string, string>> {
  const titles = new Map<string, string>();
  if (ids.length === 0 || typeof sessionQuery.readTitleSnapshots !== 'function') return titles;
  let rows: unknown;
  try {
    rows = await callHost(() => sessionQuery.readTitleSnapshots!(ids, signal), signal, 'sessionQuery.readTitleSnapshots()');
  } catch (error) {
    if ((error as SessionReferenceError).code === 'SESSION_REFERENCE_CANCELLED') throw error;
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

// ---------------------------------------------------------------------------------------------
// prepare (SPEC §7–§9)

async function prepare(
  sessionQuery: SessionQuery,
  config: ResolvedSessionReferenceConfig,
  agentInput: unknown,
  contentInput: unknown,
  referencesInput: unknown,
  signalInput: unknown,
): Promise<PreparedSessionReferences> {
  const agent = checkAgent(agentInput);
  if (!Array.isArray(contentInput)) {
    throw fail('SESSION_REFERENCE_INVALID_ARGUMENT', `content must be an array of content blocks, got ${describeValue(contentInput)}`);
  }
  const sources = normalizeReferences(referencesInput, agent.id, config.maxReferences);
  const signal = checkSignal(signalInput);
  const content = cloneArgument(contentInput as ContentBlock[], 'content');
  throwIfAborted(signal);
  if (sources.length === 0) return { content };

  const surfaces = await raceAbort(
    Promise.all(sources.map((source) => readSnapshot(sessionQuery, source.sessionId, signal))),
    signal,
  );
  throwIfAborted(signal);
  const serialized: string[] = [];
  const metadata: SessionReferenceMetadataEntry[] = [];
  sources.forEach((source, i) => {
    const reference = prepareReference(source, surfaces[i]!, config.maxReferenceBytes);
    serialized.push(reference.serialized);
    metadata.push(reference.metadata);
  });
  return { content, context: buildHookContext(serialized, metadata) };
}

/**
 * Validates, rejects self-references, deduplicates by id keeping the first mention and its label,
 * and enforces `maxReferences` (SPEC §7.1).
 */
function normalizeReferences(references: unknown, agentId: string, maxReferences: number): SessionReference[] {
  if (!Array.isArray(references)) {
    throw fail('SESSION_REFERENCE_INVALID_ARGUMENT', `references must be an array, got ${describeValue(references)}`);
  }
  // Array.from, not map: a hole in a sparse array is an entry too (undefined → INVALID_REFERENCE).
  const checked = Array.from(references, (reference: unknown, index) => {
    if (typeof reference !== 'object' || reference === null) {
      throw fail('SESSION_REFERENCE_INVALID_REFERENCE', `references[${index}] must be an object, got ${describeValue(reference)}`);
    }
    const { sessionId, label } = reference as Record<string, unknown>;
    if (typeof sessionId !== 'string') {
      throw fail('SESSION_REFERENCE_INVALID_REFERENCE', `references[${index}].sessionId must be a string, got ${describeValue(sessionId)}`);
    }
    if (label !== undefined && typeof label !== 'string') {
      throw fail('SESSION_REFERENCE_INVALID_REFERENCE', `references[${index}].label must be a string, got ${describeValue(label)}`);
    }
    return { sessionId, label: label ?? sessionId };
  });
  const self = checked.find((reference) => reference.sessionId === agentId);
  if (self) {
    throw fail('SESSION_REFERENCE_SELF_REFERENCE', `a session cannot reference itself: ${describeValue(agentId)}`);
  }
  const distinct = new Map<string, SessionReference>();
  for (const reference of checked) if (!distinct.has(reference.sessionId)) distinct.set(reference.sessionId, reference);
  if (distinct.size > maxReferences) {
    throw fail('SESSION_REFERENCE_TOO_MANY', `${distinct.size} distinct sessions referenced; maxReferences is ${maxReferences}`);
  }
  return [...distinct.values()];
}

/** One `readSurface` call, checked for shape (SPEC §7.2). */
async function readSnapshot(sessionQuery: SessionQuery, sessionId: string, signal: AbortSignal | undefined): Promise<SessionSurface> {
  const what = `sessionQuery.readSurface(${describeValue(sessionId)})`;
  const surface = await callHost(() => sessionQuery.readSurface(sessionId, signal), signal, what);
  const seq = (surface as SessionSurface | null)?.capturedThroughSeq;
  if (
    typeof surface !== 'object' ||
    surface === null ||
    !Array.isArray(surface.events) ||
    !(seq === null || (typeof seq === 'number' && Number.isFinite(seq)))
  ) {
    throw fail(
      'SESSION_REFERENCE_READ_FAILED',
      `${what} returned a malformed snapshot (need an events array and a finite or null capturedThroughSeq): ${describeValue(surface)}`,
    );
  }
  return surface;
}

function prepareReference(
  source: SessionReference,
  surface: SessionSurface,
  budget: number,
): { serialized: string; metadata: SessionReferenceMetadataEntry } {
  const cwd = (surface.session as SessionHeader | null | undefined)?.cwd;
  const head: ReferenceHead = { sessionId: source.sessionId, label: source.label, cwd: isNonEmptyString(cwd) ? cwd : null };
  const items = projectSurface(foldSurface(surface.events));
  const retention = retainConversation(head, items, budget);
  return {
    serialized: serializeReference(head, retention.conversation),
    metadata: {
      sessionId: source.sessionId,
      label: source.label,
      capturedThroughSeq: surface.capturedThroughSeq,
      compacted: items.some((item) => item.checkpoint === true),
      originalMessages: retention.originalMessages,
      retainedMessages: retention.retainedMessages,
      omittedMessages: retention.omittedMessages,
      omittedBytes: retention.omittedBytes,
      truncated: retention.omittedMessages > 0 || retention.omittedBytes > 0,
      serializedBytes: retention.serializedBytes,
      budgetBytes: budget,
    },
  };
}

// ---------------------------------------------------------------------------------------------
// referenceUserMessage (SPEC §9.5)

async function referenceUserMessage(
  sessionQuery: SessionQuery,
  config: ResolvedSessionReferenceConfig,
  agent: unknown,
  message: unknown,
  signal: unknown,
): Promise<UserMessage> {
  checkAgent(agent);
  const input = message as UserMessage;
  if (typeof message !== 'object' || message === null || !Array.isArray(input.content)) {
    throw fail('SESSION_REFERENCE_INVALID_ARGUMENT', `message must be a user message with a content array, got ${describeValue(message)}`);
  }
  if (input.envelope !== undefined) {
    throw fail('SESSION_REFERENCE_INVALID_ARGUMENT', `message ${describeValue(input.id)} already carries an envelope; a prompt is composed once`);
  }
  const references: SessionReference[] = [];
  const readable = mapTextBlocks(input.content, (text) => {
    const parsed = parseSessionReferenceText(text);
    for (const reference of parsed.references) references.push(reference);
    return parsed.text;
  });
  const prepared = await prepare(sessionQuery, config, agent, readable, references, signal);
  return composePromptMessage({ ...input, content: prepared.content }, prepared.context);
}
