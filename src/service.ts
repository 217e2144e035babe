/**
 * The session-reference service: preparation and composition (SPEC §5, §7–§9.5); discovery lives
 * in `candidates.ts`.
 * @module
 */
import { checkSignal, throwIfAborted } from './abort.js';
import { listCandidates, type SessionCandidate } from './candidates.js';
import { copyCallerData, readCallerArray, readCallerFields, readCallerOptions } from './caller-data.js';
import { composeMessage, readMessage } from './compose.js';
import { isPositiveSafeInteger, resolveConfig, type ResolvedSessionReferenceConfig, type SessionReferenceConfig } from './config.js';
import { argumentError, check, describeValue } from './errors.js';
import { callHost, isNonEmptyString, readAgent } from './host.js';
import { parsePlacedReferences, type SessionReference } from './mention.js';
import { projectSurface, type ConversationItem } from './projection.js';
import { buildHookContext, serializeReference } from './render.js';
import { retainConversation } from './retention.js';
import { foldSurface } from './surface.js';
import * as kit from './search/kit.js';
import type { SearchState, SessionSearchHit } from './search/search.js';
import type { ContentBlock, HookContext, PromptEnvelopeMention, SessionQuery, SessionReferenceMetadataEntry, TargetAgent, UserMessage } from './types.js';

export type { SessionCandidate } from './candidates.js';
export type { SessionSearchHit, SessionSearchSnippet } from './search/search.js';

/** The search chunk (SPEC §16.5), imported on the first `searchSessions` or `exportSearchIndex`. */
let searchChunk: Promise<typeof import('./search/search.js')> | undefined;
const loadSearch = () =>
  (searchChunk ??= import('./search/search.js').then((chunk) => {
    chunk.useRoot(kit);
    return chunk;
  }));

/** Options of {@link createSessionReferences}. */
export interface SessionReferencesOptions {
  /** The host's session store (`ctx.sessionQuery`, SPEC §4.2). */
  sessionQuery: SessionQuery;
  /** Limits; see {@link SessionReferenceConfig} (SPEC §5). */
  config?: SessionReferenceConfig | undefined;
}

/** Result of `prepare` (SPEC §7.4). */
export interface PreparedSessionReferences {
  /** A deep copy of the input content. */
  content: ContentBlock[];
  /** The aggregated prompt-prefix context; absent when there are no references. */
  context?: HookContext | undefined;
}

/** The service returned by {@link createSessionReferences}. */
export interface SessionReferences {
  /** The validated configuration, defaults filled in. */
  readonly config: Readonly<ResolvedSessionReferenceConfig>;
  /**
   * Sessions the user may cite, for `@` autocomplete (SPEC §6): every session but `agent.id`,
   * filtered by a case-insensitive substring of id or cwd (with `matchTitles`, also of the label,
   * titles read in batches in rank order, §6.7), ordered same cwd → no cwd → other cwd (stable),
   * the first `limit` (default `candidateLimit`), labelled with their latest titles cleaned as
   * §6.6 says (one line, at most 120 code points) or their ids.
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` (agent without string id,
   * non-string query, limit not a positive safe integer, bad signal), `SESSION_REFERENCE_READ_FAILED`
   * (`listSessions` failed or answered malformed records; cause kept), `SESSION_REFERENCE_CANCELLED`.
   */
  listCandidates(agent: TargetAgent, query?: string, limit?: number, signal?: AbortSignal): Promise<SessionCandidate[]>;
  /**
   * Reads, projects, bounds and renders the cited sessions (SPEC §7–§9). Atomic: any failure
   * rejects the whole call and no partial context is returned. The arguments are read once, before
   * the call returns its promise, into private plain copies (SPEC §10.4): framework state works, a
   * sparse `content` or `references` is the entries it holds, and the returned `content` is that
   * copy of `content`. A throwing getter or revoked proxy among them is `INVALID_ARGUMENT` naming
   * the path (`content[2].text`).
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT`, `SESSION_REFERENCE_INVALID_REFERENCE`,
   * `SESSION_REFERENCE_SELF_REFERENCE`, `SESSION_REFERENCE_TOO_MANY`, `SESSION_REFERENCE_READ_FAILED`,
   * `SESSION_REFERENCE_CANCELLED`, `SESSION_REFERENCE_BUDGET_EXCEEDED`.
   */
  prepare(
    agent: TargetAgent,
    content: ContentBlock[],
    references: Array<{ sessionId: string; label?: string | undefined }>,
    signal?: AbortSignal,
  ): Promise<PreparedSessionReferences>;
  /**
   * Parses mentions in every text block, prepares them and composes the message in one call: what
   * a host calls before `followup()`/`steer()` (SPEC §9.5). The envelope's `mentions` say where
   * each mention or bare URI stands in the readable content, in the order typed (SPEC §9.4), found
   * in the same pass that writes the readable text. The agent and message are read once, before
   * the call returns its promise, into private plain copies (SPEC §10.4), as `prepare` says.
   * @throws SessionReferenceError every code of `prepare`, plus `SESSION_REFERENCE_INVALID_ARGUMENT`
   * for a message that is not a user message with a content array or already carries an envelope.
   */
  referenceUserMessage(agent: TargetAgent, message: UserMessage, signal?: AbortSignal): Promise<UserMessage>;
  /**
   * Sessions found by what was said in them (SPEC §16): every word of `query` (AND) matched by
   * prefix, or with one edit from 5 code points on, against each session's projected conversation
   * (never tool output, reasoning, context or plugin messages), latest title (boosted) and cwd;
   * BM25 ranked (SQLite FTS5; one-edit matches weighted below exact ones), ties in §6.3's groups
   * then listing order; the agent's own session never a hit.
   * The first call loads the engine (SQLite's WebAssembly build: in Cloudflare workerd call
   * `provideSqliteWasm` first) and builds the index (or starts from `config.searchIndex`);
   * later calls list once and re-read only sessions added or changed (file identity, else
   * `capturedThroughSeq`). An empty query gives `listCandidates`' rows with `score: 0`.
   * @param options `limit` (default `candidateLimit`), `signal`.
   * @returns hits: the §6.5 row, `score` and up to 3 `snippets` (≤ 240 code points, cleaned as
   * §6.6, untrusted: render as text) with `highlights` (UTF-16 `[start, end)` of whole matched words).
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` (agent, query, options),
   * `SESSION_REFERENCE_READ_FAILED` (host failures; cause kept), `SESSION_REFERENCE_CANCELLED`,
   * `SESSION_REFERENCE_INVALID_CONFIG` where WebAssembly cannot run (a CSP without
   * `'wasm-unsafe-eval'`, workerd without `provideSqliteWasm`): the app's setup, not its arguments.
   */
  searchSessions(agent: TargetAgent, query: string, options?: { limit?: number | undefined; signal?: AbortSignal | undefined }): Promise<SessionSearchHit[]>;
  /**
   * The search index as versioned, checksummed bytes, to pass back as `config.searchIndex` in a
   * later run (SPEC §16.4). Before any search: the `searchIndex` given (if usable) or an empty index.
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` where WebAssembly cannot run (as `searchSessions`).
   */
  exportSearchIndex(): Promise<Uint8Array>;
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
  // One try around everything: a throwing getter or a revoked proxy among the options is still
  // a SessionReferenceError (INVALID_CONFIG, cause kept). The methods themselves never throw here.
  try {
    // Read once (SPEC §10.4); null, undefined and primitives read as having no sessionQuery.
    const { sessionQuery, config, ...rest } = (readCallerOptions(options, 'options', 'INVALID_CONFIG') ?? {}) as Partial<SessionReferencesOptions>;
    const q = sessionQuery as unknown as Record<string, unknown> | undefined;
    check(
      typeof q?.listSessions === 'function' &&
        typeof q.readSurface === 'function' &&
        (q.readTitleSnapshots === undefined || typeof q.readTitleSnapshots === 'function'),
      'INVALID_CONFIG',
      'sessionQuery must have listSessions() and readSurface()',
      sessionQuery,
    );
    const [unknown] = Object.keys(rest);
    check(unknown === undefined, 'INVALID_CONFIG', 'unknown option', unknown);
    const resolved = Object.freeze(resolveConfig(config));
    const search: SearchState = { sessionQuery: sessionQuery!, config: resolved, queue: Promise.resolve() };
    return Object.freeze({
      config: resolved,
      // Every method reads its arguments once, before its first await (SPEC §10.4).
      listCandidates: guarded((agent: unknown, query: unknown, limit: unknown, signal: unknown) =>
        listCandidates(sessionQuery!, resolved, agent, query, limit, signal),
      ),
      prepare: guarded((agent: unknown, content: unknown, references: unknown, signal: unknown) => {
        const agentId = readAgent(agent).id;
        const copied = copyCallerData(content, 'content');
        check(Array.isArray(copied), 'INVALID_ARGUMENT', 'content must be an array', copied);
        return prepare(sessionQuery!, resolved, agentId, copied, readReferences(references), checkSignal(signal));
      }),
      referenceUserMessage: guarded(async (agent: unknown, messageInput: unknown, signalInput: unknown) => {
        const agentId = readAgent(agent).id;
        const message = readMessage(messageInput);
        const signal = checkSignal(signalInput);
        const { content: readable, references, mentions } = parseContentMentions(message.content);
        const prepared = await prepare(sessionQuery!, resolved, agentId, readable, references, signal);
        return composeMessage({ ...message, content: prepared.content }, prepared.context, mentions);
      }),
      searchSessions: guarded(async (agent: unknown, query: unknown, options: unknown) => {
        const target = readAgent(agent);
        check(options === undefined || (typeof options === 'object' && options !== null), 'INVALID_ARGUMENT', 'options must be an object { limit?, signal? }', options);
        const read = readCallerOptions(options, 'options') ?? {};
        return (await loadSearch()).searchSessions(search, target, query, read);
      }),
      exportSearchIndex: guarded(async () => (await loadSearch()).exportSearchIndex(search)),
    });
  } catch (error) {
    throw argumentError(error, 'INVALID_CONFIG');
  }
}

/**
 * The mentions of every text block (SPEC §3.2): each text block's text becomes its readable form
 * (`@label`), other entries — null and primitives included — are kept as they are (SPEC §4:
 * permissive); the references in order of appearance, duplicates included; and where each
 * `@label` stands in the readable content (SPEC §9.4 `envelope.mentions`), found in the same pass.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_REFERENCE` for a malformed mention.
 */
export function parseContentMentions(content: readonly ContentBlock[]): {
  content: ContentBlock[];
  references: SessionReference[];
  mentions: PromptEnvelopeMention[];
} {
  const references: SessionReference[] = [];
  const mentions: PromptEnvelopeMention[] = [];
  const readable = content.map((block, index) => {
    if (block?.type !== 'text' || typeof block.text !== 'string') return block;
    const parsed = parsePlacedReferences(block.text);
    for (const { sessionId, label, start, end } of parsed.references) {
      references.push({ sessionId, label });
      mentions.push({ block: index, start, end, sessionId });
    }
    return { ...block, text: parsed.text };
  });
  return { content: readable, references, mentions };
}

/**
 * Wraps a service method so that nothing but a `SessionReferenceError` escapes (SPEC §10): any
 * other error becomes `SESSION_REFERENCE_INVALID_ARGUMENT` with the original error as `cause`; a
 * synchronous throw becomes a rejection. `run` is called at once, so what it does before its
 * first await (reading the arguments, SPEC §10.4) happens before the method returns its promise.
 */
export function guarded<A extends unknown[], T>(run: (...args: A) => Promise<T>): (...args: A) => Promise<T> {
  return async (...args) => {
    try {
      return await run(...args);
    } catch (error) {
      throw argumentError(error);
    }
  };
}

/**
 * `prepare` of SPEC §7 over arguments already read (private copies, SPEC §10.4): validate, read
 * every source once in parallel, project, bound, render. `content` is the copy returned (§7.4).
 */
async function prepare(
  sessionQuery: SessionQuery,
  config: ResolvedSessionReferenceConfig,
  agentId: string,
  content: ContentBlock[],
  referencesInput: unknown,
  signal: AbortSignal | undefined,
): Promise<PreparedSessionReferences> {
  const sources = normalizeReferences(referencesInput, agentId, config.maxReferences);
  throwIfAborted(signal);
  if (sources.length === 0) return { content };
  // Each read races the signal itself (callHost), so an abort rejects while reads are pending.
  const snapshots = await Promise.all(sources.map((source) => readSnapshot(sessionQuery, source.sessionId, config.maxReferenceBytes, signal)));
  throwIfAborted(signal);
  const prepared = sources.map((source, i) => prepareReference(source, snapshots[i]!, config.maxReferenceBytes));
  return { content, context: buildHookContext(prepared) };
}

/**
 * The caller's references read once (SPEC §10.4): the entries the array holds (a hole is not an
 * entry), of each only `sessionId` and `label`, each read once. Not an array: its own fields, or
 * the value itself, for {@link normalizeReferences} to refuse and describe.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` naming a field whose read throws.
 */
export function readReferences(references: unknown): unknown {
  const entries = readCallerArray(references, 'references');
  return entries?.map((entry, index) =>
    typeof entry === 'object' && entry !== null ? readCallerFields(entry, ['sessionId', 'label'], `references[${index}]`) : entry,
  ) ?? (readCallerOptions(references, 'references') ?? references);
}

/**
 * Validates, rejects self-references, deduplicates by id keeping the first mention and its label,
 * and enforces `maxReferences` (SPEC §7.1).
 */
export function normalizeReferences(references: unknown, agentId: string, maxReferences: number): SessionReference[] {
  check(Array.isArray(references), 'INVALID_ARGUMENT', 'references must be an array', references);
  // Every entry is validated before any other check (SPEC §7.1 order).
  const distinct = new Map<string, SessionReference>();
  references.forEach((reference: unknown, index) => {
    const { sessionId, label = sessionId } = (reference ?? 0) as Record<string, unknown>;
    check(
      typeof sessionId === 'string' && typeof label === 'string',
      'INVALID_REFERENCE',
      `references[${index}] must be { sessionId: string, label?: string }`,
      reference,
    );
    if (!distinct.has(sessionId)) distinct.set(sessionId, { sessionId, label });
  });
  check(!distinct.has(agentId), 'SELF_REFERENCE', 'a session cannot reference itself', agentId);
  check(distinct.size <= maxReferences, 'TOO_MANY', `at most ${maxReferences} distinct sessions`, distinct.size);
  return [...distinct.values()];
}

/** What one source's snapshot contributes, read out of the host's answer (SPEC §7.2). */
export interface Snapshot {
  cwd: string | null;
  capturedThroughSeq: number | null;
  items: ConversationItem[];
  /** Messages the store left out, all of which retention drops (`SessionSurface.withheld`). */
  withheld: { messages: number; bytes: number } | undefined;
}

/**
 * One `readSurface` call (SPEC §7.2), or `readRetainedSurface` at the reference budget when the
 * query has it (SPEC §11.2.2): the answer checked for shape, then its cwd, seq and projected
 * conversation read out of it once, inside `callHost`, so anything wrong in there is
 * `SESSION_REFERENCE_READ_FAILED` (SPEC §10.1).
 */
export function readSnapshot(sessionQuery: SessionQuery, sessionId: string, budget: number, signal: AbortSignal | undefined): Promise<Snapshot> {
  // A query with `readRetainedSurface` (this package's stores) reads only the texts retention can
  // keep at `budget` (SPEC §11.2.2). Messages name `readSurface`, of which it is the budget-aware form.
  const what = `sessionQuery.readSurface(${describeValue(sessionId)})`;
  // A method, not a key: a host object may carry `readRetainedSurface: undefined` (SPEC §4.2's optional methods).
  const read = () => (typeof sessionQuery.readRetainedSurface === 'function' ? sessionQuery.readRetainedSurface(sessionId, budget, signal) : sessionQuery.readSurface(sessionId, signal));
  return callHost(read, signal, what, (surface) => {
    // Object(): null and primitives read as a snapshot without fields.
    const { session, capturedThroughSeq, events, withheld } = Object(surface) as Record<string, unknown>;
    const { messages, bytes } = Object(withheld) as Record<string, unknown>;
    check(
      Array.isArray(events) &&
        (capturedThroughSeq === null || Number.isFinite(capturedThroughSeq)) &&
        // Each withheld message has a text: both counts are positive.
        (withheld === undefined || (isPositiveSafeInteger(messages) && isPositiveSafeInteger(bytes))),
      'READ_FAILED',
      `${what} must resolve to { events, capturedThroughSeq }`,
      surface,
    );
    const cwd: unknown = Object(session).cwd;
    return {
      cwd: isNonEmptyString(cwd) ? cwd : null,
      capturedThroughSeq: capturedThroughSeq as number | null,
      items: projectSurface(foldSurface(events)),
      withheld: (withheld && { messages, bytes }) as Snapshot['withheld'],
    };
  });
}

/** Bounds and serializes one source; its metadata entry has the keys in SPEC §8.4 order. */
function prepareReference(source: SessionReference, { cwd, capturedThroughSeq, items, withheld }: Snapshot, budget: number) {
  const head = { ...source, cwd };
  // `counts` is originalMessages, retainedMessages, omittedMessages, omittedBytes, in that order
  // (service.test.ts pins the key order of the metadata entry). Withheld messages are older than
  // every item but checkpoints, and never checkpoints themselves, so retention over `items` keeps
  // what it would keep over them all: they only add to what is dropped.
  const { conversation, serializedBytes, ...counts } = retainConversation(head, items, budget, withheld);
  const metadata: SessionReferenceMetadataEntry = {
    ...source, // sessionId, label
    capturedThroughSeq,
    compacted: items.some((item) => item.checkpoint),
    ...counts,
    truncated: counts.omittedMessages + counts.omittedBytes > 0,
    serializedBytes,
    budgetBytes: budget,
  };
  return { serialized: serializeReference(head, conversation), metadata };
}
