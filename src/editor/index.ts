/**
 * dsh-session-reference/editor: headless helpers for web front ends that let a person cite
 * sessions with `@` chips, and replay what was sent (SPEC §15). Strings in, strings out: no DOM,
 * no framework; Web APIs only, like the core.
 * @module
 */
export {
  findMentionTrigger,
  insertMention,
  type MentionTrigger,
  type MentionInsertionRange,
  type MentionInsertion,
} from './trigger.js';
export { mentionRangeAt, type MentionRange } from './range.js';
export { describeReferencedMessage, type ReferencedMessageDescription } from './replay.js';
