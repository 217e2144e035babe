/**
 * Baking a prepared context into the user message a host sends (SPEC §9.4).
 * @module
 */
import { checkEnvelopeMentions } from './envelope.js';
import { argumentError, check } from './errors.js';
import { joinTextBlocks } from './projection.js';
import type { HookContext, PromptEnvelopeMention, UserMessage } from './types.js';

/** Separates the referenced-sessions prefix from the user's own request (SPEC §9.4). */
export const MY_REQUEST_SEPARATOR = '\n\n## My request:\n\n';

/**
 * The message a host hands to `followup()` or `steer()` (SPEC §9.4).
 *
 * With a context: model-visible `content` is one text block `context text + "\n\n## My
 * request:\n\n"` followed by the original content blocks, and the model-hidden `envelope` is
 * `{ version: 1, display: <original content>, mentions?, contexts: [{ source, placement, metadata }] }`.
 * Without a context: a deep copy of `message`. Id, source and other fields are kept; the inputs
 * are never modified.
 *
 * `mentions` (optional) says where each mention stands in the readable content, in the order
 * typed: `{ block, start, end, sessionId }` with `message.content[block].text.slice(start, end)`
 * the `@label` (UTF-16 offsets). It is copied to `envelope.mentions` so a UI can redraw each chip
 * exactly there (SPEC §9.4, §15.4); without it the envelope has no `mentions`.
 * `referenceUserMessage` passes the positions it found while parsing; a host that calls `prepare`
 * and `composePromptMessage` itself passes positions of its own, or none.
 * @example
 * const { content, context } = await refs.prepare(agent, message.content, references);
 * await agent.followup(composePromptMessage({ ...message, content }, context));
 * @example
 * // `content` is [{ type: 'text', text: 'ask @Schema' }]; the mention's `@Schema` is text[4, 11).
 * composePromptMessage({ ...message, content }, context, [{ block: 0, start: 4, end: 11, sessionId: 'session-434' }]);
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `message` is not a
 * user message (`role: 'user'`; the error names any other role) with a `content` array, already
 * carries an `envelope` (a prompt is baked once), cannot be read or cloned (a throwing getter, a
 * revoked proxy, a function inside; the original error is the `cause`), `context` is not a
 * HookContext with text content, or `mentions` is not an array of such positions in order, each
 * on a text block, starting at an `@`, inside the text, and naming a session of
 * `context.metadata.references` (a non-empty `mentions` without a context included).
 */
export function composePromptMessage(
  message: UserMessage,
  context?: HookContext | undefined,
  mentions?: readonly PromptEnvelopeMention[] | undefined,
): UserMessage {
  try {
    checkMessage(message);
    const copy = structuredClone(message);
    if (context === undefined) {
      check(mentions === undefined || (Array.isArray(mentions) && mentions.length === 0), 'INVALID_ARGUMENT', 'mentions need a context', mentions);
      return copy;
    }
    const text = joinTextBlocks((context as HookContext | null)?.content);
    check(text, 'INVALID_ARGUMENT', 'context must have text content', context);
    const { source, placement, metadata } = context;
    const cited = new Set((metadata?.references ?? []).map((reference) => reference?.sessionId));
    const positions = mentions === undefined ? undefined : checkEnvelopeMentions(mentions, copy.content, cited);
    return {
      ...copy,
      content: [{ type: 'text', text: text + MY_REQUEST_SEPARATOR }, ...structuredClone(copy.content)],
      envelope: {
        version: 1,
        display: copy.content,
        ...(positions === undefined ? {} : { mentions: positions }),
        contexts: [structuredClone({ source, placement, metadata })],
      },
    };
  } catch (error) {
    throw argumentError(error);
  }
}

/**
 * A user message that can be composed: an object with `role: 'user'`, a content array and no
 * envelope (SPEC §9.4). Only user messages are composed: an assistant's or any other role is
 * refused, naming the role.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` otherwise.
 */
export function checkMessage(message: unknown): asserts message is UserMessage {
  const m = message as UserMessage | null;
  check(Array.isArray(m?.content), 'INVALID_ARGUMENT', 'message must have a content array', message);
  check(m.role === 'user', 'INVALID_ARGUMENT', "message role must be 'user' (only user messages are composed)", m.role);
  check(m.envelope === undefined, 'INVALID_ARGUMENT', 'message already has an envelope', m.id);
}
