/**
 * Projection of a folded surface to the conversation a snapshot carries (SPEC §4.5, §8.2).
 * @module
 */
import type { MessageSource } from './types.js';

/** One conversation item of a reference object (SPEC §8.1). */
export interface ConversationItem {
  role: 'user' | 'assistant';
  text: string;
  checkpoint?: true;
}

/** The compact-checkpoint source marker written by the published dsh compaction (SPEC §4.5). */
export const COMPACT_CHECKPOINT_SOURCE: Readonly<{ kind: 'plugin'; plugin: 'compact' }> = Object.freeze({
  kind: 'plugin',
  plugin: 'compact',
});

/** The direct-user source assumed for steering messages that carry none (SPEC §4.3). */
const DIRECT_USER_SOURCE: MessageSource = { kind: 'user' };

/**
 * True for a compact-checkpoint source: `{ kind: 'plugin', plugin: 'compact' }` (published dsh)
 * or `{ kind: 'compact-checkpoint' }` (newer dsh logs) (SPEC §4.5). Never throws.
 */
export function isCompactCheckpointSource(source: unknown): boolean {
  if (typeof source !== 'object' || source === null) return false;
  const { kind, plugin } = source as Record<string, unknown>;
  return (kind === 'plugin' && plugin === 'compact') || kind === 'compact-checkpoint';
}

/** True for a direct user source (`kind: 'user'`); context sources never are (SPEC §4.5). */
export function isDirectUserSource(source: unknown): boolean {
  return typeof source === 'object' && source !== null && (source as MessageSource).kind === 'user';
}

/**
 * The conversation items of a folded surface, in surface order (SPEC §8.2): direct user
 * `user/message` and `steering/message` texts, compact checkpoints (`checkpoint: true`) and
 * assistant texts (interrupted ones included). Text blocks are joined by `\n`; a message with an
 * envelope contributes its `envelope.display` only. Everything else — tools, reasoning, system
 * and plugin- or context-sourced messages, stream chunks, non-text blocks, malformed data and
 * empty texts — is left out. Linear in the size of the text blocks.
 */
export function projectSurface(surface: readonly unknown[]): ConversationItem[] {
  // Sized once (then trimmed) rather than grown: for a long session this list is large.
  const items = new Array<ConversationItem>(surface.length);
  let count = 0;
  for (const event of surface) {
    const item = projectEvent(event);
    if (item && item.text !== '') items[count++] = item;
  }
  items.length = count;
  return items;
}

function projectEvent(value: unknown): ConversationItem | undefined {
  if (!isRecord(value)) return undefined;
  const { type } = value;
  // Decide by type first: the data of every other event (tool results…) is never touched.
  if (type !== 'user/message' && type !== 'steering/message' && type !== 'assistant/message') return undefined;
  const { data } = value;
  if (!isRecord(data)) return undefined;
  switch (type) {
    case 'user/message':
      if (isCompactCheckpointSource(data.source)) return { role: 'user', text: messageText(data), checkpoint: true };
      return isDirectUserSource(data.source) ? { role: 'user', text: messageText(data) } : undefined;
    case 'steering/message': {
      const message = steeringMessage(data);
      return isDirectUserSource(message.source) ? { role: 'user', text: messageText(message) } : undefined;
    }
    default:
      return isRecord(data.message) ? { role: 'assistant', text: joinTextBlocks(data.message.content) } : undefined;
  }
}

/**
 * A steering message in its current shape: a `UserMessage`, or the legacy `{ turn, message }`
 * (message object or string) and `{ turn, content, source }`; a missing source is a direct user.
 */
function steeringMessage(data: Record<string, unknown>): Record<string, unknown> {
  const inner = data.message;
  const message = isRecord(inner) ? inner : 'message' in data ? { content: inner } : data;
  const { content } = message;
  return {
    ...message,
    content: typeof content === 'string' ? [{ type: 'text', text: content }] : content,
    source: message.source ?? data.source ?? DIRECT_USER_SOURCE,
  };
}

/** A user message's text: `envelope.display` when it carries an envelope (no recursive snapshots). */
function messageText(message: Record<string, unknown>): string {
  const { envelope } = message;
  if (envelope !== undefined && envelope !== null) {
    return joinTextBlocks(isRecord(envelope) ? envelope.display : undefined);
  }
  return joinTextBlocks(message.content);
}

/** Text blocks of `content` joined by `\n`; `''` when `content` is not an array. */
export function joinTextBlocks(content: unknown): string {
  if (!Array.isArray(content)) return '';
  let text: string | undefined;
  for (const block of content) {
    if (!isRecord(block) || block.type !== 'text' || typeof block.text !== 'string') continue;
    text = text === undefined ? block.text : `${text}\n${block.text}`;
  }
  return text ?? '';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
