/**
 * A React composer: `createMentionEditor` on a div, the app's own `@` menu, and a replay of what
 * was sent. State lives in `useState`; the editor reports into it and the library reads from it.
 */
import { useEffect, useRef, useState, type KeyboardEvent } from 'react';
import type { SessionCandidate, UserMessage } from 'dsh-session-reference';
import { describeReferencedMessage } from 'dsh-session-reference/editor';
import { createMentionEditor, type MentionEditor, type MentionEditorTrigger } from 'dsh-session-reference/editor/dom';
import { listCandidates, send } from '../shared/app.ts';

export function Composer() {
  const host = useRef<HTMLDivElement>(null);
  const editor = useRef<MentionEditor>(null);
  const [draft, setDraft] = useState('');
  const [trigger, setTrigger] = useState<MentionEditorTrigger>();
  const [candidates, setCandidates] = useState<SessionCandidate[]>([]);
  const [active, setActive] = useState(0);
  const [sent, setSent] = useState<UserMessage[]>([]);

  useEffect(() => {
    const made = createMentionEditor(host.current!, { onChange: setDraft, onTrigger: setTrigger });
    editor.current = made;
    return () => made.destroy();
  }, []);

  // The menu's rows for the query being typed.
  useEffect(() => {
    let live = true;
    if (trigger) listCandidates(trigger.query).then((rows) => live && (setCandidates(rows), setActive(0)));
    else setCandidates([]);
    return () => void (live = false);
  }, [trigger?.start, trigger?.query]);

  const open = trigger !== undefined && candidates.length > 0;
  function onKeyDown(event: KeyboardEvent) {
    if (!open) return;
    const moves: Record<string, number> = { ArrowDown: 1, ArrowUp: candidates.length - 1 };
    if (event.key in moves) setActive((active + moves[event.key]!) % candidates.length);
    else if (event.key === 'Enter' || event.key === 'Tab') editor.current!.insert(candidates[active]!);
    else if (event.key === 'Escape') setCandidates([]);
    else return;
    event.preventDefault();
  }

  async function submit() {
    const message = await send(draft);
    setSent([...sent, message]);
    editor.current!.setText('');
    setDraft('');
  }

  return (
    <main>
      <div ref={host} role="textbox" aria-multiline="true" className="composer" data-testid="composer" data-placeholder="Type @ to cite a session" onKeyDown={onKeyDown} />
      {open && (
        <ul className="menu" role="listbox" data-testid="menu" data-query={trigger.query} style={{ left: trigger.rect.left, top: trigger.rect.bottom + 4 }}>
          {candidates.map((candidate, index) => (
            <li key={candidate.sessionId} role="option" aria-selected={index === active} data-session-id={candidate.sessionId}
              onMouseDown={(event) => (event.preventDefault(), editor.current!.insert(candidate))}>
              {candidate.label}<small>{candidate.cwd}</small>
            </li>
          ))}
        </ul>
      )}
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
