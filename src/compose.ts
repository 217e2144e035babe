/**
 * Baking a prepared context into the user message a host sends (SPEC §9.4).
 * @module
 */
import { argumentError, check } from './errors.js';
import { joinTextBlocks } from './projection.js';
import type { HookContext, UserMessage } from './types.js';

/** Separates the referenced-sessions prefix from the user's own request (SPEC §9.4). */
export const MY_REQUEST_SEPARATOR = '\n\n## My request:\n\n';

/**
 * The message a host hands to `followup()` or `steer()` (SPEC §9.4).
 *
 * With a context: model-visible `content` is one text block `context text + "\n\n## My
 * request:\n\n"` followed by the original content blocks, and the model-hidden `envelope` is
 * `{ version: 1, display: <original content>, contexts: [{ source, placement, metadata }] }`.
 * Without a context: a deep copy of `message`. Id, source and other fields are kept; the inputs
 * are never modified.
 * @example
 * const { content, context } = await refs.prepare(agent, message.content, references);
 * await agent.followup(composePromptMessage({ ...message, content }, context));
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `message` is not a
 * user message (`role: 'user'`; the error names any other role) with a `content` array, already
 * carries an `envelope` (a prompt is baked once), cannot be read or cloned (a throwing getter, a revoked proxy, a function inside; the original error
 * is the `cause`), or `context` is not a HookContext with text content.
 */
export function composePromptMessage(message: UserMessage, context?: HookContext): UserMessage {
  try {
    checkMessage(message);
    const copy = structuredClone(message);
    if (context === undefined) return copy;
    const text = joinTextBlocks((context as HookContext | null)?.content);
    check(text, 'INVALID_ARGUMENT', 'context must have text content', context);
    const { source, placement, metadata } = context;
    return {
      ...copy,
      content: [{ type: 'text', text: text + MY_REQUEST_SEPARATOR }, ...structuredClone(copy.content)],
      envelope: { version: 1, display: copy.content, contexts: [structuredClone({ source, placement, metadata })] },
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
