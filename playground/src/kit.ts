/**
 * Interim copy of the front-end kit of SPEC §15 (`dsh-session-reference/editor`), with the
 * signatures of the SPEC, until the library's own entry lands: then this file becomes a
 * re-export of `../../src/editor/index.js` and goes away.
 */
import {
  scanSessionReferenceText,
  type SessionReferenceMetadataEntry,
  type SessionReferenceToken,
} from '../../src/index.js';

/** An `@query` being typed (SPEC §15.1): `[start, end)` is `@` + query, `end` the caret. */
export interface MentionTrigger {
  start: number;
  end: number;
  query: string;
}

const WORD_BREAK = /[\s()[\]{}]/;
const BEFORE_AT = /[\s([{"'`]/;

/** SPEC §15.1. */
export function findMentionTrigger(text: string, caret: number): MentionTrigger | undefined {
  for (let i = caret - 1; i >= 0; i--) {
    const ch = text[i]!;
    if (ch === '@') {
      if (i > 0 && !BEFORE_AT.test(text[i - 1]!)) return undefined;
      return { start: i, end: caret, query: text.slice(i + 1, caret) };
    }
    if (WORD_BREAK.test(ch)) return undefined;
  }
  return undefined;
}

/** SPEC §15.2. */
export function insertMention(text: string, trigger: MentionTrigger, mention: string): { text: string; caret: number } {
  const after = text.slice(trigger.end);
  const inserted = /^\s/.test(after) ? mention : `${mention} `;
  return { text: text.slice(0, trigger.start) + inserted + after, caret: trigger.start + inserted.length };
}

/** SPEC §15.3: the token whose span `[start, end)` contains `offset` (start ≤ offset < end). */
export function mentionRangeAt(text: string, offset: number): { start: number; end: number; token: SessionReferenceToken } | undefined {
  for (const token of scanSessionReferenceText(text).tokens) {
    if (token.start <= offset && offset < token.end) return { start: token.start, end: token.end, token };
  }
  return undefined;
}

/** Where a mention stands in `display` (SPEC §9.4 `envelope.mentions`). */
export interface DisplayMention {
  block: number;
  start: number;
  end: number;
  sessionId: string;
}

/** Result of {@link describeReferencedMessage} (SPEC §15.4). */
export interface ReferencedMessageDescription {
  display?: unknown[];
  mentions?: DisplayMention[];
  references: Array<SessionReferenceMetadataEntry & { inputIndex?: number }>;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null;

/** SPEC §15.4. */
export function describeReferencedMessage(message: unknown): ReferencedMessageDescription | undefined {
  if (!isObject(message)) return undefined;
  const envelope = message.envelope;
  if (isObject(envelope) && envelope.version === 1 && Array.isArray(envelope.display) && Array.isArray(envelope.contexts)) {
    const references = envelope.contexts.flatMap((context: unknown) => {
      const metadata = isObject(context) && isObject(context.metadata) ? context.metadata : undefined;
      return Array.isArray(metadata?.references) ? (metadata.references as SessionReferenceMetadataEntry[]) : [];
    });
    const description: ReferencedMessageDescription = { display: envelope.display, references };
    if (Array.isArray(envelope.mentions)) description.mentions = envelope.mentions as DisplayMention[];
    return description;
  }
  const source = message.source;
  if (isObject(source) && source.kind === 'session-reference' && source.form === 'recall' && Array.isArray(source.references)) {
    return { references: source.references as ReferencedMessageDescription['references'] };
  }
  return undefined;
}
