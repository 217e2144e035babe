/**
 * The dsh host plugin: `ctx.sessionReferenceResolver` and the `agent/pre-step` rewrite
 * (SPEC §14.2–§14.3), a thin layer over {@link createSessionReferences}.
 * @module
 */
import type { Context } from '@deepseek-ai/cordis';
import { createUserMessage, freezeMessage } from '@deepseek-ai/dsh-llm';
import { Remote, TypertRemoteService } from '@deepseek-ai/dsh-typert-protocol';
import type { SessionCandidate } from '../candidates.js';
import { resolveConfig, type ResolvedSessionReferenceConfig, type SessionReferenceConfig } from '../config.js';
import { copyCallerData, readCallerArray, readCallerFields, readCallerOptions } from '../caller-data.js';
import { argumentError, check, describeValue, fail, isInstance, type SessionReferenceError } from '../errors.js';
import { readAgent, type AgentCopy } from '../host.js';
import { createSessionReferences, parseContentMentions, type SessionReferences } from '../service.js';
import type { ContentBlock, HookContext, MessageSource, SessionQuery, SessionReferenceMetadataEntry, TargetAgent, UserMessage } from '../types.js';

/** The Cordis service key the plugin provides (SPEC §14.2). */
export const SESSION_REFERENCE_RESOLVER_SERVICE = 'sessionReferenceResolver';

/** A candidate as the service's `listCandidates` returns it: SPEC §6.5 without `mention` (§14.3). */
export type SessionReferenceCandidate = Omit<SessionCandidate, 'mention'>;

/** One row of a recall message's `source.references` (SPEC §14.3): the §9.1 metadata plus `inputIndex`. */
export interface RecallReference extends SessionReferenceMetadataEntry {
  /** The reference's position after deduplication (first mention order). */
  inputIndex: number;
}

/** `source` of the recall message that carries the snapshots (SPEC §14.3). */
export interface RecallSource extends MessageSource {
  kind: 'session-reference';
  form: 'recall';
  version: 1;
  references: RecallReference[];
}

/** The frozen recall `UserMessage` persisted after the prompt that cited the sessions (SPEC §14.3). */
export interface RecallMessage extends UserMessage {
  source: RecallSource;
  content: [{ type: 'text'; text: string }];
}

/** Result of the service's `prepare` (SPEC §14.3). */
export interface PreparedReferencedMessage {
  /** A deep copy of the input content. */
  content: ContentBlock[];
  /** The recall message; absent when there are no references. */
  additionalContext?: RecallMessage;
}

/** The decision an `agent/pre-step` waterfall produces (dsh's `PreStepDecision`). */
export type PreStepDecision = { kind: 'reject' } | { kind: 'enter'; messages: UserMessage[] };

/** The payload of dsh's `agent/pre-step` waterfall. */
export interface PreStepPayload {
  agent: TargetAgent;
  messages: UserMessage[];
  turn?: number;
  step?: number;
  signal?: AbortSignal;
}

/** The part of a Cordis context the plugin uses; `sessionQuery` is dsh's `ctx.sessionQuery`. */
interface HostContext {
  sessionQuery?: SessionQuery;
  on(name: string, listener: (payload: PreStepPayload, next: () => Promise<PreStepDecision>) => Promise<PreStepDecision>, options: { prepend: boolean }): unknown;
}

/** The plugin's configuration: SPEC §5's keys and `matchContent` (SPEC §16.6). */
export interface SessionReferencePluginConfig extends Omit<SessionReferenceConfig, 'candidateMatch'> {
  /** dsh's `@` menu matches by substring (SPEC §6.2, §15.10): `'substring'` is the only value. */
  candidateMatch?: 'substring' | undefined;
  /**
   * When `true`, the web `@` menu's `candidates` answers a non-empty query from `searchSessions`
   * (what was said in each session), best first, with the same rows. Default `false`.
   */
  matchContent?: boolean | undefined;
}

/**
 * The plugin's configuration: SPEC §5's keys, `matchTitles` on unless set to `false` (§14.2),
 * `matchContent` off unless `true` (§16.6), `candidateMatch` dsh's `'substring'` only (§15.10: dsh's
 * `@` menu keeps its rule, and its trigger holds no spaces).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` naming the key.
 */
function resolvePluginConfig(config: unknown): ResolvedSessionReferenceConfig & { matchContent: boolean } {
  try {
    check(config == null || (typeof config === 'object' && !Array.isArray(config)), 'INVALID_CONFIG', 'config must be an object', config);
    // Read once (SPEC §10.4).
    const { matchTitles = true, matchContent = false, ...rest } = (readCallerOptions(config, 'config', 'INVALID_CONFIG') ?? {}) as SessionReferencePluginConfig;
    check(typeof matchContent === 'boolean', 'INVALID_CONFIG', 'config.matchContent must be a boolean', matchContent);
    check(
      rest.candidateMatch === undefined || rest.candidateMatch === 'substring',
      'INVALID_CONFIG',
      "config.candidateMatch must be 'substring' in the dsh plugin (dsh's @ menu matches by substring)",
      rest.candidateMatch,
    );
    return Object.freeze({ ...resolveConfig({ ...rest, matchTitles }), matchContent });
  } catch (error) {
    throw argumentError(error, 'INVALID_CONFIG');
  }
}

/**
 * The dsh session-reference plugin (SPEC §14): mount it in a `session-reference` profile row in
 * place of `@deepseek-ai/dsh-session-reference`. It needs `ctx.sessionQuery` (`static inject`),
 * provides itself as `ctx.sessionReferenceResolver`, and rewrites direct prompts in an
 * `agent/pre-step` listener registered first (`prepend`): each mention becomes `@label` in a
 * frozen copy of the prompt (same id), followed by one recall message with the snapshots.
 *
 * The remote method `candidates` (the dsh web `@` menu) is `remoteExportCandidates`, exposed
 * through dsh's Typert gateway like the host's own plugin (`TypertRemoteService`, `@Remote`).
 * @example
 * // ~/.dsh/profiles/web/cordis.patch.yml: see docs/dsh-hosts.md, "Mount it".
 * ctx.plugin(SessionReferenceResolver, { maxReferenceBytes: 32768 });
 * const { content, additionalContext } = await ctx.sessionReferenceResolver.prepare(agent, content, references, signal);
 */
export class SessionReferenceResolver extends TypertRemoteService {
  /** Cordis services the plugin needs before it starts. */
  static inject = ['sessionQuery'];

  /** The validated configuration (SPEC §5; `matchTitles` defaults to `true` here; `matchContent`, §16.6). */
  readonly config: Readonly<ResolvedSessionReferenceConfig & { matchContent: boolean }>;

  /** The service over the last `ctx.sessionQuery` seen: kept, so that its search index is too (SPEC §16.4). */
  private service: { sessionQuery: SessionQuery | undefined; references: SessionReferences } | undefined;

  /**
   * @param ctx The Cordis context (dsh's), providing `sessionQuery`.
   * @param config SPEC §5's keys; `matchTitles` defaults to `true`; `matchContent` (default
   *   `false`) answers the `@` menu from search (SPEC §16.6).
   * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` naming the bad key.
   */
  constructor(ctx: Context, config?: SessionReferencePluginConfig) {
    // Validated before the service is provided: a bad config registers nothing.
    const resolved = resolvePluginConfig(config);
    super(ctx, SESSION_REFERENCE_RESOLVER_SERVICE);
    this.config = resolved;
    // The service methods work detached from the object too (`const { prepare } = resolver`,
    // SPEC §10.5): own bound copies; the prototype keeps the originals, which dsh's Typert gateway
    // reads (the @Remote marker and parameter names of remoteExportCandidates).
    this.listCandidates = this.listCandidates.bind(this);
    this.remoteExportCandidates = this.remoteExportCandidates.bind(this);
    this.prepare = this.prepare.bind(this);
    (ctx as unknown as HostContext).on('agent/pre-step', (payload, next) => this.preStep(payload, next), { prepend: true });
  }

  /**
   * Candidates for `@` autocomplete (SPEC §6, §14.3): the rows of the core `listCandidates`
   * without `mention`. `ctx.sessionQuery` is read now, not at construction.
   * @throws SessionReferenceError as the core `listCandidates`.
   */
  async listCandidates(agent: TargetAgent, query?: string, limit?: number, signal?: AbortSignal): Promise<SessionReferenceCandidate[]> {
    const rows = await this.references().listCandidates(agent, query, limit, signal);
    return rows.map(({ mention: _mention, ...candidate }) => candidate);
  }

  /**
   * The remote method `candidates` of the dsh web `@` menu (SPEC §14.3): at most
   * `candidateLimit` candidates, each with its canonical `mention`. The parameters are plain
   * names on purpose: dsh's gateway reads them to bind `agent` (from the wire's `agentId`),
   * `query` and the cancellation `signal`. With `matchContent`, a query that is not blank is
   * answered by `searchSessions` (SPEC §16.6): best first, the same rows without score or snippets.
   * @throws SessionReferenceError as the core `listCandidates` (or `searchSessions`).
   */
  @Remote('candidates')
  async remoteExportCandidates(agent: TargetAgent, query: string, signal: AbortSignal): Promise<SessionCandidate[]> {
    const limit = this.config.candidateLimit;
    if (!this.config.matchContent || typeof query !== 'string' || query.trim() === '') return this.references().listCandidates(agent, query, limit, signal);
    const hits = await this.references().searchSessions(agent, query, { limit, signal });
    return hits.map(({ score: _score, snippets: _snippets, ...row }) => row);
  }

  /**
   * Reads, projects, bounds and renders the cited sessions (SPEC §7–§9, §14.3): `content` is a
   * deep copy, `additionalContext` the frozen recall message (absent without references). Atomic.
   * @throws SessionReferenceError every code of the core `prepare`.
   */
  async prepare(
    agent: TargetAgent,
    content: ContentBlock[],
    references: Array<{ sessionId: string; label?: string | undefined }>,
    signal?: AbortSignal,
  ): Promise<PreparedReferencedMessage> {
    const prepared = await this.references().prepare(agent, content, references, signal);
    return prepared.context ? { content: prepared.content, additionalContext: recallMessage(prepared.context) } : { content: prepared.content };
  }

  /**
   * The `agent/pre-step` listener (SPEC §14.3): `next()` first; a decision other than `enter`
   * passes through; each direct message (`source.kind === 'user'`) with mentions becomes a frozen
   * copy with the readable content and the same id, followed by its recall message; every other
   * message passes unchanged, in order. Any failure rejects (the host ends the turn), and only
   * with a `SessionReferenceError` (SPEC §10.5): a fault in what it reads (a throwing getter, a
   * revoked proxy) is `SESSION_REFERENCE_INVALID_ARGUMENT` naming where. A rejection of `next()`
   * (the rest of the chain: the host) that is a `SessionReferenceError` passes as it is; any other
   * is `SESSION_REFERENCE_CANCELLED` when the payload's signal has aborted, else
   * `SESSION_REFERENCE_READ_FAILED` ("agent/pre-step next() failed: …"), the original as `cause`.
   * Decided so because a `next()` resolving to a revoked proxy reaches us only as a rejection with
   * a raw `TypeError` (the promise machinery reads its `then`), which cannot be told from any other
   * rejection: wrapping every foreign one keeps SPEC §10.5's one exception type.
   */
  private async preStep(payload: unknown, next: () => Promise<PreStepDecision>): Promise<PreStepDecision> {
    let agent: AgentCopy;
    let signal: unknown;
    try {
      const fields = readCallerFields(payload, ['agent', 'signal'], 'payload');
      agent = readAgent(fields.agent);
      signal = fields.signal;
    } catch (error) {
      throw argumentError(error);
    }
    let decision: PreStepDecision;
    try {
      decision = await next();
    } catch (error) {
      throw nextFailure(error, signal);
    }
    try {
      const { kind, messages } = readCallerFields(decision, ['kind', 'messages'], 'decision');
      const entering = kind === 'enter' ? readCallerArray(messages, 'decision.messages') : undefined;
      if (entering === undefined) return decision;
      const expanded = await Promise.all(entering.map((message, index) => this.expand(agent, message, `decision.messages[${index}]`, signal)));
      return { kind: 'enter', messages: expanded.flat() };
    } catch (error) {
      throw argumentError(error);
    }
  }

  /**
   * One entering message, as it enters the step: itself, or its readable copy and recall message.
   * Its own fields and `source` are read once; a direct message is read whole into a private copy
   * (SPEC §10.4), and only that copy is used.
   */
  private async expand(agent: AgentCopy, message: unknown, path: string, signal: unknown): Promise<UserMessage[]> {
    const { source, content, ...rest } = readCallerOptions(message, path) ?? {};
    const sourceCopy = copyCallerData(source, `${path}.source`) as MessageSource | undefined;
    const contentCopy = sourceCopy?.kind === 'user' ? copyCallerData(content, `${path}.content`) : undefined;
    if (!Array.isArray(contentCopy)) return [message as UserMessage];
    const parsed = parseContentMentions(contentCopy);
    if (parsed.references.length === 0) return [message as UserMessage];
    const prepared = await this.prepare({ id: agent.id }, parsed.content, parsed.references, signal as AbortSignal | undefined);
    const copy = { ...(copyCallerData(rest, path) as object), source: sourceCopy, content: prepared.content };
    return [freezeMessage(copy as never), prepared.additionalContext!];
  }

  /** The core service over the host's current `ctx.sessionQuery` (the same one while that does not change). */
  private references(): SessionReferences {
    const { sessionQuery } = this.ctx as unknown as HostContext;
    const kept = this.service;
    if (kept !== undefined && kept.sessionQuery === sessionQuery) return kept.references;
    const { matchContent: _matchContent, ...config } = this.config;
    const references = createSessionReferences({ sessionQuery: sessionQuery!, config });
    this.service = { sessionQuery, references };
    return references;
  }
}

/** A rejection of the pre-step `next()` as a `SessionReferenceError` (see `preStep`). */
function nextFailure(error: unknown, signal: unknown): SessionReferenceError {
  if (isInstance(error)) return error;
  let aborted = false;
  try {
    aborted = (signal as { aborted?: unknown } | undefined)?.aborted === true;
  } catch {
    // A signal that cannot be read is not an aborted one.
  }
  return aborted ? fail('CANCELLED', 'cancelled by the signal', error) : fail('READ_FAILED', `agent/pre-step next() failed: ${describeValue(error)}`, error);
}

/** The frozen recall message of SPEC §14.3, made with the host's `createUserMessage`. */
function recallMessage(context: HookContext): RecallMessage {
  const source: RecallSource = {
    kind: 'session-reference',
    form: 'recall',
    version: 1,
    references: context.metadata.references.map((reference, inputIndex) => ({ ...reference, inputIndex })),
  };
  return createUserMessage({ source, content: [{ type: 'text', text: context.content[0].text }] } as never) as unknown as RecallMessage;
}
