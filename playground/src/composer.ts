/**
 * The prompt composer: the kit's `createMentionEditor` (SPEC §15.8) over the canonical text, with
 * this page's `@` menu around it. Mentions show as atomic chips (label; id on hover; warning style
 * when malformed or not in the store, chips.ts), while the text the page keeps and sends stays
 * exactly the `@[label](dsh-session:…)` markup (the "raw" view shows and edits it). `@` opens
 * session candidates from `listCandidates`: ↑/↓ to move, Enter or Tab to insert, Esc to close
 * (SPEC §13, §15).
 *
 * Every edit (typing, Enter, Backspace/Delete, paste, cut, drop, undo, IME) is the editor's; the
 * menu keys are taken here first (a `keydown` that calls `preventDefault()` never reaches it).
 */
import { h } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { createMentionEditor, type MentionEditor, type MentionEditorTrigger } from '../../src/editor/dom/index.js';
import type { SessionCandidate, SessionReferenceMentionInput, SessionReferences, TargetAgent } from '../../src/index.js';
import { decorateChips } from './chips.js';
import { toErrorInfo, type ErrorInfo } from './sessions.js';

const html = htm.bind(h);

/** Width of the candidate list (px); style.css caps it at the composer's width. */
const POPUP_WIDTH = 560;

const CWD_GROUP = { same: 'same cwd', none: 'no cwd', other: 'other cwd' } as const;

function cwdGroup(candidate: SessionCandidate, agentCwd: string | undefined): keyof typeof CWD_GROUP {
  if (!candidate.cwd) return 'none';
  return agentCwd && candidate.cwd === agentCwd ? 'same' : 'other';
}

export interface ComposerProps {
  text: string;
  onText: (text: string) => void;
  service: SessionReferences | undefined;
  serviceError: ErrorInfo | undefined;
  agent: TargetAgent;
  /** Ids of the sessions in the store: a well-formed mention of any other id is drawn as a warning. */
  knownIds: ReadonlySet<string>;
  /** Set by the page to insert a mention at the caret (a session row's "Cite" button). */
  insertRequest?: { mention: SessionReferenceMentionInput; nonce: number };
}

/**
 * The candidates answering one query of one service for one agent, so rows of an older query,
 * config or target are never shown for a newer one.
 */
interface CandidateList {
  query: string;
  at: number;
  service: SessionReferences | undefined;
  agent: TargetAgent;
  candidates: SessionCandidate[];
  error?: ErrorInfo;
}

export function Composer(props: ComposerProps) {
  const { text, onText, service, serviceError, agent, knownIds, insertRequest } = props;
  const element = useRef<HTMLDivElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const editor = useRef<MentionEditor | undefined>(undefined);
  /** The newest `onText`, for the editor's `onChange` (made once). */
  const latestOnText = useRef(onText);
  latestOnText.current = onText;
  const [raw, setRaw] = useState(false);
  const [trigger, setTrigger] = useState<MentionEditorTrigger | undefined>(undefined);
  const [focused, setFocused] = useState(false);
  const [dismissedAt, setDismissedAt] = useState<number | undefined>(undefined);
  const [list, setList] = useState<CandidateList | undefined>(undefined);
  const [active, setActive] = useState(0);
  const open = focused && trigger !== undefined && trigger.start !== dismissedAt;
  // Only the rows that answer the query being typed count: while they load, nothing is selectable.
  const current =
    open && list && list.at === trigger.start && list.query === trigger.query && list.service === service && list.agent === agent ? list : undefined;
  const candidates = current?.candidates ?? [];
  const agentCwd = typeof agent.cwd === 'string' && agent.cwd !== '' ? agent.cwd : undefined;

  // The editor, once: it owns the element's content from here on.
  useLayoutEffect(() => {
    const made = createMentionEditor(element.current!, {
      text,
      onChange: (next) => latestOnText.current(next),
      onTrigger: (next) => {
        setTrigger(next);
        if (next === undefined) setDismissedAt(undefined);
      },
    });
    editor.current = made;
    return () => made.destroy();
  }, []);

  // The text from outside (the raw view, a reset) goes in; the editor's own changes come back equal (a no-op).
  // Chips are decorated after every draw: a session not in the store is a warning.
  useLayoutEffect(() => {
    editor.current?.setText(text);
    decorateChips(element.current!, knownIds);
  }, [text, knownIds]);

  // Candidates for the current query; a newer query aborts the older request.
  useEffect(() => {
    if (!open || !trigger) return;
    const { query, start: at } = trigger;
    if (!service) {
      setList({ query, at, service, agent, candidates: [], error: serviceError });
      return;
    }
    const controller = new AbortController();
    service.listCandidates(agent, query, undefined, controller.signal).then(
      (found) => {
        if (controller.signal.aborted) return;
        setList({ query, at, service, agent, candidates: found });
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        setList({ query, at, service, agent, candidates: [], error: toErrorInfo(error) });
      },
    );
    return () => controller.abort();
  }, [open, trigger?.query, trigger?.start, service, agent]);

  // A new list (or a new query) starts at its first row.
  useLayoutEffect(() => setActive(0), [current]);

  // Keep the highlighted candidate in view.
  const listElement = useRef<HTMLUListElement>(null);
  useLayoutEffect(() => {
    listElement.current?.querySelector<HTMLElement>('[aria-selected="true"]')?.scrollIntoView({ block: 'nearest' });
  }, [active, current]);

  /**
   * The mouse highlights a row only when it really moves: Chromium sends mouse events to a
   * pointer that stands still when the list opens or scrolls under it, and those must not take
   * the highlight away from the keyboard.
   */
  const pointer = useRef('');
  function hover(event: MouseEvent, index: number) {
    const at = `${event.screenX},${event.screenY}`;
    if (at === pointer.current) return;
    pointer.current = at;
    setActive(index);
  }

  function choose(candidate: SessionCandidate) {
    if (!trigger) return;
    editor.current?.insert(candidate);
  }

  // Insertions requested by the page (a session row's "Cite" button): at the caret, with a space after.
  useEffect(() => {
    if (insertRequest) editor.current?.insert(insertRequest.mention);
  }, [insertRequest?.nonce]);

  /** The menu's keys, before the editor sees them: ↑/↓ move, Enter/Tab insert, Esc closes. */
  function onKeyDown(event: KeyboardEvent) {
    if (!open) return;
    if (event.key === 'Escape') {
      event.preventDefault();
      setDismissedAt(trigger!.start);
      return;
    }
    if (event.key === 'ArrowDown' || event.key === 'ArrowUp' || event.key === 'Enter' || event.key === 'Tab') {
      // While the rows for this query load, these keys wait for them instead of typing.
      event.preventDefault();
      if (candidates.length === 0) return;
      if (event.key === 'ArrowDown') setActive((index) => (index + 1) % candidates.length);
      else if (event.key === 'ArrowUp') setActive((index) => (index - 1 + candidates.length) % candidates.length);
      else choose(candidates[Math.min(active, candidates.length - 1)]!);
    }
  }

  /** Where the menu goes: under the `@` (the trigger's rectangle), relative to the composer box. */
  function menuPoint(): { top: number; left: number } {
    const outer = box.current?.getBoundingClientRect();
    if (!trigger || !outer) return { top: 0, left: 0 };
    return { top: trigger.rect.bottom - outer.top + 4, left: trigger.rect.left - outer.left };
  }

  /** Under the `@`, but never past the composer's right edge. */
  function popupLeft(caretLeft: number): number {
    const width = box.current?.clientWidth ?? 0;
    return Math.max(0, Math.min(caretLeft, width - Math.min(POPUP_WIDTH, width)));
  }

  const activeId = candidates.length > 0 ? `candidate-${Math.min(active, candidates.length - 1)}` : undefined;
  const state = !open ? 'closed' : current ? 'ready' : 'loading';

  return html`
    <div class="composer" ref=${box}>
      <div class="composer-tools">
        <label class="toggle"><input type="checkbox" data-testid="raw-toggle" checked=${raw} onChange=${() => setRaw(!raw)} /> raw markup</label>
      </div>
      <div
        ref=${element}
        data-testid="composer"
        class=${`composer-input ${text === '' ? 'is-empty' : ''}`}
        spellcheck=${false}
        data-placeholder="Type your request. Type @ to cite another session (filter by id or cwd), ↑/↓ to choose, Enter or Tab to insert."
        role="combobox"
        aria-multiline="true"
        aria-haspopup="listbox"
        aria-autocomplete="list"
        aria-expanded=${open}
        aria-controls="candidate-list"
        aria-activedescendant=${activeId}
        onKeyDown=${onKeyDown}
        onFocus=${() => setFocused(true)}
        onBlur=${() => setTimeout(() => setFocused(document.activeElement === element.current), 150)}
      ></div>
      ${raw &&
      html`<label class="field raw">
        <span>Raw text <span class="muted">(exactly what is sent: the canonical <code>@[label](dsh-session:…)</code> markup)</span></span>
        <textarea
          data-testid="composer-raw"
          rows="4"
          spellcheck=${false}
          value=${text}
          onInput=${(event: Event) => onText((event.currentTarget as HTMLTextAreaElement).value)}
        ></textarea>
      </label>`}
      ${open &&
      html`<div
        class="candidates"
        data-testid="candidates"
        data-state=${state}
        data-query=${trigger!.query}
        style=${{ top: `${menuPoint().top}px`, left: `${popupLeft(menuPoint().left)}px` }}
      >
        <div class="candidates-head">
          ${current ? `${candidates.length} candidate${candidates.length === 1 ? '' : 's'}` : 'searching…'}
          ${trigger!.query !== '' && html` for <code>${trigger!.query}</code>`}
          <span class="hint">↑↓ move · Enter/Tab insert · Esc close</span>
        </div>
        ${current?.error && html`<div class="inline-error" data-testid="candidate-error"><code>${current.error.code}</code> ${current.error.message}</div>`}
        ${current && !current.error && candidates.length === 0 && html`<div class="empty">No session id or cwd contains “${trigger!.query}”.</div>`}
        <ul id="candidate-list" role="listbox" ref=${listElement}>
          ${candidates.map((candidate, index) => {
            const group = cwdGroup(candidate, agentCwd);
            return html`<li
              key=${candidate.sessionId}
              id=${`candidate-${index}`}
              role="option"
              data-testid="candidate"
              data-session-id=${candidate.sessionId}
              aria-selected=${index === active}
              class=${index === active ? 'active' : ''}
              onMouseDown=${(event: MouseEvent) => {
                event.preventDefault();
                choose(candidate);
              }}
              onMouseMove=${(event: MouseEvent) => hover(event, index)}
            >
              <div class="candidate-label">${candidate.label}</div>
              <div class="candidate-meta">
                <span class=${`badge badge-${group}`}>${CWD_GROUP[group]}</span>
                <code>${candidate.sessionId}</code>
                ${candidate.cwd && html`<span class="cwd">${candidate.cwd}</span>`}
                <span class="date">${new Date(candidate.createdAt).toISOString().slice(0, 16).replace('T', ' ')}</span>
              </div>
            </li>`;
          })}
        </ul>
      </div>`}
    </div>
  `;
}
