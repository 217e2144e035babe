/**
 * `createMentionEditor`: a `contenteditable` composer whose source of truth is the canonical text
 * (SPEC §15.8). Every edit the browser proposes (`beforeinput`, paste, cut, drop, undo keys) is
 * cancelled and made on the text with the pure functions of §15.7, then the element is redrawn
 * from the text; an IME composition is left to the browser and applied when it ends.
 * @module
 */
import { readCallerFields } from '../../caller-data.js';
import { check } from '../../errors.js';
import type { SessionCandidate } from '../../candidates.js';
import { deleteBackward, deleteForward, moveCaret, normalizeSelection, replaceSelection, type EditUnit, type MentionEdit, type MentionSelection } from '../edit.js';
import { scanSessionReferenceText } from '../../mention.js';
import { findMentionTrigger, insertMention, type MentionTrigger } from '../trigger.js';
import { EditHistory, type EditKind } from './history.js';
import { TextView } from './view.js';

/** The `@` being typed (SPEC §15.1) and where it stands on screen. */
export interface MentionEditorTrigger extends MentionTrigger {
  /** The client rectangle of the `@` (viewport coordinates, as `getBoundingClientRect`), for placing the app's menu. */
  rect: DOMRect;
}

/** Options of {@link createMentionEditor}; every one may be absent or `undefined`. */
export interface MentionEditorOptions {
  /** The initial canonical text (default `''`). */
  text?: string | undefined;
  /** Called with the new text after every edit the person makes (not after {@link MentionEditor.setText}). */
  onChange?: ((text: string) => void) | undefined;
  /** Called whenever the trigger changes: a new `@`, a new query, or `undefined` when there is none. */
  onTrigger?: ((trigger: MentionEditorTrigger | undefined) => void) | undefined;
}

/**
 * A candidate to insert: a {@link SessionCandidate} row of `listCandidates` (SPEC §6.5; its
 * `mention` is used), a `./dsh` row without `mention`, or any `{ sessionId, label? }`.
 */
export interface MentionCandidate {
  sessionId: string;
  /** Shown text; defaults to `sessionId`. */
  label?: string | undefined;
  /** A canonical mention (`@[label](dsh-session:…)`); when present it wins over `sessionId` and `label`. */
  mention?: string | undefined;
}

/** The composer {@link createMentionEditor} returns (SPEC §15.8). */
export interface MentionEditor {
  /** The canonical text: what the person typed, mentions as `@[label](dsh-session:…)`. */
  readonly text: string;
  /** The `@` the caret is typing after, or `undefined`. */
  readonly trigger: MentionEditorTrigger | undefined;
  /** Replaces the text (no `onChange`; the undo history starts again). The same text is a no-op. */
  setText(text: string): void;
  /**
   * Inserts `candidate` as a chip and one space: in place of the trigger when there is one, else
   * at the selection; the caret goes after it. Where an edit could not keep the chips as they are
   * (SPEC §15.7), nothing is inserted.
   */
  insert(candidate: MentionCandidate): void;
  /** Focuses the element and puts the selection back where it was. */
  focus(): void;
  /** Removes every listener and makes the element what it was (its content stays as drawn). */
  destroy(): void;
}

/** Elements that have an editor: one editor per element. */
const attached = new WeakSet<HTMLElement>();

/** Plain-data copy of the options (SPEC §10.4: read once). */
function readOptions(options: unknown): MentionEditorOptions & { text: string } {
  if (options === undefined) return { text: '', onChange: undefined, onTrigger: undefined };
  check(typeof options === 'object' && options !== null, 'INVALID_ARGUMENT', 'options must be an object', options);
  // Each option read once (SPEC §10.4): a throwing getter or a revoked proxy is INVALID_ARGUMENT naming it.
  const { text, onChange, onTrigger } = readCallerFields(options, ['text', 'onChange', 'onTrigger'], 'options');
  check(text === undefined || typeof text === 'string', 'INVALID_ARGUMENT', 'options.text must be a string', text);
  check(onChange === undefined || typeof onChange === 'function', 'INVALID_ARGUMENT', 'options.onChange must be a function', onChange);
  check(onTrigger === undefined || typeof onTrigger === 'function', 'INVALID_ARGUMENT', 'options.onTrigger must be a function', onTrigger);
  return { text: text ?? '', onChange: onChange as MentionEditorOptions['onChange'], onTrigger: onTrigger as MentionEditorOptions['onTrigger'] };
}

/** The canonical mention of a candidate and the space after it (SPEC §15.2), read once. */
function candidateMention(candidate: unknown): string {
  const { sessionId, label, mention } = readCallerFields(candidate, ['sessionId', 'label', 'mention'], 'candidate');
  const input = typeof mention === 'string' ? mention : { sessionId: sessionId as string, label: label as string | undefined };
  return insertMention('', { start: 0, end: 0 }, input).text;
}

/** `\r\n` and lone `\r` as `\n`: the composer keeps one kind of line break. */
const lineBreaks = (text: string): string => text.replace(/\r\n?/g, '\n');

/**
 * Makes `element` a composer for prompt text with session mentions as chips (SPEC §15.8).
 *
 * The element becomes `contenteditable` and shows `options.text` as §15.6 segments: plain runs as
 * text, each mention as a non-editable `<span class="dsh-mention">` showing `@label`, with
 * `data-session-id` and the id in `title`; an invalid one has `data-valid="false"` and the
 * error's message in `title`. Typing, Enter, Backspace/Delete by character and by word
 * (Ctrl/Alt), paste, cut, copy (the canonical markup goes to the clipboard, so a copied chip pastes
 * as a chip), drag and drop, undo/redo (Ctrl/⌘+Z, Ctrl/⌘+Shift+Z, Ctrl+Y, and the browser's
 * history commands) and IME composition are made on the text by §15.7's functions; ←/→ step over
 * a chip. One undo step per edit; a burst of typing (or of Backspace, or of Delete) is one step.
 * The element gets `white-space: pre-wrap` when it has no `white-space` of its own.
 *
 * Menu keys are the app's: a `keydown` listener on the element that calls `preventDefault()`
 * for ↑/↓/Enter/Tab/Esc while its menu is open keeps them from the text (Enter types a line break
 * through `beforeinput`, which a cancelled `keydown` never sends). Browsers only; no framework.
 * @example
 * const editor = createMentionEditor(document.querySelector('#composer')!, {
 *   onChange: (text) => (draft = text),
 *   onTrigger: async (trigger) => showMenu(trigger && (await refs.listCandidates(agent, trigger.query)), trigger?.rect),
 * });
 * // when the person picks a row of the menu:
 * editor.insert(candidate);
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `element` is not an
 * element or already has an editor, or an option has the wrong type.
 */
export function createMentionEditor(element: HTMLElement, options?: MentionEditorOptions): MentionEditor {
  const { nodeType, addEventListener } = readCallerFields(element, ['nodeType', 'addEventListener'], 'element');
  check(
    typeof element === 'object' && element !== null && nodeType === 1 && typeof addEventListener === 'function',
    'INVALID_ARGUMENT',
    'element must be an HTML element',
    element,
  );
  check(!attached.has(element), 'INVALID_ARGUMENT', 'element already has a mention editor (destroy it first)', element);
  const { text: initial, onChange, onTrigger } = readOptions(options);
  const document = element.ownerDocument;
  const view = new TextView(element);
  const history = new EditHistory();
  let text = initial;
  let selection: MentionSelection = { anchor: text.length, focus: text.length };
  let trigger: MentionEditorTrigger | undefined;
  /** The selection when an IME composition started; set while one runs. */
  let composing: MentionSelection | undefined;
  /** The canonical range being dragged out of this element, if any. */
  let dragged: { start: number; end: number } | undefined;
  let destroyed = false;

  const restore = { contentEditable: element.getAttribute('contenteditable'), whiteSpace: element.style.whiteSpace };
  attached.add(element);
  element.contentEditable = 'true';
  if (getComputedStyle(element).whiteSpace === 'normal') element.style.whiteSpace = 'pre-wrap';
  view.draw(text);

  const focused = () => document.activeElement === element;

  /** The DOM selection as text offsets (normalized), or the model's when it is outside the element. */
  function readSelection(): MentionSelection {
    const dom = document.getSelection();
    if (dom === null || dom.rangeCount === 0) return selection;
    const anchor = view.offsetOf(dom.anchorNode, dom.anchorOffset);
    const focus = view.offsetOf(dom.focusNode, dom.focusOffset);
    if (anchor === undefined || focus === undefined) return selection;
    return normalizeSelection(text, { anchor, focus }).selection;
  }

  /** Puts the model selection into the DOM (only while focused: never steals the page's selection). */
  function writeSelection(): void {
    const dom = document.getSelection();
    if (dom === null || !focused()) return;
    const anchor = view.pointOf(selection.anchor);
    const focus = view.pointOf(selection.focus);
    dom.setBaseAndExtent(anchor.node, anchor.offset, focus.node, focus.offset);
  }

  /** Recomputes the trigger and reports it when its `@` or query changed. */
  function updateTrigger(): void {
    const found = selection.anchor === selection.focus ? findMentionTrigger(text, selection.focus) : undefined;
    if (found?.start === trigger?.start && found?.end === trigger?.end && found?.query === trigger?.query) return;
    trigger = found && { ...found, rect: view.rectOf(found.start) };
    onTrigger?.(trigger);
  }

  /** Shows `edit` (text and selection); `fresh` draws every node anew. */
  function show(edit: MentionEdit, fresh = false): void {
    const changed = edit.text !== text;
    text = edit.text;
    selection = edit.selection;
    if (changed || fresh) view.draw(text, fresh);
    writeSelection();
    if (changed) onChange?.(text);
    updateTrigger();
  }

  /** Makes an edit the person asked for: one history step (or part of a burst), then shows it. */
  function apply(kind: EditKind, edit: MentionEdit, fresh = false): void {
    if (edit.text !== text) history.record(kind, { text, selection }, edit);
    show(edit, fresh);
  }

  function undo(): void {
    const step = history.undo();
    if (step !== undefined) show(step);
  }

  function redo(): void {
    const step = history.redo();
    if (step !== undefined) show(step);
  }

  /** The text range of the event's first target range (normalized), or the selection. */
  function targetOf(event: InputEvent): MentionSelection {
    const [range] = event.getTargetRanges();
    const start = range && view.offsetOf(range.startContainer, range.startOffset);
    const end = range && view.offsetOf(range.endContainer, range.endOffset);
    return start === undefined || end === undefined ? selection : normalizeSelection(text, { anchor: start, focus: end }).selection;
  }

  const unitOf = (inputType: string): EditUnit => (inputType.includes('Word') ? 'word' : 'character');

  function onBeforeInput(event: InputEvent): void {
    // The browser draws an IME composition itself; it is applied at `compositionend`.
    if (composing !== undefined || event.inputType === 'insertCompositionText') return;
    event.preventDefault();
    selection = readSelection();
    const { inputType } = event;
    const data = event.data ?? event.dataTransfer?.getData('text/plain') ?? '';
    if (inputType === 'insertText') apply('typing', replaceSelection(text, selection, lineBreaks(data)));
    else if (inputType === 'insertLineBreak' || inputType === 'insertParagraph') apply('other', replaceSelection(text, selection, '\n'));
    else if (inputType === 'deleteContentBackward' || inputType === 'deleteWordBackward') {
      apply('deleteBackward', deleteBackward(text, selection, { unit: unitOf(inputType) }));
    } else if (inputType === 'deleteContentForward' || inputType === 'deleteWordForward') {
      apply('deleteForward', deleteForward(text, selection, { unit: unitOf(inputType) }));
    } else if (inputType === 'historyUndo') undo();
    else if (inputType === 'historyRedo') redo();
    else if (inputType.startsWith('insert') && inputType !== 'insertFromDrop') {
      // Paste not caught by `paste`, spelling corrections, yank: the text given, over the target.
      apply('other', replaceSelection(text, targetOf(event), lineBreaks(data)));
    } else if (inputType.startsWith('delete') && inputType !== 'deleteByDrag') {
      // Line deletions, cut not caught by `cut`: the browser's target range, widened to whole chips.
      apply('other', replaceSelection(text, targetOf(event), ''));
    }
    // Formatting is refused: the composer holds plain text only. Drops are handled at `drop`.
  }

  function onKeyDown(event: KeyboardEvent): void {
    if (event.defaultPrevented || event.isComposing || composing !== undefined) return;
    const command = (event.ctrlKey || event.metaKey) && !event.altKey;
    const key = event.key.toLowerCase();
    if (command && (key === 'z' || key === 'y')) {
      // Chromium sends no `historyUndo` while its own history is empty, and it always is.
      event.preventDefault();
      if (key === 'z' && !event.shiftKey) undo();
      else redo();
      return;
    }
    if ((event.key === 'ArrowLeft' || event.key === 'ArrowRight') && !event.shiftKey && !event.metaKey) {
      // ←/→ over a chip: one move. Elsewhere the browser moves the caret (bidirectional text).
      selection = readSelection();
      const unit = event.ctrlKey || event.altKey ? 'word' : 'character';
      const moved = moveCaret(text, selection, event.key === 'ArrowLeft' ? 'left' : 'right', { unit });
      const from = Math.min(selection.focus, moved.selection.focus);
      const to = Math.max(selection.focus, moved.selection.focus);
      if (selection.anchor === selection.focus && scanSessionReferenceText(text).tokens.some((chip) => chip.start >= from && chip.end <= to)) {
        event.preventDefault();
        history.seal();
        show(moved);
      }
    }
  }

  /** Reads the DOM selection after the browser moved it: out of chips, a new trigger, the burst ended. */
  function onSelectionChange(): void {
    if (composing !== undefined || !focused()) return;
    const dom = document.getSelection();
    if (dom === null || dom.rangeCount === 0 || !element.contains(dom.anchorNode)) return;
    const next = readSelection();
    if (next.anchor === selection.anchor && next.focus === selection.focus) return;
    selection = next;
    history.seal();
    // A caret the browser put inside a chip is moved out of it.
    if (dom.isCollapsed && view.offsetOf(dom.focusNode, dom.focusOffset) !== next.focus) writeSelection();
    updateTrigger();
  }

  function onCopy(event: ClipboardEvent, cut: boolean): void {
    selection = readSelection();
    const start = Math.min(selection.anchor, selection.focus);
    const end = Math.max(selection.anchor, selection.focus);
    if (start === end || event.clipboardData === null) return;
    event.preventDefault();
    // The canonical markup, so a copied chip pastes as a chip.
    event.clipboardData.setData('text/plain', text.slice(start, end));
    if (cut) apply('other', replaceSelection(text, selection, ''));
  }

  function onPaste(event: ClipboardEvent): void {
    event.preventDefault();
    selection = readSelection();
    apply('other', replaceSelection(text, selection, lineBreaks(event.clipboardData?.getData('text/plain') ?? '')));
  }

  function onDragStart(event: DragEvent): void {
    selection = readSelection();
    const start = Math.min(selection.anchor, selection.focus);
    const end = Math.max(selection.anchor, selection.focus);
    if (start === end || event.dataTransfer === null) return;
    event.dataTransfer.setData('text/plain', text.slice(start, end));
    event.dataTransfer.effectAllowed = 'copyMove';
    dragged = { start, end };
  }

  function onDragOver(event: DragEvent): void {
    if (event.dataTransfer?.types.includes('text/plain')) event.preventDefault();
  }

  /** A text drop: at the point dropped on; a drag out of this element moves (one undo step). */
  function onDrop(event: DragEvent): void {
    const data = event.dataTransfer?.getData('text/plain');
    const source = dragged;
    dragged = undefined;
    if (!data) return;
    event.preventDefault();
    const at = dropOffset(event);
    if (at === undefined) return;
    const move = source !== undefined && !(event.ctrlKey || event.altKey);
    if (move && at > source.start && at < source.end) return;
    let edit: MentionEdit = { text, selection };
    let to = at;
    if (move) {
      edit = replaceSelection(text, { anchor: source.start, focus: source.end }, '');
      if (at >= source.end) to = at - (text.length - edit.text.length);
    }
    const caret = normalizeSelection(edit.text, { anchor: to, focus: to }).selection;
    apply('other', replaceSelection(edit.text, caret, lineBreaks(data)));
  }

  /** The text offset under a drop's pointer. */
  function dropOffset(event: DragEvent): number | undefined {
    const position = document.caretPositionFromPoint?.(event.clientX, event.clientY);
    if (position) return view.offsetOf(position.offsetNode, position.offset);
    const range = document.caretRangeFromPoint?.(event.clientX, event.clientY);
    return range ? view.offsetOf(range.startContainer, range.startOffset) : undefined;
  }

  function onCompositionStart(): void {
    composing = readSelection();
  }

  function onCompositionEnd(event: CompositionEvent): void {
    const at = composing ?? selection;
    composing = undefined;
    // The browser changed the DOM itself: draw every node anew, even when the text is unchanged.
    apply('typing', replaceSelection(text, at, lineBreaks(event.data)), true);
  }

  /** A change that was not ours (never expected: every edit is cancelled): back to the text. */
  function onInput(): void {
    if (composing === undefined) show({ text, selection }, true);
  }

  const listeners: Array<[EventTarget, string, (event: never) => void]> = [
    [element, 'beforeinput', onBeforeInput],
    [element, 'keydown', onKeyDown],
    [element, 'copy', (event: ClipboardEvent) => onCopy(event, false)],
    [element, 'cut', (event: ClipboardEvent) => onCopy(event, true)],
    [element, 'paste', onPaste],
    [element, 'dragstart', onDragStart],
    [element, 'dragover', onDragOver],
    [element, 'drop', onDrop],
    [element, 'dragend', () => (dragged = undefined)],
    [element, 'compositionstart', onCompositionStart],
    [element, 'compositionend', onCompositionEnd],
    [element, 'input', onInput],
    [document, 'selectionchange', onSelectionChange],
  ];
  for (const [target, type, listener] of listeners) target.addEventListener(type, listener as EventListener);

  const alive = (): void => check(!destroyed, 'INVALID_ARGUMENT', 'the mention editor was destroyed', element);

  return {
    get text() {
      return text;
    },
    get trigger() {
      return trigger;
    },
    setText(next: string) {
      alive();
      check(typeof next === 'string', 'INVALID_ARGUMENT', 'text must be a string', next);
      if (next === text) return;
      history.clear();
      const caret = next.length;
      text = next;
      selection = { anchor: caret, focus: caret };
      view.draw(text);
      writeSelection();
      updateTrigger();
    },
    insert(candidate: MentionCandidate) {
      alive();
      const mention = candidateMention(candidate);
      selection = focused() ? readSelection() : selection;
      const range = trigger ? { anchor: trigger.start, focus: trigger.end } : selection;
      const after = text.slice(Math.max(range.anchor, range.focus));
      element.focus();
      apply('other', replaceSelection(text, range, /^\s/.test(after) ? mention.trimEnd() : mention));
    },
    focus() {
      alive();
      element.focus();
      writeSelection();
    },
    destroy() {
      if (destroyed) return;
      destroyed = true;
      for (const [target, type, listener] of listeners) target.removeEventListener(type, listener as EventListener);
      if (restore.contentEditable === null) element.removeAttribute('contenteditable');
      else element.setAttribute('contenteditable', restore.contentEditable);
      element.style.whiteSpace = restore.whiteSpace;
      attached.delete(element);
    },
  };
}
