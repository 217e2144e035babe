/**
 * `dsh-session-reference/dsh`: the drop-in plugin for dsh hosts from 0.1.0-rc.8 on (SPEC §14).
 * Name it in a profile's `session-reference` row instead of `@deepseek-ai/dsh-session-reference`;
 * imports written against that package (the wire functions, `SessionReferenceError`, the limits)
 * keep working from here. Needs the optional peer dependencies `@deepseek-ai/cordis`,
 * `@deepseek-ai/dsh-llm` and `@deepseek-ai/dsh-typert-protocol`, which every dsh host has.
 * @module dsh-session-reference/dsh
 */
import { SessionReferenceResolver } from './resolver.js';
import { DEFAULT_SESSION_REFERENCE_CONFIG } from '../config.js';

export default SessionReferenceResolver;
export {
  SessionReferenceResolver,
  SESSION_REFERENCE_RESOLVER_SERVICE,
  type SessionReferenceCandidate,
  type PreparedReferencedMessage,
  type RecallMessage,
  type RecallReference,
  type RecallSource,
  type PreStepDecision,
  type PreStepPayload,
} from './resolver.js';
export { SESSION_REFERENCE_SCHEME, encodeSessionReferenceUri, decodeSessionReferenceUri } from '../uri.js';
export { formatSessionReferenceMention, parseSessionReferenceText } from '../mention.js';
export { SessionReferenceError, isSessionReferenceError, type SessionReferenceErrorCode } from '../errors.js';
export type { SessionReferenceConfig } from '../config.js';
export type { SessionReferencePluginConfig } from './resolver.js';
export type { SessionCandidate } from '../candidates.js';

/** Most distinct sessions one message may reference (SPEC §5), as the host's package exports it. */
export const MAX_REFERENCES = 3;
/** Default candidate count (SPEC §5), as the host's package exports it. */
export const DEFAULT_CANDIDATE_LIMIT = DEFAULT_SESSION_REFERENCE_CONFIG.candidateLimit;
/** Default UTF-8 budget of one reference (SPEC §5), as the host's package exports it. */
export const DEFAULT_MAX_REFERENCE_BYTES = DEFAULT_SESSION_REFERENCE_CONFIG.maxReferenceBytes;
