/**
 * A React composer: `createMentionEditor` on a div — it owns the `@` menu (`suggest`, SPEC §15.9),
 * so the app keeps no menu code — and a replay of what was sent. State lives in `useState`; the
 * editor reports into it and the library reads from it.
 */
import { useEffect, useRef, useState } from 'react';
import type { UserMessage } from 'dsh-session-reference';
import { describeReferencedMessage } from 'dsh-session-reference/editor';
import { createMentionEditor, type MentionEditor } from 'dsh-session-reference/editor/dom';
import { listCandidates, send } from '../shared/app.ts';

export function Composer() {
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<MentionEditor>(null);
  const [draft, setDraft] = useState('');
  const [sent, setSent] = useState<UserMessage[]>([]);

  useEffect(() => {
    const made = createMentionEditor(host.current!, { ariaLabel: 'Message', onChange: setDraft, suggest: { fetch: listCandidates } });
    editor.current = made;
    return () => made.destroy();
  }, []);

  async function submit() {
    const message = await send(draft);
    setSent([...sent, message]);
    editor.current!.setText('');
    setDraft('');
  }

  return (
    <main>
      <div ref={host} className="composer" data-testid="composer" data-placeholder="Type @ to cite a session" />
      <p className="actions"><button data-testid="send" disabled={draft.trim() === ''} onClick={submit}>Send</button></p>
      {sent.map((message) => <Replay key={message.id} message={message} />)}
    </main>
  );
}

/** What was sent, as a chat shows it: the typed text with its chips, then one line per source. */
function Replay({ message }: { message: UserMessage }) {
  const described = describeReferencedMessage(message);
  if (!described) return null;
  return (
    <article className="sent" data-testid="sent">
      {described.segments?.map((segments, block) => segments && (
        <p key={block}>
          {segments.map((segment) => segment.kind === 'text' ? segment.text : (
            <span key={segment.start} className="chip" data-testid="replay-chip" data-session-id={segment.token.sessionId}>@{segment.token.label}</span>
          ))}
        </p>
      ))}
      <ul>
        {described.references.map((source) => (
          <li key={source.sessionId} data-testid="source">{source.label}: {source.retainedMessages} of {source.originalMessages} messages</li>
        ))}
      </ul>
    </article>
  );
}
