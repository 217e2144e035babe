/**
 * The prompt composer: a textarea where `@` opens session candidates from `listCandidates`
 * (filtered as you type, arrow keys to move, Enter or Tab to insert the canonical mention).
 */
import { h } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import type { SessionCandidate, SessionReferences, TargetAgent } from '../../src/index.js';
import { toErrorInfo, type ErrorInfo } from './sessions.js';

const html = htm.bind(h);

/** An `@query` being typed: where the `@` is, and the text between it and the caret. */
export interface Trigger {
  at: number;
  query: string;
}

const WORD_BREAK = /[\s()[\]]/;
const BEFORE_AT = /[\s([{"'`,;:]/;

/**
 * The `@` trigger the caret is in, if any: an `@` at the start or after whitespace or an opening
 * bracket, followed by a run without whitespace or brackets up to the caret. `@[` (a mention
 * being written by hand) does not trigger.
 */
export function findTrigger(text: string, caret: number): Trigger | undefined {
  for (let i = caret - 1; i >= 0 && caret - i <= 200; i--) {
    const ch = text[i]!;
    if (ch === '@') {
      if (i > 0 && !BEFORE_AT.test(text[i - 1]!)) return undefined;
      return { at: i, query: text.slice(i + 1, caret) };
    }
    if (WORD_BREAK.test(ch)) return undefined;
  }
  return undefined;
}

/** Pixel position of `position` inside a textarea (mirror-div technique), relative to its border box. */
function caretPoint(textarea: HTMLTextAreaElement, position: number): { top: number; left: number; height: number } {
  const style = getComputedStyle(textarea);
  const mirror = document.createElement('div');
  for (const property of [
    'boxSizing', 'width', 'paddingTop', 'paddingRight', 'paddingBottom', 'paddingLeft', 'borderTopWidth',
    'borderRightWidth', 'borderBottomWidth', 'borderLeftWidth', 'fontFamily', 'fontSize', 'fontWeight',
    'fontStyle', 'letterSpacing', 'lineHeight', 'textTransform', 'wordSpacing', 'tabSize',
  ] as const) {
    mirror.style[property] = style[property];
  }
  mirror.style.position = 'absolute';
  mirror.style.visibility = 'hidden';
  mirror.style.whiteSpace = 'pre-wrap';
  mirror.style.overflowWrap = 'break-word';
  mirror.style.top = '0';
  mirror.style.left = '-9999px';
  mirror.textContent = textarea.value.slice(0, position);
  const marker = document.createElement('span');
  marker.textContent = '\u200b';
  mirror.appendChild(marker);
  document.body.appendChild(mirror);
  const point = { top: marker.offsetTop - textarea.scrollTop, left: marker.offsetLeft, height: marker.offsetHeight };
  mirror.remove();
  return point;
}

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
  /** Set by the page to insert text at the caret (e.g. "cite" on a session row). */
  insertRequest?: { text: string; nonce: number };
}

export function Composer(props: ComposerProps) {
  const { text, onText, service, serviceError, agent, insertRequest } = props;
  const area = useRef<HTMLTextAreaElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const [trigger, setTrigger] = useState<Trigger | undefined>(undefined);
  const [dismissedAt, setDismissedAt] = useState<number | undefined>(undefined);
  const [candidates, setCandidates] = useState<SessionCandidate[]>([]);
  const [listError, setListError] = useState<ErrorInfo | undefined>(undefined);
  const [loading, setLoading] = useState(false);
  const [active, setActive] = useState(0);
  const [point, setPoint] = useState({ top: 0, left: 0, height: 20 });
  const open = trigger !== undefined && trigger.at !== dismissedAt;
  const agentCwd = typeof agent.cwd === 'string' && agent.cwd !== '' ? agent.cwd : undefined;

  function updateTrigger() {
    const textarea = area.current;
    if (!textarea) return;
    const caret = textarea.selectionStart;
    const next = textarea.selectionStart === textarea.selectionEnd ? findTrigger(textarea.value, caret) : undefined;
    setTrigger((current) => (current?.at === next?.at && current?.query === next?.query ? current : next));
    if (next === undefined || next.at !== dismissedAt) setDismissedAt(undefined);
    if (next) setPoint(caretPoint(textarea, next.at));
  }

  // Candidates for the current query; a newer query aborts the older request.
  useEffect(() => {
    if (!open || !trigger) return;
    if (!service) {
      setCandidates([]);
      setListError(serviceError);
      return;
    }
    const controller = new AbortController();
    setLoading(true);
    service.listCandidates(agent, trigger.query, undefined, controller.signal).then(
      (list) => {
        if (controller.signal.aborted) return;
        setCandidates(list);
        setListError(undefined);
        setActive(0);
        setLoading(false);
      },
      (error: unknown) => {
        if (controller.signal.aborted) return;
        setCandidates([]);
        setListError(toErrorInfo(error));
        setLoading(false);
      },
    );
    return () => controller.abort();
  }, [open, trigger?.query, trigger?.at, service, agent]);

  // Keep the highlighted candidate in view.
  const list = useRef<HTMLUListElement>(null);
  useLayoutEffect(() => {
    const item = list.current?.querySelector<HTMLElement>('[aria-selected="true"]');
    item?.scrollIntoView({ block: 'nearest' });
  }, [active, candidates]);

  function replaceRange(start: number, end: number, inserted: string) {
    const textarea = area.current;
    if (!textarea) return;
    const before = textarea.value.slice(0, start);
    const after = textarea.value.slice(end);
    const spaced = after === '' || !/^\s/.test(after) ? inserted + ' ' : inserted;
    const value = before + spaced + after;
    textarea.value = value;
    const caret = before.length + spaced.length;
    textarea.setSelectionRange(caret, caret);
    textarea.focus();
    setTrigger(undefined);
    onText(value);
  }

  function choose(candidate: SessionCandidate) {
    const textarea = area.current;
    if (!textarea || !trigger) return;
    replaceRange(trigger.at, textarea.selectionStart, candidate.mention);
  }

  // Insertions requested by the page (a session row's "Cite" button).
  useEffect(() => {
    const textarea = area.current;
    if (!insertRequest || !textarea) return;
    replaceRange(textarea.selectionStart, textarea.selectionEnd, insertRequest.text);
  }, [insertRequest?.nonce]);

  function onKeyDown(event: KeyboardEvent) {
    if (!open) return;
    if (event.key === 'Escape') {
      event.preventDefault();
      setDismissedAt(trigger!.at);
      return;
    }
    if (candidates.length === 0) return;
    if (event.key === 'ArrowDown') {
      event.preventDefault();
      setActive((index) => (index + 1) % candidates.length);
    } else if (event.key === 'ArrowUp') {
      event.preventDefault();
      setActive((index) => (index - 1 + candidates.length) % candidates.length);
    } else if (event.key === 'Enter' || event.key === 'Tab') {
      event.preventDefault();
      choose(candidates[Math.min(active, candidates.length - 1)]!);
    }
  }

  /** Under the `@`, but never past the composer's right edge. */
  function popupLeft(caretLeft: number): number {
    const width = box.current?.clientWidth ?? 0;
    return Math.max(0, Math.min(caretLeft, width - Math.min(POPUP_WIDTH, width)));
  }

  const activeId = open && candidates.length > 0 ? `candidate-${Math.min(active, candidates.length - 1)}` : undefined;

  return html`
    <div class="composer" ref=${box}>
      <textarea
        ref=${area}
        data-testid="composer"
        class="composer-input"
        rows="7"
        spellcheck=${false}
        placeholder="Type your request. Type @ to cite another session (filter by id or cwd), ↑/↓ to choose, Enter to insert."
        value=${text}
        role="combobox"
        aria-autocomplete="list"
        aria-expanded=${open}
        aria-controls="candidate-list"
        aria-activedescendant=${activeId}
        onInput=${(event: Event) => {
          onText((event.currentTarget as HTMLTextAreaElement).value);
          updateTrigger();
        }}
        onKeyDown=${onKeyDown}
        onKeyUp=${(event: KeyboardEvent) => {
          if (!['ArrowDown', 'ArrowUp', 'Enter', 'Tab', 'Escape'].includes(event.key)) updateTrigger();
        }}
        onClick=${updateTrigger}
        onBlur=${() => setTimeout(() => setTrigger(undefined), 150)}
        onScroll=${updateTrigger}
      ></textarea>
      ${open &&
      html`<div
        class="candidates"
        data-testid="candidates"
        style=${{ top: `${point.top + point.height + 4}px`, left: `${popupLeft(point.left)}px` }}
      >
        <div class="candidates-head">
          ${loading ? 'searching…' : `${candidates.length} candidate${candidates.length === 1 ? '' : 's'}`}
          ${trigger!.query !== '' && html` for <code>${trigger!.query}</code>`}
          <span class="hint">↑↓ move · Enter insert · Esc close</span>
        </div>
        ${listError && html`<div class="inline-error" data-testid="candidate-error"><code>${listError.code}</code> ${listError.message}</div>`}
        ${!listError && !loading && candidates.length === 0 && html`<div class="empty">No session id or cwd contains “${trigger!.query}”.</div>`}
        <ul id="candidate-list" role="listbox" ref=${list}>
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
              onMouseEnter=${() => setActive(index)}
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
