/**
 * The public shapes of `createMentionEditor` (SPEC §15.8, §15.9) and the reading of its options
 * (each field read once, SPEC §10.4).
 * @module
 */
import { readCallerFields } from '../../caller-data.js';
import { check } from '../../errors.js';
import type { SessionCandidate } from '../../candidates.js';
import type { MentionTrigger } from '../trigger.js';
import { readSuggest, type MentionMenuState, type MentionSuggestion, type SuggestSettings } from './suggest.js';

/** The `@` being typed (SPEC §15.1) and where it stands on screen. */
export interface MentionEditorTrigger extends MentionTrigger {
  /** The client rectangle of the `@` (viewport coordinates, as `getBoundingClientRect`), for placing the app's menu. */
  rect: DOMRect;
}

/** What `onChipActivate` gets: the chip a click or Enter activated (SPEC §15.9). */
export interface MentionChipActivation {
  /** The chip's session id, exact (as in `data-session-id`). */
  sessionId: string;
  /** Its label, cleaned as SPEC §6.6 cleans labels. */
  label: string;
  /** The chip's client rectangle (viewport coordinates), for placing a preview card. */
  rect: DOMRect;
}

/**
 * The `suggest` option (SPEC §15.9): the composer then owns the `@` menu.
 */
export interface MentionSuggestOptions {
  /**
   * The rows for a query (usually `listCandidates(agent, query)` of SPEC §6, or the edge client's
   * `listCandidates`). Called after the debounce with the trigger's query and a signal that is
   * aborted (reason: a `SESSION_REFERENCE_CANCELLED` error) when a newer query supersedes the
   * call or the menu closes; a superseded call's answer is never shown. Each answer is cached per
   * query while the same `@` is being typed.
   */
  fetch(query: string, signal: AbortSignal): Promise<readonly MentionSuggestion[]>;
  /** Milliseconds of quiet typing before `fetch` is called (default 100; 0 to 60000). */
  debounceMs?: number | undefined;
  /**
   * Draws the menu from its state, on every change (the app's own markup). Without it the
   * composer draws its default menu (see `createMentionEditor`).
   */
  render?: ((state: MentionMenuState) => void) | undefined;
  /**
   * `'words'` when `fetch` matches words (`candidateMatch: 'words'`, SPEC §15.10): the query may
   * then hold spaces, ending at a line break, a second `@`, or a space after words whose answer
   * was empty. Default `'substring'`: the query ends at whitespace (SPEC §15.1).
   */
  candidateMatch?: 'substring' | 'words' | undefined;
  /** The listbox's accessible name (default `'Sessions'`). */
  menuLabel?: string | undefined;
}

/** Options of {@link createMentionEditor}; every one may be absent or `undefined`. */
export interface MentionEditorOptions {
  /** The initial canonical text (default `''`). */
  text?: string | undefined;
  /** Called with the new text after every edit the person makes (not after {@link MentionEditor.setText}). */
  onChange?: ((text: string) => void) | undefined;
  /** Called whenever the trigger changes: a new `@`, a new query, or `undefined` when there is none. */
  onTrigger?: ((trigger: MentionEditorTrigger | undefined) => void) | undefined;
  /** The `@` menu the composer owns (SPEC §15.9). */
  suggest?: MentionSuggestOptions | undefined;
  /**
   * The editable's accessible name (`aria-label`). Default: the element's own `aria-label` or
   * `aria-labelledby` when it has one, else `'Prompt'`.
   */
  ariaLabel?: string | undefined;
  /** A valid chip's accessible name from its label (default `` label => `session: ${label}` ``). */
  chipLabel?: ((label: string) => string) | undefined;
  /** Called when a click, or Enter on a selected chip, activates a valid chip (for a preview card). */
  onChipActivate?: ((chip: MentionChipActivation) => void) | undefined;
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

/**
 * The composer {@link createMentionEditor} returns (SPEC §15.8). Every member of a destroyed
 * editor throws `SESSION_REFERENCE_INVALID_ARGUMENT`.
 */
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
  /**
   * Removes every listener and the default menu, and gives the element back as it was: its
   * attributes exactly as before (`contenteditable`, `style`, `role`, ARIA), its content as drawn.
   */
  destroy(): void;
}

/** The options, read once and checked. */
export interface EditorSettings {
  text: string;
  onChange: MentionEditorOptions['onChange'];
  onTrigger: MentionEditorOptions['onTrigger'];
  suggest: SuggestSettings | undefined;
  ariaLabel: string | undefined;
  chipLabel: (label: string) => string;
  onChipActivate: MentionEditorOptions['onChipActivate'];
}

const KEYS = ['text', 'onChange', 'onTrigger', 'suggest', 'ariaLabel', 'chipLabel', 'onChipActivate'] as const;

/** A function option (or `undefined`). */
function callback(value: unknown, name: string): void {
  check(value === undefined || typeof value === 'function', 'INVALID_ARGUMENT', `options.${name} must be a function`, value);
}

/**
 * Plain-data copy of the options (SPEC §10.4: read once).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` naming the bad option.
 */
export function readOptions(options: unknown): EditorSettings {
  check(options === undefined || (typeof options === 'object' && options !== null), 'INVALID_ARGUMENT', 'options must be an object', options);
  // Each option read once (SPEC §10.4): a throwing getter or a revoked proxy is INVALID_ARGUMENT naming it.
  const fields = readCallerFields(options, KEYS, 'options');
  const { text, ariaLabel, chipLabel } = fields;
  check(text === undefined || typeof text === 'string', 'INVALID_ARGUMENT', 'options.text must be a string', text);
  for (const name of ['onChange', 'onTrigger', 'chipLabel', 'onChipActivate'] as const) callback(fields[name], name);
  check(ariaLabel === undefined || (typeof ariaLabel === 'string' && ariaLabel.trim() !== ''), 'INVALID_ARGUMENT', 'options.ariaLabel must be a non-empty string', ariaLabel);
  const name = chipLabel as ((label: string) => string) | undefined;
  return {
    text: text ?? '',
    onChange: fields.onChange as EditorSettings['onChange'],
    onTrigger: fields.onTrigger as EditorSettings['onTrigger'],
    suggest: readSuggest(fields.suggest),
    ariaLabel,
    chipLabel: name === undefined ? (label) => `session: ${label}` : (label) => String(name(label)),
    onChipActivate: fields.onChipActivate as EditorSettings['onChipActivate'],
  };
}
