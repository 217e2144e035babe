/** Builders of dsh-shaped events and hosts for tests (SPEC §4). */
import type { HookContext, SessionEvent, SessionHeader, SessionQuery, SessionSurface } from '../src/index.js';

type Extra = Partial<SessionEvent>;

export function userMessage(seq: number, text: string | string[], extra: Extra & { envelope?: unknown; source?: unknown } = {}): SessionEvent {
  const { envelope, source, ...rest } = extra;
  const texts = Array.isArray(text) ? text : [text];
  return {
    type: 'user/message',
    seq,
    time: 1_700_000_000_000 + seq,
    data: {
      id: `u${seq}`,
      role: 'user',
      content: texts.map((t) => ({ type: 'text', text: t })),
      source: source ?? { kind: 'user' },
      ...(envelope === undefined ? {} : { envelope }),
    },
    surfaceOp: 'append',
    ...rest,
  };
}

export function assistantMessage(seq: number, text: string | string[], extra: Extra & { interrupted?: true } = {}): SessionEvent {
  const { interrupted, ...rest } = extra;
  const texts = Array.isArray(text) ? text : [text];
  return {
    type: 'assistant/message',
    seq,
    time: 1_700_000_000_000 + seq,
    data: {
      turn: 1,
      step: 1,
      message: { role: 'assistant', content: texts.map((t) => ({ type: 'text', text: t })) },
      ...(interrupted ? { interrupted } : {}),
    },
    surfaceOp: 'append',
    ...rest,
  };
}

/** An assistant message holding only reasoning (never projected, SPEC §8). */
export function reasoningMessage(seq: number, text: string): SessionEvent {
  return {
    type: 'assistant/message',
    seq,
    time: 1_700_000_000_000 + seq,
    data: { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'reasoning', text }] } },
    surfaceOp: 'append',
  };
}

/** A user message from a plugin (a context message: never projected, SPEC §8). */
export function contextMessage(seq: number, text: string): SessionEvent {
  return userMessage(seq, text, { source: { kind: 'plugin', plugin: 'skill-catalog' } });
}

export function checkpoint(seq: number, text: string, start: number, end: number, source: unknown = { kind: 'plugin', plugin: 'compact' }): SessionEvent {
  return userMessage(seq, text, { source, surfaceOp: { op: 'replace', start, end } });
}

export function toolResult(seq: number, text: string): SessionEvent {
  return {
    type: 'tool/result',
    seq,
    time: 1_700_000_000_000 + seq,
    data: { turn: 1, step: 1, message: { source: { kind: 'tool' }, content: [{ type: 'tool-result', content: [{ type: 'text', text }] }] } },
    surfaceOp: 'append',
  };
}

export interface FakeSession {
  header: SessionHeader;
  events: SessionEvent[];
  title?: string;
  capturedThroughSeq?: number | null;
}

/** A fake host over in-memory sessions; counts calls so tests can assert on them. */
export function fakeQuery(sessions: FakeSession[]) {
  const calls = { listSessions: 0, readSurface: [] as string[], readTitleSnapshots: [] as string[][] };
  const query: SessionQuery & { calls: typeof calls } = {
    calls,
    async listSessions() {
      calls.listSessions++;
      return sessions.map((s) => ({ header: s.header }));
    },
    async readSurface(id: string): Promise<SessionSurface> {
      calls.readSurface.push(id);
      const session = sessions.find((s) => s.header.id === id);
      if (!session) throw new Error(`no session ${id}`);
      const last = session.events.at(-1);
      return {
        session: session.header,
        capturedThroughSeq: session.capturedThroughSeq !== undefined ? session.capturedThroughSeq : (last?.seq ?? null),
        events: session.events,
      };
    },
    async readTitleSnapshots(ids: string[]) {
      calls.readTitleSnapshots.push(ids);
      return ids.map((sessionId) => {
        const session = sessions.find((s) => s.header.id === sessionId);
        return { sessionId, status: 'fulfilled' as const, value: session?.title === undefined ? {} : { title: { title: session.title } } };
      });
    },
  };
  return query;
}

/** A minimal HookContext of SPEC §9.1 whose one text block is `text`, without references. */
export function textContext(text: string): HookContext {
  return {
    source: { kind: 'plugin', plugin: 'session-reference' },
    placement: 'prompt-prefix',
    content: [{ type: 'text', text }],
    metadata: { version: 1, references: [] },
  };
}
