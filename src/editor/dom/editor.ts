/**
 * `createMentionEditor`: a `contenteditable` composer whose source of truth is the canonical text
 * (SPEC §15.8), with the `@` menu and the accessibility of SPEC §15.9. Every edit the browser
 * proposes (`beforeinput`, paste, cut, drop, undo keys) is cancelled and made on the text with the
 * pure functions of §15.7, over the stretch of the draft that decides it (`./local.ts`), then only
 * that stretch is redrawn; an IME composition is left to the browser and applied when it ends.
 * @module
 */
import { check } from '../../errors.js';
import { readCallerFields } from '../../caller-data.js';
import { cleanTitleLabel } from '../../label.js';
import { endsInOpenMention, formatSessionReferenceMention, scanSessionReferenceText, type ValidSessionReferenceToken } from '../../mention.js';
import { deleteBackward, deleteForward, moveCaret, normalizeSelection, replaceSelection, type EditUnit, type MentionEdit, type MentionSelection } from '../edit.js';
import { findMentionTrigger, insertMention } from '../trigger.js';
import { AttributeLedger } from './attributes.js';
import { EditHistory, type EditKind } from './history.js';
import { stretchAround, stretchAt } from './local.js';
import type { DefaultMenu } from './menu.js';
import { readOptions, type MentionCandidate, type MentionEditor, type MentionEditorOptions, type MentionEditorTrigger } from './options.js';
import { MentionSuggester, type MentionMenuState } from './suggest.js';
import { chipLabel, TextView, type Piece } from './view.js';

/** Elements that have an editor: one editor per element. */
const attached = new WeakSet<HTMLElement>();

/**
 * The canonical mention of a candidate and the space after it (SPEC §15.2), read once, its label
 * cleaned as §6.6 cleans labels (what the menu and the chip show is what is inserted; the id when
 * nothing is left).
 */
function candidateMention(candidate: unknown): string {
  const { sessionId, label, mention } = readCallerFields(candidate, ['sessionId', 'label', 'mention'], 'candidate');
  const input = typeof mention === 'string' ? mention : { sessionId: sessionId as string, label: label as string | undefined };
  // `insertMention` checks the candidate (one valid mention, or `{ sessionId, label? }`).
  const [token] = scanSessionReferenceText(insertMention('', { start: 0, end: 0 }, input).text).tokens as [ValidSessionReferenceToken];
  const shown = cleanTitleLabel(token.label) || cleanTitleLabel(token.sessionId) || token.sessionId;
  return `${formatSessionReferenceMention({ sessionId: token.sessionId, label: shown })} `;
}

/** `\r\n` and lone `\r` as `\n`: the composer keeps one kind of line break. */
const lineBreaks = (text: string): string => text.replace(/\r\n?/g, '\n');

const shifted = (selection: MentionSelection, by: number): MentionSelection => ({ anchor: selection.anchor + by, focus: selection.focus + by });

/**
 * Makes `element` a composer for prompt text with session mentions as chips (SPEC §15.8, §15.9).
 *
 * The element becomes `contenteditable` and shows `options.text` as §15.6 segments: plain runs as
 * text, each mention as a non-editable `<span class="dsh-mention">` showing `@label` (cleaned as
 * SPEC §6.6 cleans labels), with the exact id in `data-session-id`, the id cleaned in `title`, an
 * accessible name (`options.chipLabel`, default `session: <label>`) and `role="button"` when
 * `options.onChipActivate` is given (else `role="img"`); an invalid one has `data-valid="false"`
 * and the error's message in `title`. Typing, Enter, Backspace/Delete by character and by word
 * (Ctrl/Alt), paste, cut, copy (the canonical markup goes to the clipboard, so a copied chip pastes
 * as a chip), drag and drop, undo/redo (Ctrl/⌘+Z, Ctrl/⌘+Shift+Z, Ctrl+Y, and the browser's
 * history commands) and IME composition are made on the text by §15.7's functions. ←/→ step over
 * a chip in one move (Ctrl/Alt: by word); Shift+←/→ next to a chip selects it whole (a screen
 * reader reads its name). Enter on a selected chip, or a click on one, calls
 * `options.onChipActivate`. One undo step per edit; a burst of typing (or of Backspace,
 * or of Delete) is one step. A keystroke costs what it changes: the text is edited and redrawn over
 * the stretch around the edit, not over the whole draft. The element gets `white-space: pre-wrap`
 * when it has no `white-space` of its own.
 *
 * Accessibility (SPEC §15.9, WAI-ARIA combobox pattern): with `options.suggest` the element gets
 * `role="combobox"`, `aria-autocomplete="list"`, `aria-expanded`, `aria-controls` (the listbox
 * id) and, while a row is active, `aria-activedescendant` (not `aria-multiline`, which ARIA 1.2
 * does not allow on a combobox: an axe-core audit reports it); without
 * it, `role="textbox"` (unless it has a role) and `aria-multiline="true"`. Its accessible name is
 * `options.ariaLabel`, else its own `aria-label`/`aria-labelledby`, else `'Prompt'`.
 *
 * The `@` menu (`options.suggest`): while a trigger (SPEC §15.1; with `candidateMatch: 'words'`,
 * §15.10) is being typed, `suggest.fetch(query, signal)` is called after `debounceMs` of quiet; a
 * newer query aborts the older call's signal and its late answer is never shown; answers are
 * cached per query while the same `@` is typed. The first row is active; ↓/↑ (wrapping),
 * Home/End move it, Enter and Tab insert it, Escape closes the menu until the trigger changes, a
 * click on a row inserts that row (pressing a row never takes the focus or the caret). Every
 * change of state goes to `suggest.render(state)`; without `render`, a default menu is drawn
 * (`<ul class="dsh-mention-menu" role="listbox">` right after the element, `position: fixed`, rows
 * `<li class="dsh-mention-option" role="option">`, styled by CSS custom properties
 * `--dsh-mention-menu-background`, `--dsh-mention-menu-color`, `--dsh-mention-menu-border`,
 * `--dsh-mention-menu-radius`, `--dsh-mention-menu-shadow`, `--dsh-mention-menu-max-height`,
 * `--dsh-mention-menu-z-index`, `--dsh-mention-option-active-background`,
 * `--dsh-mention-option-active-color`), placed under the `@` with `@floating-ui/dom` (flipped
 * above it, or shifted along the viewport's edge, when there is no room), loaded as a lazy chunk.
 *
 * Apps that draw their own menu without `suggest` use `onTrigger` and {@link MentionEditor.insert}:
 * a `keydown` listener on the element that calls `preventDefault()` for ↑/↓/Enter/Tab/Esc while
 * its menu is open keeps them from the text. Browsers only; no framework.
 * @example
 * const editor = createMentionEditor(document.querySelector('#composer')!, {
 *   ariaLabel: 'Message',
 *   onChange: (text) => (draft = text),
 *   suggest: { fetch: (query, signal) => refs.listCandidates(agent, query, 8, signal) },
 *   onChipActivate: ({ sessionId, rect }) => showPreview(sessionId, rect),
 * });
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
  const settings = readOptions(options);
  const { onChange, onTrigger, onChipActivate } = settings;
  const document = element.ownerDocument;
  const view = new TextView(element, { name: settings.chipLabel, activatable: onChipActivate !== undefined });
  const history = new EditHistory();
  const ledger = new AttributeLedger(element);
  let text = settings.text;
  let selection: MentionSelection = { anchor: text.length, focus: text.length };
  let trigger: MentionEditorTrigger | undefined;
  /** The selection when an IME composition started; set while one runs. */
  let composing: MentionSelection | undefined;
  /** The canonical range being dragged out of this element, if any. */
  let dragged: { start: number; end: number } | undefined;
  let destroyed = false;
  let menu: DefaultMenu | undefined;
  let menuState: MentionMenuState | undefined;

  const suggester =
    settings.suggest &&
    new MentionSuggester(settings.suggest, {
      render: renderMenu,
      insert: (item) => insert(item),
    });

  attached.add(element);
  ledger.set('contenteditable', 'true');
  if (getComputedStyle(element).whiteSpace === 'normal') {
    ledger.remember('style');
    element.style.whiteSpace = 'pre-wrap';
  }
  if (suggester) {
    ledger.set('role', 'combobox');
    ledger.set('aria-autocomplete', 'list');
    ledger.set('aria-expanded', 'false');
    ledger.set('aria-controls', suggester.listboxId);
  } else {
    // ARIA 1.2 allows `aria-multiline` on a textbox, not on a combobox (axe-core's
    // aria-allowed-attr rule), so only the composer without a menu says it.
    if (ledger.original('role') === null) ledger.set('role', 'textbox');
    ledger.set('aria-multiline', 'true');
  }
  if (settings.ariaLabel !== undefined) ledger.set('aria-label', settings.ariaLabel);
  else if (ledger.original('aria-label') === null && ledger.original('aria-labelledby') === null) ledger.set('aria-label', 'Prompt');
  view.draw(text);
  if (suggester && settings.suggest?.render === undefined) {
    // The default menu and floating-ui: a lazy chunk, loaded once per composer that uses it.
    void import('./menu.js').then(({ DefaultMenu }) => {
      if (destroyed) return;
      menu = new DefaultMenu(element, settings.suggest!.menuLabel, { select: (i) => suggester.select(i), pick: (i) => suggester.pick(i) });
      menu.render(menuState ?? closedMenu(suggester));
    });
  }

  const focused = () => document.activeElement === element;
  const indexFrom = (offset: number): number => view.indexFrom(offset);

  /** The ARIA state of the combobox, then the menu itself (the app's `render`, or the default one). */
  function renderMenu(state: MentionMenuState): void {
    menuState = state;
    ledger.set('aria-expanded', String(state.open));
    ledger.set('aria-activedescendant', state.active >= 0 ? state.optionId(state.active) : undefined);
    if (settings.suggest?.render) settings.suggest.render(state);
    else menu?.render(state);
  }

  /** `selection` normalized (SPEC §15.7) over the stretch of the draft that decides it. */
  function normalized(anchor: number, focus: number): MentionSelection {
    const { from, to } = stretchAround(view.pieces, indexFrom, Math.min(anchor, focus), Math.max(anchor, focus), text.length);
    return shifted(normalizeSelection(view.source(from, to), { anchor: anchor - from, focus: focus - from }).selection, from);
  }

  /** The DOM selection as text offsets (normalized), or the model's when it is outside the element. */
  function readSelection(): MentionSelection {
    const dom = document.getSelection();
    if (dom === null || dom.rangeCount === 0) return selection;
    const anchor = view.offsetOf(dom.anchorNode, dom.anchorOffset);
    const focus = view.offsetOf(dom.focusNode, dom.focusOffset);
    if (anchor === undefined || focus === undefined) return selection;
    return normalized(anchor, focus);
  }

  /** Puts the model selection into the DOM (only while focused: never steals the page's selection). */
  function writeSelection(): void {
    const dom = document.getSelection();
    if (dom === null || !focused()) return;
    const anchor = view.pointOf(selection.anchor);
    const focus = view.pointOf(selection.focus);
    dom.setBaseAndExtent(anchor.node, anchor.offset, focus.node, focus.offset);
  }

  /** The trigger at the caret (SPEC §15.1, §15.10), read over the stretch around it. */
  function findTrigger(): MentionEditorTrigger | undefined {
    if (selection.anchor !== selection.focus) return undefined;
    const caret = selection.focus;
    const { from, to } = stretchAt(view.pieces, indexFrom, caret, text.length);
    const found = findMentionTrigger(view.source(from, to), caret - from, { allowSpaces: suggester?.words ?? false });
    if (found === undefined) return undefined;
    const at = { start: found.start + from, end: found.end + from, query: found.query };
    return suggester === undefined || suggester.accepts(at) ? { ...at, rect: view.rectOf(at.start) } : undefined;
  }

  /** Recomputes the trigger and reports it when its `@` or query changed. */
  function updateTrigger(): void {
    const found = findTrigger();
    if (found?.start === trigger?.start && found?.end === trigger?.end && found?.query === trigger?.query) return;
    trigger = found;
    onTrigger?.(trigger);
    suggester?.update(trigger);
  }

  /** Shows a whole new text and selection (undo, redo, a composition): every node drawn anew. */
  function show(edit: MentionEdit): void {
    const changed = edit.text !== text;
    text = edit.text;
    selection = edit.selection;
    view.draw(text);
    writeSelection();
    if (changed) onChange?.(text);
    updateTrigger();
  }

  /**
   * Makes an edit the person asked for: `make` (a §15.7 function) over the stretch around
   * `range`, one history step (or part of a burst), then the stretch redrawn. When the edited
   * stretch would leave a mention open at its end (a hand-typed `@[`), the edit is made over the
   * whole draft instead.
   */
  function apply(kind: EditKind, range: MentionSelection, make: (text: string, selection: MentionSelection) => MentionEdit): void {
    const { from, to } = stretchAround(view.pieces, indexFrom, Math.min(range.anchor, range.focus), Math.max(range.anchor, range.focus), text.length);
    const part = view.source(from, to);
    const made = make(part, shifted(range, -from));
    if (to < text.length && endsInOpenMention(made.text)) {
      const whole = make(text, range);
      if (whole.text !== text) history.record(kind, { text, selection }, whole);
      show(whole);
      return;
    }
    const after = shifted(made.selection, from);
    if (made.text !== part) {
      // The new text is made from the view's blocks (a rope), never by copying the draft.
      view.replace(from, to, made.text);
      const next = view.text();
      history.record(kind, { text, selection }, { text: next, selection: after });
      text = next;
      selection = after;
      writeSelection();
      onChange?.(text);
    } else {
      selection = after;
      writeSelection();
    }
    updateTrigger();
  }

  function undo(): void {
    const step = history.undo();
    if (step !== undefined) show(step);
  }

  function redo(): void {
    const step = history.redo();
    if (step !== undefined) show(step);
  }

  /** Inserts a candidate in place of the trigger, or at the selection (SPEC §15.2). */
  function insert(candidate: MentionCandidate): void {
    const mention = candidateMention(candidate);
    selection = focused() ? readSelection() : selection;
    const range = trigger ? { anchor: trigger.start, focus: trigger.end } : selection;
    const end = Math.max(range.anchor, range.focus);
    const spaced = /^\s/.test(charAt(end)) ? mention.trimEnd() : mention;
    element.focus();
    apply('other', range, (part, at) => replaceSelection(part, at, spaced));
  }

  /** The character at `offset` ('' at the end), read from the piece that holds it. */
  function charAt(offset: number): string {
    const piece = view.pieces[indexFrom(offset)];
    return piece === undefined ? '' : piece.chip === undefined ? piece.source.charAt(offset - piece.start) : piece.source.charAt(0);
  }

  /** The chip piece that the selection covers exactly, if any. */
  function selectedChip(): Piece | undefined {
    const start = Math.min(selection.anchor, selection.focus);
    const piece = view.pieces[indexFrom(start)];
    return piece?.chip !== undefined && piece.start === start && piece.end === Math.max(selection.anchor, selection.focus) ? piece : undefined;
  }

  /** Calls `onChipActivate` for a valid chip. */
  function activate(piece: Piece): void {
    const { token } = piece.chip!;
    if (token.error !== undefined || onChipActivate === undefined) return;
    onChipActivate({ sessionId: token.sessionId, label: chipLabel(piece.chip!), rect: (piece.node as HTMLElement).getBoundingClientRect() });
  }

  /** The text range of the event's first target range, or the selection. */
  function targetOf(event: InputEvent): MentionSelection {
    const [range] = event.getTargetRanges();
    const start = range && view.offsetOf(range.startContainer, range.startOffset);
    const end = range && view.offsetOf(range.endContainer, range.endOffset);
    return start === undefined || end === undefined ? selection : { anchor: start, focus: end };
  }

  const unitOf = (inputType: string): EditUnit => (inputType.includes('Word') ? 'word' : 'character');

  /** Replaces `range` with `inserted` (typing, a paste, a drop). */
  const put = (kind: EditKind, range: MentionSelection, inserted: string) => apply(kind, range, (part, at) => replaceSelection(part, at, inserted));

  function onBeforeInput(event: InputEvent): void {
    // The browser draws an IME composition itself; it is applied at `compositionend`.
    if (composing !== undefined || event.inputType === 'insertCompositionText') return;
    event.preventDefault();
    selection = readSelection();
    const { inputType } = event;
    const data = event.data ?? event.dataTransfer?.getData('text/plain') ?? '';
    const unit = unitOf(inputType);
    if (inputType === 'insertText') put('typing', selection, lineBreaks(data));
    else if (inputType === 'insertLineBreak' || inputType === 'insertParagraph') put('other', selection, '\n');
    else if (inputType === 'deleteContentBackward' || inputType === 'deleteWordBackward') {
      apply('deleteBackward', selection, (part, at) => deleteBackward(part, at, { unit }));
    } else if (inputType === 'deleteContentForward' || inputType === 'deleteWordForward') {
      apply('deleteForward', selection, (part, at) => deleteForward(part, at, { unit }));
    } else if (inputType === 'historyUndo') undo();
    else if (inputType === 'historyRedo') redo();
    else if (inputType.startsWith('insert') && inputType !== 'insertFromDrop') {
      // Paste not caught by `paste`, spelling corrections, yank: the text given, over the target.
      put('other', targetOf(event), lineBreaks(data));
    } else if (inputType.startsWith('delete') && inputType !== 'deleteByDrag') {
      // Line deletions, cut not caught by `cut`: the browser's target range, widened to whole chips.
      put('other', targetOf(event), '');
    }
    // Formatting is refused: the composer holds plain text only. Drops are handled at `drop`.
  }

  function onKeyDown(event: KeyboardEvent): void {
    if (event.defaultPrevented || event.isComposing || composing !== undefined) return;
    if (suggester?.keydown(event)) {
      event.preventDefault();
      return;
    }
    const command = (event.ctrlKey || event.metaKey) && !event.altKey;
    const key = event.key.toLowerCase();
    if (command && (key === 'z' || key === 'y')) {
      // Chromium sends no `historyUndo` while its own history is empty, and it always is.
      event.preventDefault();
      if (key === 'z' && !event.shiftKey) undo();
      else redo();
      return;
    }
    const plain = !event.shiftKey && !event.metaKey && !event.ctrlKey && !event.altKey;
    if (event.key === 'Enter' && plain && onChipActivate !== undefined) {
      selection = readSelection();
      const chip = selectedChip();
      if (chip !== undefined) {
        event.preventDefault();
        activate(chip);
      }
      return;
    }
    if ((event.key === 'ArrowLeft' || event.key === 'ArrowRight') && !event.metaKey) {
      selection = readSelection();
      const moved = event.shiftKey ? (event.ctrlKey || event.altKey ? undefined : chipSelected(event.key)) : overChip(event.key, event.ctrlKey || event.altKey ? 'word' : 'character');
      if (moved !== undefined) {
        event.preventDefault();
        history.seal();
        selection = moved;
        writeSelection();
        updateTrigger();
      }
    }
  }

  /**
   * Shift+←/→ from a caret next to a chip selects the chip whole (SPEC §15.9: a chip reached as
   * one unit; a screen reader reads its name, Enter activates it). Elsewhere the browser extends
   * the selection (bidirectional text).
   */
  function chipSelected(key: string): MentionSelection | undefined {
    if (selection.anchor !== selection.focus) return undefined;
    const caret = selection.focus;
    const index = indexFrom(caret);
    const chip = key === 'ArrowRight' ? view.pieces[index] : view.pieces[index - 1];
    if (chip?.chip === undefined || (key === 'ArrowRight' ? chip.start : chip.end) !== caret) return undefined;
    return key === 'ArrowRight' ? { anchor: chip.start, focus: chip.end } : { anchor: chip.end, focus: chip.start };
  }

  /** ←/→ (by character, or by word with Ctrl/Alt): §15.7's move, made by the composer when it steps over a chip. */
  function overChip(key: string, unit: EditUnit): MentionSelection | undefined {
    const direction = key === 'ArrowLeft' ? 'left' : 'right';
    const { from, to } = stretchAround(view.pieces, indexFrom, Math.min(selection.anchor, selection.focus), Math.max(selection.anchor, selection.focus), text.length);
    const moved = shifted(moveCaret(view.source(from, to), shifted(selection, -from), direction, { unit }).selection, from);
    const low = Math.min(selection.focus, moved.focus);
    const high = Math.max(selection.focus, moved.focus);
    const first = view.pieces[indexFrom(low)];
    return selection.anchor === selection.focus && first?.chip !== undefined && first.start >= low && first.end <= high ? moved : undefined;
  }

  /** A click on a valid chip activates it. */
  function onClick(event: MouseEvent): void {
    const chip = view.chipOf(event.target as Node | null);
    if (chip !== undefined) activate(chip);
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
    if (cut) put('other', selection, '');
  }

  function onPaste(event: ClipboardEvent): void {
    event.preventDefault();
    selection = readSelection();
    put('other', selection, lineBreaks(event.clipboardData?.getData('text/plain') ?? ''));
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
    const dropped = replaceSelection(edit.text, caret, lineBreaks(data));
    if (dropped.text !== text) history.record('other', { text, selection }, dropped);
    show(dropped);
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
    // The browser changed the DOM itself: every node is drawn anew, even when the text is unchanged.
    const composed = replaceSelection(text, at, lineBreaks(event.data));
    if (composed.text !== text) history.record('typing', { text, selection }, composed);
    show(composed);
  }

  /** A change that was not ours (never expected: every edit is cancelled): back to the text. */
  function onInput(): void {
    if (composing === undefined) show({ text, selection });
  }

  const listeners: Array<[EventTarget, string, (event: never) => void]> = [
    [element, 'beforeinput', onBeforeInput],
    [element, 'keydown', onKeyDown],
    [element, 'click', onClick],
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
      alive();
      return text;
    },
    get trigger() {
      alive();
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
      insert(candidate);
    },
    focus() {
      alive();
      element.focus();
      writeSelection();
    },
    destroy() {
      alive();
      destroyed = true;
      for (const [target, type, listener] of listeners) target.removeEventListener(type, listener as EventListener);
      suggester?.destroy();
      menu?.remove();
      ledger.restore();
      attached.delete(element);
    },
  };
}

/** The state of a menu that has not opened yet. */
function closedMenu(suggester: MentionSuggester): MentionMenuState {
  const { listboxId, optionId } = suggester;
  return { open: false, query: '', items: [], active: -1, loading: false, error: undefined, rect: undefined, listboxId, optionId };
}
