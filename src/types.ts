/**
 * Structural mirrors of the dsh data the module reads and writes (SPEC §4, §9).
 *
 * Types are permissive: unknown fields are ignored and unknown event types are skipped, so real
 * dsh objects can be passed as they are.
 * @module
 */

/** First line of a dsh session log (SPEC §4.1). `createdAt` is epoch milliseconds. */
export interface SessionHeader {
  id: string;
  createdAt: number;
  cwd?: string | null | undefined;
  [key: string]: unknown;
}

/** A surface op: how an event takes part in folding (SPEC §4.3, §8.2). */
export type SurfaceOp = 'append' | { op: 'replace'; start: number; end: number };

/** One event of a dsh session log (SPEC §4.3). */
export interface SessionEvent {
  type: string;
  seq: number;
  time: number;
  data: unknown;
  surfaceOp?: SurfaceOp | undefined;
  [key: string]: unknown;
}

/** A text block (SPEC §4.4): the only block whose text the module reads and writes. */
export interface TextContentBlock {
  type: 'text';
  text: string;
  [key: string]: unknown;
}

/**
 * Any other block dsh writes (SPEC §4.4): reasoning, images, tool calls and results. The module
 * passes them through untouched (and at run time accepts blocks of any type).
 */
export interface OtherContentBlock {
  type: 'reasoning' | 'image' | 'tool-call' | 'tool-result';
  [key: string]: unknown;
}

/**
 * A content block (SPEC §4.4), discriminated by `type`: `block.type === 'text'` narrows it to a
 * {@link TextContentBlock}, so `block.text` is a string.
 */
export type ContentBlock = TextContentBlock | OtherContentBlock;

/** Who wrote a user message (SPEC §4.4, §4.5). */
export interface MessageSource {
  kind: string;
  [key: string]: unknown;
}

/** A user message as dsh stores it (SPEC §4.4). */
export interface UserMessage {
  id: string;
  role: 'user';
  content: ContentBlock[];
  source: MessageSource;
  envelope?: PromptEnvelope | undefined;
  [key: string]: unknown;
}

/** `HookContext.source`: this module's context source (SPEC §9.1). */
export interface SessionReferenceContextSource {
  kind: 'plugin';
  plugin: 'session-reference';
}

/** Per-source statistics of a prepared reference (SPEC §8.4). */
export interface SessionReferenceStats {
  /** Seq the snapshot was captured through (`readSurface().capturedThroughSeq`). */
  capturedThroughSeq: number | null;
  /** The projection contains a compact checkpoint. */
  compacted: boolean;
  /** Items in the projection before retention. */
  originalMessages: number;
  /** Items kept (whole or truncated). */
  retainedMessages: number;
  /** Items dropped. */
  omittedMessages: number;
  /** Raw UTF-8 bytes of dropped texts plus bytes removed by truncation (lone surrogate: 3). */
  omittedBytes: number;
  /** Anything was omitted (`omittedMessages > 0 || omittedBytes > 0`). */
  truncated: boolean;
  /** UTF-8 bytes of the reference's tag-safe serialization (SPEC §8.1). */
  serializedBytes: number;
  /** The `maxReferenceBytes` the reference was held to. */
  budgetBytes: number;
}

/** Metadata row of one reference (SPEC §9.1). */
export interface SessionReferenceMetadataEntry extends SessionReferenceStats {
  sessionId: string;
  label: string;
}

/** `HookContext.metadata` (SPEC §9.1). */
export interface SessionReferenceMetadata {
  version: 1;
  references: SessionReferenceMetadataEntry[];
}

/** The aggregated prompt-prefix context of one prepared message (SPEC §9.1). */
export interface HookContext {
  source: SessionReferenceContextSource;
  placement: 'prompt-prefix';
  content: [{ type: 'text'; text: string }];
  metadata: SessionReferenceMetadata;
}

/**
 * Where one mention or bare URI stood in the readable content (SPEC §9.4 `envelope.mentions`): the
 * `@label` that replaced it is `display[block].text.slice(start, end)`.
 */
export interface PromptEnvelopeMention {
  /** Index of the text block in `envelope.display`. */
  block: number;
  /** UTF-16 offset of the `@` in that block's text. */
  start: number;
  /** UTF-16 offset just after the label. */
  end: number;
  /** The cited session. */
  sessionId: string;
}

/** The model-hidden envelope of a composed prompt, for UI replay (SPEC §9.4). */
export interface PromptEnvelope {
  version: 1;
  /** The readable content as the user wrote it (mentions already turned into `@label`). */
  display: ContentBlock[];
  /**
   * Where each mention stands in `display`, in the order typed. Absent when the composer was not
   * told (`composePromptMessage` without its `mentions` argument, or an older envelope).
   */
  mentions?: PromptEnvelopeMention[] | undefined;
  contexts: Array<Pick<HookContext, 'source' | 'placement' | 'metadata'>>;
}

/** A title row of `readTitleSnapshots` (SPEC §4.2). */
export type SessionTitleSnapshot =
  | { sessionId: string; status: 'fulfilled'; value: { title?: { title: string } | null | undefined } }
  | { sessionId: string; status: 'rejected'; reason: unknown };

/** The surface snapshot `readSurface` resolves to (SPEC §4.2). */
export interface SessionSurface {
  session: SessionHeader;
  capturedThroughSeq: number | null;
  events: SessionEvent[];
  /**
   * Projected messages (SPEC §8.2) left out of `events` by `readRetainedSurface`: how many, and
   * the raw UTF-8 bytes of their texts. Retention counts them as dropped (SPEC §8.3, §8.4).
   */
  withheld?: { messages: number; bytes: number } | undefined;
}

/** The host's session store, `ctx.sessionQuery` (SPEC §4.2). */
export interface SessionQuery {
  /**
   * All sessions, newest first. A record may carry the log's `identity` (this package's stores
   * do: size and mtime of a file, an object's etag): a string that changes whenever the log does,
   * so search re-reads only logs whose identity moved (SPEC §16.4). Without it, search reads the
   * session and compares `capturedThroughSeq`.
   */
  listSessions(signal?: AbortSignal): Promise<Array<{ header: SessionHeader; identity?: string | undefined }>>;
  /** The current (folded or raw) surface of one session. */
  readSurface(sessionId: string, signal?: AbortSignal): Promise<SessionSurface>;
  /**
   * Optional; this package's stores have it (SPEC §11.2.2: a read's memory grows with what the
   * snapshot keeps). The surface `readSurface` gives, where the store may leave out events that
   * project to nothing and messages that a reference object of `maxReferenceBytes` UTF-8 bytes
   * cannot keep, counted in `withheld` (see {@link SessionSurface}); those are never checkpoints
   * or the newest message, and always older than every other message left in but the
   * checkpoints. When present, `prepare` calls it instead of `readSurface`, once per source, with
   * `config.maxReferenceBytes`; errors still name `readSurface`.
   */
  readRetainedSurface?(sessionId: string, maxReferenceBytes: number, signal?: AbortSignal): Promise<SessionSurface>;
  /** Latest titles of the given sessions, one row per id. */
  readTitleSnapshots?(sessionIds: string[], signal?: AbortSignal): Promise<SessionTitleSnapshot[]>;
}

/** The agent a prompt is prepared for (SPEC §4.6): a real dsh `Agent` fits as is. */
export interface TargetAgent {
  id: string;
  cwd?: string | null | undefined;
  session?: { header?: { cwd?: string | null | undefined } | null | undefined } | null | undefined;
  [key: string]: unknown;
}
