/**
 * The prompt composer: a chip editor over the canonical text. Mentions show as atomic chips
 * (label; id on hover; warning style when malformed or not in the store), while the text the page
 * keeps and sends stays exactly the `@[label](dsh-session:…)` markup (the "raw" view shows and
 * edits it). `@` opens session candidates from `listCandidates`: ↑/↓ to move, Enter or Tab to
 * insert, Esc to close (SPEC §13, §15).
 *
 * The editable element is a `contenteditable` whose content this component draws itself from the
 * model; every edit (typing, Enter, Backspace/Delete, paste, cut, undo) is intercepted and applied
 * to the model first (chips.ts), so the DOM never holds anything the model does not.
 */
import { h } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import { findMentionTrigger, insertMention, type MentionTrigger } from '../../src/editor/index.js';
import type { SessionCandidate, SessionReferenceMentionInput, SessionReferences, TargetAgent } from '../../src/index.js';
import {
  deleteBackward,
  deleteForward,
  normalizePastedText,
  replaceSelection,
  segmentsOf,
  snapOffset,
  stepOverChip,
  type Edit,
  type Segment,
  type Selection,
} from './chips.js';
import { toErrorInfo, type ErrorInfo } from './sessions.js';

const html = htm.bind(h);

/** Width of the candidate list (px); style.css caps it at the composer's width. */
const POPUP_WIDTH = 560;
/** Undo steps kept. */
const HISTORY_LIMIT = 200;

const CWD_GROUP = { same: 'same cwd', none: 'no cwd', other: 'other cwd' } as const;

function cwdGroup(candidate: SessionCandidate, agentCwd: string | undefined): keyof typeof CWD_GROUP {
  if (!candidate.cwd) return 'none';
  return agentCwd && candidate.cwd === agentCwd ? 'same' : 'other';
}

/** One drawn piece of the editor and the text range it stands for. */
interface Piece {
  node: Node;
  segment: Segment;
}

/** Draws the segments into `root`: a text node per plain run, a non-editable span per chip. */
function draw(root: HTMLElement, text: string, segments: readonly Segment[]): Piece[] {
  const pieces: Piece[] = [];
  const nodes: Node[] = [];
  for (const segment of segments) {
    let node: Node;
    if (segment.chip) {
      const chip = segment.chip;
      const span = document.createElement('span');
      span.className = `chip chip-${chip.state}`;
      span.contentEditable = 'false';
      span.title = chip.title;
      span.textContent = chip.text;
      span.dataset.testid = 'chip';
      span.dataset.state = chip.state;
      span.dataset.kind = chip.kind;
      if (chip.sessionId !== undefined) span.dataset.sessionId = chip.sessionId;
      if (chip.code !== undefined) span.dataset.code = chip.code;
      node = span;
    } else {
      node = document.createTextNode(text.slice(segment.start, segment.end));
    }
    pieces.push({ node, segment });
    nodes.push(node);
  }
  // A final line break needs something after it to take up a line.
  if (text.endsWith('\n')) nodes.push(document.createElement('br'));
  root.replaceChildren(...nodes);
  return pieces;
}

/** The text offset of a DOM point inside the editor (a point inside a chip snaps to its end). */
function offsetOf(pieces: readonly Piece[], root: HTMLElement, node: Node, offset: number, textLength: number): number {
  if (node === root) {
    const child = root.childNodes[offset];
    const piece = child && pieces.find((p) => p.node === child);
    return piece ? piece.segment.start : textLength;
  }
  for (const piece of pieces) {
    if (piece.node === node) return piece.segment.start + Math.min(offset, piece.segment.end - piece.segment.start);
    if (piece.segment.chip && piece.node.contains(node)) return piece.segment.end;
  }
  return textLength;
}

/** The DOM point of a text offset outside chips: always inside a plain run's text node. */
function pointOf(pieces: readonly Piece[], offset: number): { node: Node; offset: number } | undefined {
  for (const piece of pieces) {
    if (!piece.segment.chip && piece.segment.start <= offset && offset <= piece.segment.end) {
      return { node: piece.node, offset: offset - piece.segment.start };
    }
  }
  return undefined;
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
  /**
   * The newest text, for handlers: a `selectionchange` can arrive before the effects of a render
   * have re-registered their listeners, and must never read the text of an older render.
   */
  const latest = useRef(text);
  latest.current = text;
  const editor = useRef<HTMLDivElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const pieces = useRef<Piece[]>([]);
  /** Where the caret goes after the next draw (set by every edit). */
  const pendingCaret = useRef<number | undefined>(undefined);
  /** The model selection, kept in step with the DOM one. */
  const selection = useRef<Selection>({ start: text.length, end: text.length });
  const history = useRef<Edit[]>([]);
  const future = useRef<Edit[]>([]);
  const composing = useRef<Selection | undefined>(undefined);
  const [raw, setRaw] = useState(false);
  const [trigger, setTrigger] = useState<MentionTrigger | undefined>(undefined);
  const [dismissedAt, setDismissedAt] = useState<number | undefined>(undefined);
  const [list, setList] = useState<CandidateList | undefined>(undefined);
  const [active, setActive] = useState(0);
  const [point, setPoint] = useState({ top: 0, left: 0, height: 20 });
  const open = trigger !== undefined && trigger.start !== dismissedAt;
  // Only the rows that answer the query being typed count: while they load, nothing is selectable.
  const current =
    open && list && list.at === trigger.start && list.query === trigger.query && list.service === service && list.agent === agent ? list : undefined;
  const candidates = current?.candidates ?? [];
  const agentCwd = typeof agent.cwd === 'string' && agent.cwd !== '' ? agent.cwd : undefined;

  /**
   * Reads the DOM selection into the model (snapped out of chips), updates the `@` trigger and
   * returns it. Every handler starts here, so a selection change whose event has not arrived yet
   * is never missed.
   */
  function syncSelection(): Selection {
    const text = latest.current;
    const root = editor.current;
    const dom = document.getSelection();
    if (!root || !dom || dom.rangeCount === 0 || !root.contains(dom.anchorNode)) return selection.current;
    const range = dom.getRangeAt(0);
    const start = offsetOf(pieces.current, root, range.startContainer, range.startOffset, text.length);
    const end = offsetOf(pieces.current, root, range.endContainer, range.endOffset, text.length);
    const snapped = { start: snapOffset(text, Math.min(start, end), false), end: snapOffset(text, Math.max(start, end), true) };
    selection.current = snapped;
    // A caret the browser put inside a chip is moved out of it.
    if (range.collapsed && snapped.start !== start) placeCaret(snapped.start);
    updateTrigger(snapped);
    return snapped;
  }

  function updateTrigger(sel: Selection) {
    const text = latest.current;
    const next = sel.start === sel.end ? findMentionTrigger(text, sel.start) : undefined;
    setTrigger((old) => (old?.start === next?.start && old?.query === next?.query ? old : next));
    if (next === undefined || next.start !== dismissedAt) setDismissedAt(undefined);
    if (next && editor.current) setPoint(caretPoint(next.start));
  }

  function placeCaret(offset: number) {
    const target = pointOf(pieces.current, offset);
    const dom = document.getSelection();
    if (!target || !dom) return;
    dom.setBaseAndExtent(target.node, target.offset, target.node, target.offset);
  }

  /** Pixel position of a text offset relative to the composer box. */
  function caretPoint(offset: number): { top: number; left: number; height: number } {
    const target = pointOf(pieces.current, offset);
    if (!target || !box.current) return point;
    const range = document.createRange();
    range.setStart(target.node, target.offset);
    range.collapse(true);
    const rect = range.getClientRects()[0] ?? (target.node.parentElement ?? box.current).getBoundingClientRect();
    const outer = box.current.getBoundingClientRect();
    return { top: rect.top - outer.top, left: rect.left - outer.left, height: rect.height || 20 };
  }

  /** Applies an edit to the model: one undo step, then the text goes up and the caret is placed after the draw. */
  function apply(edit: Edit) {
    const text = latest.current;
    if (edit.text === text) {
      pendingCaret.current = edit.caret;
      placeCaret(edit.caret);
      selection.current = { start: edit.caret, end: edit.caret };
      updateTrigger(selection.current);
      return;
    }
    history.current.push({ text, caret: selection.current.start });
    if (history.current.length > HISTORY_LIMIT) history.current.shift();
    future.current = [];
    pendingCaret.current = edit.caret;
    onText(edit.text);
  }

  // Redraw whenever the text or the store's ids change; then put the caret where the edit left it.
  useLayoutEffect(() => {
    const root = editor.current;
    if (!root) return;
    pieces.current = draw(root, text, segmentsOf(text, knownIds));
    const caret = pendingCaret.current;
    pendingCaret.current = undefined;
    if (caret !== undefined && document.activeElement === root) {
      placeCaret(caret);
      selection.current = { start: caret, end: caret };
      updateTrigger(selection.current);
    } else {
      const clamp = (offset: number) => snapOffset(text, Math.min(offset, text.length));
      selection.current = { start: clamp(selection.current.start), end: clamp(selection.current.end) };
    }
  }, [text, knownIds, raw]);

  useEffect(() => {
    const onChange = () => {
      if (document.activeElement === editor.current && composing.current === undefined) syncSelection();
    };
    document.addEventListener('selectionchange', onChange);
    return () => document.removeEventListener('selectionchange', onChange);
  });

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
    const text = latest.current;
    if (!trigger) return;
    setTrigger(undefined);
    apply(insertMention(text, trigger, candidate.mention));
  }

  // Insertions requested by the page (a session row's "Cite" button): at the caret, with a space after.
  useEffect(() => {
    if (!insertRequest) return;
    const text = latest.current;
    editor.current?.focus();
    apply(insertMention(text, selection.current, insertRequest.mention));
  }, [insertRequest?.nonce]);

  function undo(stack: Edit[], other: Edit[]) {
    const text = latest.current;
    const step = stack.pop();
    if (!step) return;
    other.push({ text, caret: selection.current.start });
    pendingCaret.current = step.caret;
    onText(step.text);
  }

  function onBeforeInput(event: InputEvent) {
    const text = latest.current;
    if (event.inputType === 'insertCompositionText') return; // IME: applied at compositionend
    event.preventDefault();
    const sel = syncSelection();
    switch (event.inputType) {
      case 'insertText':
      case 'insertReplacementText':
        apply(replaceSelection(text, sel, normalizePastedText(event.data ?? event.dataTransfer?.getData('text/plain') ?? '')));
        break;
      case 'insertLineBreak':
      case 'insertParagraph':
        apply(replaceSelection(text, sel, '\n'));
        break;
      case 'deleteContentBackward':
        apply(deleteBackward(text, sel));
        break;
      case 'deleteContentForward':
        apply(deleteForward(text, sel));
        break;
      case 'historyUndo':
        undo(history.current, future.current);
        break;
      case 'historyRedo':
        undo(future.current, history.current);
        break;
      default:
        // Word and line deletions, cut: the browser's own target range, widened to whole chips.
        if (event.inputType.startsWith('delete')) {
          const root = editor.current!;
          const [range] = event.getTargetRanges();
          if (!range) break;
          const start = offsetOf(pieces.current, root, range.startContainer, range.startOffset, text.length);
          const end = offsetOf(pieces.current, root, range.endContainer, range.endOffset, text.length);
          apply(replaceSelection(text, { start: Math.min(start, end, sel.start), end: Math.max(start, end, sel.end) }, ''));
        }
      // Formatting and drops are refused: the composer holds plain text only.
    }
  }

  function onKeyDown(event: KeyboardEvent) {
    const text = latest.current;
    if (open && event.key === 'Escape') {
      event.preventDefault();
      setDismissedAt(trigger!.start);
      return;
    }
    if (open && (event.key === 'ArrowDown' || event.key === 'ArrowUp' || event.key === 'Enter' || event.key === 'Tab')) {
      // While the rows for this query load, these keys wait for them instead of typing.
      event.preventDefault();
      if (candidates.length === 0) return;
      if (event.key === 'ArrowDown') setActive((index) => (index + 1) % candidates.length);
      else if (event.key === 'ArrowUp') setActive((index) => (index - 1 + candidates.length) % candidates.length);
      else choose(candidates[Math.min(active, candidates.length - 1)]!);
      return;
    }
    // Undo and redo (Chromium sends no historyUndo input event when its own history is empty, and
    // it is: every edit here is the model's).
    const command = (event.ctrlKey || event.metaKey) && !event.altKey;
    if (command && (event.key === 'z' || event.key === 'Z' || event.key === 'y')) {
      event.preventDefault();
      if (event.key === 'z' && !event.shiftKey) undo(history.current, future.current);
      else undo(future.current, history.current);
      return;
    }
    const plain = !event.shiftKey && !event.altKey && !event.ctrlKey && !event.metaKey;
    const sel = syncSelection();
    if (plain && (event.key === 'ArrowLeft' || event.key === 'ArrowRight') && sel.start === sel.end) {
      const to = stepOverChip(text, sel.start, event.key === 'ArrowLeft' ? -1 : 1);
      if (to !== undefined) {
        event.preventDefault();
        apply({ text, caret: to });
      }
    } else if (plain && event.key === 'Backspace') {
      event.preventDefault();
      apply(deleteBackward(text, sel));
    } else if (plain && event.key === 'Delete') {
      event.preventDefault();
      apply(deleteForward(text, sel));
    }
  }

  function onPaste(event: ClipboardEvent) {
    const text = latest.current;
    event.preventDefault();
    const pasted = normalizePastedText(event.clipboardData?.getData('text/plain') ?? '');
    apply(replaceSelection(text, syncSelection(), pasted));
  }

  /** Copy and cut put the canonical markup on the clipboard, so a copied chip pastes as a chip. */
  function onCopy(event: ClipboardEvent, cut: boolean) {
    const text = latest.current;
    const { start, end } = syncSelection();
    if (start === end || !event.clipboardData) return;
    event.preventDefault();
    event.clipboardData.setData('text/plain', text.slice(start, end));
    if (cut) apply(replaceSelection(text, selection.current, ''));
  }

  function onCompositionStart() {
    composing.current = syncSelection();
  }

  function onCompositionEnd(event: CompositionEvent) {
    const text = latest.current;
    const at = composing.current ?? selection.current;
    composing.current = undefined;
    const edit = replaceSelection(text, at, event.data);
    // The browser drew the composition itself: redraw from the model even if the text is unchanged.
    if (edit.text === text) pieces.current = draw(editor.current!, text, segmentsOf(text, knownIds));
    apply(edit);
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
        ref=${editor}
        data-testid="composer"
        class=${`composer-input ${text === '' ? 'is-empty' : ''}`}
        contenteditable="true"
        spellcheck=${false}
        data-placeholder="Type your request. Type @ to cite another session (filter by id or cwd), ↑/↓ to choose, Enter or Tab to insert."
        role="combobox"
        aria-multiline="true"
        aria-haspopup="listbox"
        aria-autocomplete="list"
        aria-expanded=${open}
        aria-controls="candidate-list"
        aria-activedescendant=${activeId}
        onBeforeInput=${onBeforeInput}
        onKeyDown=${onKeyDown}
        onPaste=${onPaste}
        onCopy=${(event: ClipboardEvent) => onCopy(event, false)}
        onCut=${(event: ClipboardEvent) => onCopy(event, true)}
        onCompositionStart=${onCompositionStart}
        onCompositionEnd=${onCompositionEnd}
        onDrop=${(event: DragEvent) => {
          if (!event.dataTransfer?.types.includes('Files')) event.preventDefault();
        }}
        onBlur=${() => setTimeout(() => setTrigger(undefined), 150)}
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
        style=${{ top: `${point.top + point.height + 4}px`, left: `${popupLeft(point.left)}px` }}
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
