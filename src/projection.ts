/**
 * Projection of a folded surface to the conversation a snapshot carries (SPEC §4.5, §8.2).
 * @module
 */
import { presentEntries } from './host.js';

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

/**
 * True for a compact-checkpoint source: `{ kind: 'plugin', plugin: 'compact' }` (published dsh)
 * or `{ kind: 'compact-checkpoint' }` (newer dsh logs) (SPEC §4.5). Never throws.
 */
export function isCompactCheckpointSource(source: unknown): boolean {
  return isRecord(source) && ((source.kind === 'plugin' && source.plugin === 'compact') || source.kind === 'compact-checkpoint');
}

/** True for a direct user source (`kind: 'user'`); context sources never are (SPEC §4.5). */
function isDirectUserSource(source: unknown): boolean {
  return isRecord(source) && source.kind === 'user';
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
  return surface.map(projectEvent).filter((item): item is ConversationItem => !!item?.text);
}

function projectEvent(value: unknown): ConversationItem | undefined {
  // Object(): a primitive or null reads as an event without type or data.
  const { type, data } = Object(value) as Record<string, unknown>;
  if (!isRecord(data)) return undefined;
  if (type === 'assistant/message') {
    return isRecord(data.message) ? { role: 'assistant', text: joinTextBlocks(data.message.content) } : undefined;
  }
  if (type === 'user/message') {
    if (isCompactCheckpointSource(data.source)) return { role: 'user', text: messageText(data), checkpoint: true };
    return isDirectUserSource(data.source) ? { role: 'user', text: messageText(data) } : undefined;
  }
  if (type !== 'steering/message') return undefined;
  // A steering message: a `UserMessage`, or the legacy `{ turn, message }` (message object or
  // string) and `{ turn, content, source }`; a missing source is a direct user.
  const inner = data.message;
  const message = isRecord(inner) ? inner : 'message' in data ? { content: inner } : data;
  const source = message.source ?? data.source;
  return source == null || isDirectUserSource(source) ? { role: 'user', text: messageText(message, true) } : undefined;
}

function messageText({ envelope, content }: Record<string, unknown>, stringContent = false): string {
  if (envelope !== undefined && envelope !== null) return joinTextBlocks((envelope as Record<string, unknown>).display);
  return stringContent && typeof content === 'string' ? content : joinTextBlocks(content);
}

/**
 * Text blocks of `content` joined by `\n`; `''` when `content` is not an array. Only the blocks
 * present are visited (SPEC §10.3), and each block's `type` and `text` are read once.
 */
export function joinTextBlocks(content: unknown): string {
  const texts: string[] = [];
  if (Array.isArray(content)) {
    const blocks = presentEntries(content);
    for (let k = 0; k < blocks.count; k++) {
      const block = blocks.at(k);
      const text: unknown = isRecord(block) && block.type === 'text' ? block.text : undefined;
      if (typeof text === 'string') texts.push(text);
    }
  }
  return texts.join('\n');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}
