/**
 * dsh-session-reference/editor/dom: a framework-free `contenteditable` composer with session
 * mentions as atomic chips, built on the headless kit of `dsh-session-reference/editor`
 * (SPEC §15.8). Browsers only; importing it touches no DOM (an app's server render may import it).
 * @module dsh-session-reference/editor/dom
 */
export {
  createMentionEditor,
  type MentionEditor,
  type MentionEditorOptions,
  type MentionEditorTrigger,
  type MentionCandidate,
} from './editor.js';
export { CHIP_CLASS } from './view.js';
