/**
 * dsh-session-reference/editor: headless helpers for web front ends that let a person cite
 * sessions with `@` chips, and replay what was sent (SPEC §15). Strings in, strings out: no DOM,
 * no framework; Web APIs only, like the core. The DOM composer built on them is the separate
 * entry `dsh-session-reference/editor/dom` (SPEC §15.8).
 * @module dsh-session-reference/editor
 */
export {
  findMentionTrigger,
  mentionQueryPassedEmpty,
  type MentionTriggerOptions,
  insertMention,
  type MentionTrigger,
  type MentionInsertionRange,
  type MentionInsertion,
} from './trigger.js';
export { mentionRangeAt, type MentionRange } from './range.js';
export { segmentMentions, type MentionSegment, type MentionTextSegment, type MentionChipSegment } from './segments.js';
export {
  normalizeSelection,
  deleteBackward,
  deleteForward,
  replaceSelection,
  moveCaret,
  type MentionSelection,
  type MentionEdit,
  type EditUnit,
  type EditUnitOptions,
  type CaretDirection,
} from './edit.js';
export { describeReferencedMessage, type ReferencedMessageDescription } from './replay.js';
