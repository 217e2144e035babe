/**
 * What the model would receive: the library's own host path (`referenceUserMessage`, SPEC §9.5)
 * run over the fake `sessionQuery`, split into the panes the page shows.
 */
import {
  createSessionReferences,
  MY_REQUEST_SEPARATOR,
  type SessionReferenceConfig,
  type SessionReferenceMetadata,
  type SessionReferences,
  type TargetAgent,
  type UserMessage,
} from '../../src/index.js';
import type { MemorySessionQuery } from '../../src/store/index.js';
import { toErrorInfo, type ErrorInfo } from './sessions.js';

/**
 * The config controls: the raw text of the three number inputs (an empty field means "library
 * default") and the `matchTitles` checkbox (SPEC §6.7).
 */
export interface ConfigFields {
  maxReferences: string;
  maxReferenceBytes: string;
  candidateLimit: string;
  matchTitles: boolean;
}

export function configFromFields(fields: ConfigFields): SessionReferenceConfig {
  const config: SessionReferenceConfig = { matchTitles: fields.matchTitles };
  for (const key of ['maxReferences', 'maxReferenceBytes', 'candidateLimit'] as const) {
    const raw = fields[key].trim();
    if (raw !== '') config[key] = Number(raw);
  }
  return config;
}

/** The service, or the `SESSION_REFERENCE_INVALID_CONFIG` error that creating it raised. */
export function createService(
  query: MemorySessionQuery | undefined,
  config: SessionReferenceConfig,
): { service?: SessionReferences; error?: ErrorInfo } {
  if (!query) return { error: { code: 'STORE_UNAVAILABLE', message: 'the session store could not be built' } };
  try {
    return { service: createSessionReferences({ sessionQuery: query, config }) };
  } catch (error) {
    return { error: toErrorInfo(error) };
  }
}

export interface Outcome {
  /** The message handed to `followup()`/`steer()`. */
  composed?: UserMessage;
  /** Its model-visible text blocks, concatenated: exactly what the model reads. */
  composedText?: string;
  /** The `## Referenced sessions … </referenced-sessions>` prefix (absent without references). */
  block?: string;
  /** Each reference's serialization as it stands in the block (SPEC §8.1), in block order. */
  referenceTexts?: string[];
  metadata?: SessionReferenceMetadata;
  error?: ErrorInfo;
  /** Milliseconds the library took. */
  ms: number;
}

let messageCount = 0;

function draftMessage(text: string): UserMessage {
  messageCount += 1;
  return { id: `playground-message-${messageCount}`, role: 'user', source: { kind: 'user' }, content: [{ type: 'text', text }] };
}

function textOf(message: UserMessage): string {
  return message.content.map((block) => (block.type === 'text' && typeof block.text === 'string' ? block.text : '')).join('');
}

export async function compute(
  service: SessionReferences,
  agent: TargetAgent,
  text: string,
  signal: AbortSignal,
): Promise<Outcome> {
  const started = performance.now();
  try {
    const composed = await service.referenceUserMessage(agent, draftMessage(text), signal);
    const outcome: Outcome = { composed, composedText: textOf(composed), ms: performance.now() - started };
    const context = composed.envelope?.contexts[0];
    const first = composed.content[0];
    if (context && first?.type === 'text' && typeof first.text === 'string' && first.text.endsWith(MY_REQUEST_SEPARATOR)) {
      outcome.block = first.text.slice(0, -MY_REQUEST_SEPARATOR.length);
      outcome.referenceTexts = referenceTexts(outcome.block);
      outcome.metadata = context.metadata;
    }
    return outcome;
  } catch (error) {
    return { error: toErrorInfo(error), ms: performance.now() - started };
  }
}

const OPEN_TAG = '\n<referenced-sessions>\n';
const CLOSE_TAG = '\n</referenced-sessions>';

/**
 * The serialized references of a block: its JSON array parsed and each object written back
 * compact and tag-safe, which gives the block's own bytes (SPEC §8.1, §9.2-§9.3).
 */
function referenceTexts(block: string): string[] {
  const json = block.slice(block.indexOf(OPEN_TAG) + OPEN_TAG.length, block.lastIndexOf(CLOSE_TAG));
  return (JSON.parse(json) as unknown[]).map((reference) => JSON.stringify(reference).replaceAll('<', '\\u003c'));
}

/** UTF-8 bytes of a text: the library's own counter (a lone surrogate counts 3). */
export { utf8ByteLength as utf8Length } from '../../src/utf8.js';

