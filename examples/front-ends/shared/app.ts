/**
 * What the three example composers share: a memory store of three small sessions (made with the
 * package's own `./store`), the agent the person is talking to, what the composer's `@` menu
 * asks for, and sending. Everything is imported from the package as an app would (`dsh-session-reference`,
 * `dsh-session-reference/store`).
 */
import { createSessionReferences, type SessionCandidate, type UserMessage } from 'dsh-session-reference';
import { createMemorySessionQuery, readSessionLog } from 'dsh-session-reference/store';

type Said = Array<['user' | 'assistant', string]>;

/** A dsh session log (JSON Lines): the header, the conversation and a title. */
function sessionLog(id: string, createdAt: number, cwd: string, title: string, said: Said): string {
  const lines: unknown[] = [{ type: 'session', version: 3, id, createdAt, cwd }];
  said.forEach(([role, text], seq) => {
    const content = [{ type: 'text', text }];
    const data =
      role === 'user'
        ? { id: `${id}-${seq}`, role, content, source: { kind: 'user' } }
        : { turn: 1, step: seq, message: { role, content } };
    lines.push({ type: `${role}/message`, seq, time: createdAt + seq, data });
  });
  lines.push({ type: 'session/title', seq: said.length, time: createdAt + said.length, data: { title } });
  return `${lines.map((line) => JSON.stringify(line)).join('\n')}\n`;
}

// readSessionLog, not parseSessionLog: plain JSON Lines never load the zstd decoders.
const logs = await Promise.all([
  sessionLog('session-schema', 3, '/work/app', 'Schema migration', [
    ['user', 'Add a nullable `archived_at` column to orders.'],
    ['assistant', 'Done: migration 0042 adds it, with an index on (archived_at).'],
  ]),
  sessionLog('session-checksum', 2, '/work/app', '校验和：选用 XXH64', [
    ['user', 'Which checksum for the log frames?'],
    ['assistant', 'XXH64: fast, and the zstd frame format already names it.'],
  ]),
  sessionLog('session-triage', 1, '/work/ops', 'Freight triage 🚚', [['user', 'Sort the freight tickets by SLA.']]),
].map((log) => readSessionLog(log)));

const references = createSessionReferences({ sessionQuery: createMemorySessionQuery(logs) });

/** The session the person is writing in (never a candidate of its own menu). */
const agent = { id: 'session-composer', cwd: '/work/app' };

/**
 * The composer's `@` menu (`suggest.fetch`, SPEC §15.9): sessions whose id or cwd contains `query`,
 * this cwd first (SPEC §6); the composer aborts `signal` when a newer query supersedes this one.
 */
export function listCandidates(query: string, signal: AbortSignal): Promise<SessionCandidate[]> {
  return references.listCandidates(agent, query, 8, signal);
}

let sent = 0;

/** Sends the canonical text: mentions become snapshots before the request (SPEC §9.5). */
export function send(text: string): Promise<UserMessage> {
  const message: UserMessage = { id: `message-${++sent}`, role: 'user', source: { kind: 'user' }, content: [{ type: 'text', text }] };
  return references.referenceUserMessage(agent, message);
}
