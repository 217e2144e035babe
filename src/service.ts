/**
 * The session-reference service: preparation and composition (SPEC §5, §7–§9.5); discovery lives
 * in `candidates.ts`.
 * @module
 */
import { checkSignal, raceAbort, throwIfAborted } from './abort.js';
import { listCandidates, type SessionCandidate } from './candidates.js';
import { checkMessage, cloneArgument, composePromptMessage, mapTextBlocks } from './compose.js';
import { resolveConfig, type ResolvedSessionReferenceConfig, type SessionReferenceConfig } from './config.js';
import { check, describeValue, fail, SessionReferenceError } from './errors.js';
import { callHost, checkAgent, isNonEmptyString } from './host.js';
import { parseSessionReferenceText, type SessionReference } from './mention.js';
import { projectSurface } from './projection.js';
import { buildHookContext, serializeReference } from './render.js';
import { retainConversation } from './retention.js';
import { foldSurface } from './surface.js';
import type { ContentBlock, HookContext, SessionQuery, SessionReferenceMetadataEntry, SessionSurface, TargetAgent, UserMessage } from './types.js';

export type { SessionCandidate } from './candidates.js';

/** Options of {@link createSessionReferences}. */
export interface SessionReferencesOptions {
  /** The host's session store (`ctx.sessionQuery`, SPEC §4.2). */
  sessionQuery: SessionQuery;
  /** Limits; see {@link SessionReferenceConfig} (SPEC §5). */
  config?: SessionReferenceConfig;
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
  check(typeof options === 'object' && options !== null, 'SESSION_REFERENCE_INVALID_CONFIG', 'options must be an object with a sessionQuery', options);
  const { sessionQuery: query, config, ...rest } = options;
  const [unknown] = Object.keys(rest);
  check(unknown === undefined, 'SESSION_REFERENCE_INVALID_CONFIG', 'unknown option', unknown);
  const q = query as unknown as Record<string, unknown> | null;
  check(
    typeof q === 'object' &&
      q !== null &&
      typeof q.listSessions === 'function' &&
      typeof q.readSurface === 'function' &&
      (q.readTitleSnapshots === undefined || typeof q.readTitleSnapshots === 'function'),
    'SESSION_REFERENCE_INVALID_CONFIG',
    'sessionQuery must provide listSessions() and readSurface() (readTitleSnapshots() optional)',
    query,
  );
  const resolved = Object.freeze(resolveConfig(config));
  const prepareWith = (agent: TargetAgent, content: ContentBlock[], references: Array<{ sessionId: string; label?: string }>, signal?: AbortSignal) =>
    prepare(query, resolved, agent, content, references, signal);
  return Object.freeze({
    config: resolved,
    listCandidates: (agent: TargetAgent, text?: string, limit?: number, signal?: AbortSignal) =>
      guarded(() => listCandidates(query, resolved.candidateLimit, agent, text, limit, signal)),
    prepare: (agent: TargetAgent, content: ContentBlock[], references: Array<{ sessionId: string; label?: string }>, signal?: AbortSignal) =>
      guarded(() => prepareWith(agent, content, references, signal)),
    referenceUserMessage: (agent: TargetAgent, message: UserMessage, signal?: AbortSignal) => guarded(async () => {
      checkAgent(agent);
      checkMessage(message);
      const references: SessionReference[] = [];
      const readable = mapTextBlocks(message.content, (text) => {
        const parsed = parseSessionReferenceText(text);
        for (const reference of parsed.references) references.push(reference);
        return parsed.text;
      });
      const prepared = await prepareWith(agent, readable, references, signal);
      return composePromptMessage({ ...message, content: prepared.content }, prepared.context);
    }),
  });
}

/**
 * Runs a service method so that nothing but a `SessionReferenceError` escapes (SPEC §10): a
 * hostile argument (a throwing getter, a revoked proxy) becomes `SESSION_REFERENCE_INVALID_ARGUMENT`
 * with the original error as `cause`; a synchronous throw becomes a rejection.
 */
async function guarded<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof SessionReferenceError) throw error;
    throw fail('SESSION_REFERENCE_INVALID_ARGUMENT', `an argument could not be read: ${describeValue(error instanceof Error ? error.message : error)}`, error);
  }
}

/** `prepare` of SPEC §7: validate, read every source once in parallel, project, bound, render. */
async function prepare(
  sessionQuery: SessionQuery,
  config: ResolvedSessionReferenceConfig,
  agent: unknown,
  contentInput: unknown,
  referencesInput: unknown,
  signalInput: unknown,
): Promise<PreparedSessionReferences> {
  const agentId = checkAgent(agent).id;
  check(Array.isArray(contentInput), 'SESSION_REFERENCE_INVALID_ARGUMENT', 'content must be an array of content blocks', contentInput);
  const sources = normalizeReferences(referencesInput, agentId, config.maxReferences);
  const signal = checkSignal(signalInput);
  const content = cloneArgument(contentInput as ContentBlock[], 'content');
  throwIfAborted(signal);
  if (sources.length === 0) return { content };
  const surfaces = await raceAbort(Promise.all(sources.map((source) => readSnapshot(sessionQuery, source.sessionId, signal))), signal);
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
 * and enforces `maxReferences` (SPEC §7.1). A hole in a sparse array is an (invalid) entry too.
 */
function normalizeReferences(references: unknown, agentId: string, maxReferences: number): SessionReference[] {
  check(Array.isArray(references), 'SESSION_REFERENCE_INVALID_ARGUMENT', 'references must be an array', references);
  const checked = Array.from(references as unknown[], (reference, index) => {
    const { sessionId, label } = (reference ?? 0) as Record<string, unknown>;
    const what = `references[${index}]`;
    check(typeof reference === 'object' && reference !== null, 'SESSION_REFERENCE_INVALID_REFERENCE', `${what} must be an object`, reference);
    check(typeof sessionId === 'string', 'SESSION_REFERENCE_INVALID_REFERENCE', `${what}.sessionId must be a string`, sessionId);
    check(label === undefined || typeof label === 'string', 'SESSION_REFERENCE_INVALID_REFERENCE', `${what}.label must be a string`, label);
    return { sessionId, label: label ?? sessionId };
  });
  if (checked.some((reference) => reference.sessionId === agentId)) {
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
  check(
    Array.isArray((surface as SessionSurface | null)?.events) && (seq === null || Number.isFinite(seq)),
    'SESSION_REFERENCE_READ_FAILED',
    `${what} must resolve to { events: [], capturedThroughSeq: finite number | null }`,
    surface,
  );
  return surface;
}

function prepareReference(source: SessionReference, surface: SessionSurface, budget: number) {
  const cwd = (surface.session as { cwd?: unknown } | null | undefined)?.cwd;
  const head = { ...source, cwd: isNonEmptyString(cwd) ? cwd : null };
  const items = projectSurface(foldSurface(surface.events));
  const kept = retainConversation(head, items, budget);
  const metadata: SessionReferenceMetadataEntry = {
    sessionId: source.sessionId,
    label: source.label,
    capturedThroughSeq: surface.capturedThroughSeq,
    compacted: items.some((item) => item.checkpoint === true),
    originalMessages: kept.originalMessages,
    retainedMessages: kept.retainedMessages,
    omittedMessages: kept.omittedMessages,
    omittedBytes: kept.omittedBytes,
    truncated: kept.omittedMessages > 0 || kept.omittedBytes > 0,
    serializedBytes: kept.serializedBytes,
    budgetBytes: budget,
  };
  return { serialized: serializeReference(head, kept.conversation), metadata };
}
