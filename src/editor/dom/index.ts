/**
 * dsh-session-reference/editor/dom: a framework-free `contenteditable` composer with session
 * mentions as atomic chips, its `@` menu and its accessibility, built on the headless kit of
 * `dsh-session-reference/editor` (SPEC §15.8, §15.9). Browsers only; importing it touches no DOM
 * (an app's server render may import it).
 * @module dsh-session-reference/editor/dom
 */
export { createMentionEditor } from './editor.js';
export type {
  MentionEditor,
  MentionEditorOptions,
  MentionEditorTrigger,
  MentionCandidate,
  MentionChipActivation,
  MentionSuggestOptions,
} from './options.js';
export type { MentionMenuState, MentionSuggestion } from './suggest.js';
export { CHIP_CLASS } from './view.js';
