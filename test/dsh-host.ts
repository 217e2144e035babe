/**
 * The real dsh host stack for the `./dsh` tests (SPEC §14.5): a Cordis `Context` with dsh's own
 * `SessionStore` and a `SessionQueryEngine` over it, sessions written through `Session.append`
 * exactly as the agent loop writes them, and the `agent/pre-step` waterfall as the loop runs it.
 * Nothing is mocked: the query engine is dsh's, with only its two abstract full-text methods
 * (never called here) implemented.
 */
import { Context } from '@deepseek-ai/cordis';
import { CompactionId, compactCheckpointSource } from '@deepseek-ai/dsh-compaction';
import { createAssistantMessage, createUserMessage } from '@deepseek-ai/dsh-llm';
import SessionStore, { type Session } from '@deepseek-ai/dsh-session';
import { SessionQueryEngine } from '@deepseek-ai/dsh-session-query';
import SessionReferenceResolver, { type PreStepDecision } from '../src/dsh/index.js';
import type { SessionReferenceConfig } from '../src/index.js';
import type { UserMessage } from '../src/types.js';

/** dsh's query engine; full-text search is a backend concern no test here needs. */
export class MemorySessionQuery extends SessionQueryEngine {
  searchSessions(): never {
    throw new Error('full-text search is not part of these tests');
  }
  searchEvents(): never {
    throw new Error('full-text search is not part of these tests');
  }
}

/** A host whose `readSurface` never settles for the ids in `hanging` (a stuck store read); `onHang` is told when one starts. */
export function hangingQuery(hanging: ReadonlySet<string>, onHang: (sessionId: string) => void = () => {}) {
  return class HangingSessionQuery extends MemorySessionQuery {
    override readSurface(sessionId: string) {
      if (!hanging.has(sessionId)) return super.readSurface(sessionId as never);
      onHang(sessionId);
      return new Promise<never>(() => {});
    }
  };
}

/** Everything the tests reach through the host: the context and its services. */
export interface Host {
  ctx: Context & Record<string, any>;
  sessions: any;
  resolver: any;
}

/**
 * Mounts SessionStore, a query engine and a session-reference plugin (default: ours) in a fresh
 * Cordis Context.
 */
export async function mountHost(config?: SessionReferenceConfig, Query: typeof MemorySessionQuery = MemorySessionQuery, plugin: unknown = SessionReferenceResolver): Promise<Host> {
  const ctx = new Context() as Context & Record<string, any>;
  await ctx.plugin(SessionStore);
  await ctx.plugin(Query);
  await ctx.plugin(plugin as typeof SessionReferenceResolver, config);
  return { ctx, sessions: ctx.sessions, resolver: ctx.sessionReferenceResolver };
}

/** A direct user message, as dsh creates it. */
export function prompt(text: string): UserMessage {
  return createUserMessage({ content: [{ type: 'text', text }], source: { kind: 'user' } }) as unknown as UserMessage;
}

/** A session with `cwd` (or none), written turn by turn through dsh's own `Session.append`. */
export class Conversation {
  readonly session: Session;
  private turn = 0;
  /** Seqs of the surface nodes appended so far, in order. */
  readonly surfaceSeqs: number[] = [];

  constructor(host: Host, cwd?: string) {
    this.session = host.sessions.create(undefined, cwd === undefined ? {} : { meta: { cwd } });
  }

  get id(): string {
    return this.session.id;
  }

  /** The agent of this session, as far as the plugin reads it: id and `session.header.cwd`. */
  get agent() {
    return { id: this.session.id, session: this.session };
  }

  /** One completed turn: the entered user messages (default: one prompt of `user`), then the reply. */
  say(user: string | UserMessage[], assistant: string): this {
    const turn = ++this.turn;
    this.session.append('turn/start', { turn });
    for (const message of typeof user === 'string' ? [prompt(user)] : user) {
      this.surfaceSeqs.push(this.session.append('user/message', message as never, { surfaceOp: 'append' }).seq);
    }
    this.session.append('step/start', { turn, step: 1 });
    const reply = createAssistantMessage({ content: [{ type: 'text', text: assistant }], source: { provider: 'mock', model: 'mock-1' } } as never);
    this.surfaceSeqs.push(this.session.append('assistant/message', { turn, step: 1, message: reply }, { surfaceOp: 'append' }).seq);
    this.session.append('step/end', { turn, step: 1 });
    this.session.append('turn/end', { turn, reason: { kind: 'completed' } });
    return this;
  }

  /** dsh compaction: a checkpoint `user/message` replacing every surface node so far. */
  compact(summary: string): this {
    const replaced = this.surfaceSeqs.splice(0);
    const checkpoint = createUserMessage({ content: [{ type: 'text', text: summary }], source: compactCheckpointSource(CompactionId(`compaction-${this.id}`)) });
    const event = this.session.append('user/message', checkpoint, {
      surfaceOp: { op: 'replace', start: replaced[0]!, end: replaced.at(-1)! },
      sourceEventSeqs: replaced,
    });
    this.surfaceSeqs.push(event.seq);
    return this;
  }

  /** The latest title, as dsh's title plugin logs it. */
  title(title: string): this {
    this.session.append('session/title', { title, messageSeqs: [this.surfaceSeqs[0] ?? 0], source: { kind: 'user' } });
    return this;
  }
}

/** Runs the `agent/pre-step` waterfall as dsh's agent loop does; `final` is the loop's own decision. */
export function preStep(
  host: Host,
  agent: unknown,
  messages: UserMessage[],
  signal: AbortSignal = new AbortController().signal,
  final: () => Promise<PreStepDecision> = async () => ({ kind: 'enter', messages }),
): Promise<PreStepDecision> {
  return host.ctx.waterfall('agent/pre-step' as never, { agent, messages, turn: 1, step: 1, signal } as never, final as never) as Promise<PreStepDecision>;
}
