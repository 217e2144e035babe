/**
 * Baking a prepared context into the user message a host sends (SPEC §9.4).
 * @module
 */
import { check, fail } from './errors.js';
import { joinTextBlocks } from './projection.js';
import type { ContentBlock, HookContext, UserMessage } from './types.js';

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
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` when `message` is not an
 * object with a `content` array, already carries an `envelope` (a prompt is baked once), cannot
 * be cloned, or `context` is not a HookContext with text content.
 */
export function composePromptMessage(message: UserMessage, context?: HookContext): UserMessage {
  checkMessage(message);
  const copy = cloneArgument(message, 'message');
  if (context === undefined) return copy;
  const prefix = contextText(context);
  return {
    ...copy,
    content: [{ type: 'text', text: prefix + MY_REQUEST_SEPARATOR }, ...cloneArgument(copy.content, 'message.content')],
    envelope: {
      version: 1,
      display: copy.content,
      contexts: [
        cloneArgument(
          { source: context.source, placement: context.placement, metadata: context.metadata },
          'context',
        ),
      ],
    },
  };
}

function contextText(context: unknown): string {
  const text = typeof context === 'object' && context !== null ? joinTextBlocks((context as HookContext).content) : '';
  check(text !== '', 'SESSION_REFERENCE_INVALID_ARGUMENT', 'context must be a HookContext with text content', context);
  return text;
}

/**
 * A user message that can be composed: an object with a content array and no envelope (SPEC §9.4).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` otherwise.
 */
export function checkMessage(message: unknown): asserts message is UserMessage {
  const m = message as UserMessage | null;
  check(typeof m === 'object' && m !== null && Array.isArray(m.content), 'SESSION_REFERENCE_INVALID_ARGUMENT', 'message must be a user message with a content array', message);
  check(m.envelope === undefined, 'SESSION_REFERENCE_INVALID_ARGUMENT', 'message already carries an envelope (a prompt is composed once)', m.id);
}

/**
 * A deep copy of caller data (`structuredClone`).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` naming `what` when it cannot be cloned.
 */
export function cloneArgument<T>(value: T, what: string): T {
  try {
    return structuredClone(value);
  } catch (error) {
    throw fail('SESSION_REFERENCE_INVALID_ARGUMENT', `${what} cannot be copied (structuredClone failed)`, error);
  }
}

/**
 * A content array's blocks with every text block's text replaced by `map(text)`. Entries that are
 * not text blocks, `null` and primitives included, are kept as they are (SPEC §4: permissive).
 */
export function mapTextBlocks(content: readonly ContentBlock[], map: (text: string) => string): ContentBlock[] {
  return content.map((block) =>
    typeof block === 'object' && block !== null && block.type === 'text' && typeof block.text === 'string'
      ? { ...block, text: map(block.text) }
      : block,
  );
}
