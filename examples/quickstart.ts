import { createSessionReferences } from 'dsh-session-reference';
import { createMemorySessionQuery, parseSessionLog } from 'dsh-session-reference/store';

// A dsh session log (JSON Lines): header, then events. Real logs come from ~/.dsh/sessions.
const log = [
  { type: 'session', version: 3, id: 'session-schema', createdAt: 1789000000000, cwd: '/work/api' },
  { type: 'user/message', seq: 0, time: 1789000001000, surfaceOp: 'append',
    data: { id: 'u1', role: 'user', source: { kind: 'user' },
            content: [{ type: 'text', text: 'Should orders.total be a <numeric> column?' }] } },
  { type: 'tool/result', seq: 1, time: 1789000002000, surfaceOp: 'append',
    data: { message: { content: [{ type: 'tool-result', content: [{ type: 'text', text: 'psql output…' }] }] } } },
  { type: 'assistant/message', seq: 2, time: 1789000003000, surfaceOp: 'append',
    data: { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'text', text: 'Yes: numeric(12,2), never float.' }] } } },
  { type: 'session/title', seq: 3, time: 1789000004000, data: { title: 'Schema migration' } },
].map((event) => JSON.stringify(event)).join('\n') + '\n';

const refs = createSessionReferences({ sessionQuery: createMemorySessionQuery([parseSessionLog(log)]) });
const agent = { id: 'session-current', cwd: '/work/api' }; // the session the user is typing in

const [candidate] = await refs.listCandidates(agent, 'schema'); // for `@` autocomplete
console.log(candidate.mention);

const message = await refs.referenceUserMessage(agent, {
  id: 'm1', role: 'user', source: { kind: 'user' },
  content: [{ type: 'text', text: `Apply what we decided in ${candidate.mention}.` }],
});
console.log(message.content.map((block) => block.text).join(''));
