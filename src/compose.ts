/**
 * Baking a prepared context into the user message a host sends (SPEC §9.4).
 * @module
 */
import { copyCallerData } from './caller-data.js';
import { checkEnvelopeMentions } from './envelope.js';
import { argumentError, check } from './errors.js';
import { joinTextBlocks } from './projection.js';
import type { ContentBlock, HookContext, PromptEnvelopeMention, UserMessage } from './types.js';

/** Separates the referenced-sessions prefix from the user's own request (SPEC §9.4). */
export const MY_REQUEST_SEPARATOR = '\n\n## My request:\n\n';

/**
 * The message a host hands to `followup()` or `steer()` (SPEC §9.4).
 *
 * With a context: model-visible `content` is one text block `context text + "\n\n## My
 * request:\n\n"` followed by the original content blocks, and the model-hidden `envelope` is
 * `{ version: 1, display: <original content>, mentions?, contexts: [{ source, placement, metadata }] }`.
 * Without a context: a deep copy of `message`. Id, source and other fields are kept; the inputs
 * are never modified. Each argument is read once, before anything else, into a private plain copy
 * (SPEC §10.4: own enumerable properties, arrays as the entries they hold — a sparse `content` is
 * its present blocks, in index order, and `block` indexes those), so framework state (Svelte
 * `$state`, Vue `reactive`, MobX, Immer drafts, Solid stores) works as the plain data it stands for.
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
 * carries an `envelope` (a prompt is baked once), an argument cannot be read or copied (a
 * throwing getter or a revoked proxy — the original error is the `cause` — or a function, a
 * symbol, a `Map`, `Date` or the like inside; the message names the path), `context` is not a
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
    // Each argument read once, into a private plain copy (SPEC §10.4); only the copies are used.
    return composeMessage(readMessage(message), copyCallerData(context, 'context'), copyCallerData(mentions, 'mentions'));
  } catch (error) {
    throw argumentError(error);
  }
}

/**
 * {@link composePromptMessage} over arguments already read (private copies, or data of ours):
 * `message` is a checked user message and becomes part of the result.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` as {@link composePromptMessage}.
 */
export function composeMessage(message: UserMessage, context: unknown, mentions: unknown): UserMessage {
  if (context === undefined) {
    check(mentions === undefined || (Array.isArray(mentions) && mentions.length === 0), 'INVALID_ARGUMENT', 'mentions need a context', mentions);
    return message;
  }
  const text = joinTextBlocks((context as HookContext | null)?.content);
  check(text, 'INVALID_ARGUMENT', 'context must have text content', context);
  const { source, placement, metadata } = context as HookContext;
  const cited = new Set((metadata?.references ?? []).map((reference) => reference?.sessionId));
  const positions = mentions === undefined ? undefined : checkEnvelopeMentions(mentions, message.content, cited);
  return {
    ...message,
    // The model-visible blocks and `display` are separate copies: changing one never changes the other.
    content: [{ type: 'text', text: text + MY_REQUEST_SEPARATOR }, ...(copyCallerData(message.content, 'message.content') as ContentBlock[])],
    envelope: {
      version: 1,
      display: message.content,
      ...(positions === undefined ? {} : { mentions: positions }),
      contexts: [{ source, placement, metadata }],
    },
  };
}

/**
 * The caller's message read once into a private plain copy (SPEC §10.4), checked to be a user
 * message that can be composed: `role: 'user'`, a content array and no envelope (SPEC §9.4). Only
 * user messages are composed: an assistant's or any other role is refused, naming the role.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` otherwise, or when the message
 * cannot be read or copied (naming the path, e.g. `message.content[2].text`).
 */
export function readMessage(message: unknown): UserMessage {
  const m = copyCallerData(message, 'message') as UserMessage | null;
  check(Array.isArray(m?.content), 'INVALID_ARGUMENT', 'message must have a content array', m);
  check(m.role === 'user', 'INVALID_ARGUMENT', "message role must be 'user' (only user messages are composed)", m.role);
  check(m.envelope === undefined, 'INVALID_ARGUMENT', 'message already has an envelope', m.id);
  return m;
}
