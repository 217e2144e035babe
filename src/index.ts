/**
 * dsh-session-reference: cite other dsh sessions in a prompt as bounded, read-only, tag-safe
 * snapshots (SPEC §1–§10). Web APIs only: runs unchanged in Node, Deno, Bun, workerd and browsers.
 * @module dsh-session-reference
 */
export { SESSION_REFERENCE_SCHEME, encodeSessionReferenceUri, decodeSessionReferenceUri } from './uri.js';
export {
  formatSessionReferenceMention,
  parseSessionReferenceText,
  scanSessionReferenceText,
  type SessionReference,
  type SessionReferenceMentionInput,
  type SessionReferenceToken,
  type ValidSessionReferenceToken,
  type MalformedSessionReferenceToken,
  type SessionReferenceScan,
  type ParsedSessionReferenceText,
} from './mention.js';
export {
  SessionReferenceError,
  isSessionReferenceError,
  SESSION_REFERENCE_ERROR_CODES,
  type SessionReferenceErrorCode,
  type SessionReferenceErrorJSON,
} from './errors.js';
export { COMPACT_CHECKPOINT_SOURCE, isCompactCheckpointSource, type ConversationItem } from './projection.js';
export { REFERENCE_WARNING, SESSION_REFERENCE_CONTEXT_SOURCE } from './render.js';
export { composePromptMessage, MY_REQUEST_SEPARATOR } from './compose.js';
export { cleanTitleLabel, MAX_LABEL_CODE_POINTS } from './label.js';
export {
  DEFAULT_SESSION_REFERENCE_CONFIG,
  parsePositiveInteger,
  type SessionReferenceConfig,
  type ResolvedSessionReferenceConfig,
} from './config.js';
export type { CandidateMatch } from './candidate-match.js';
export {
  createSessionReferences,
  type SessionReferences,
  type SessionReferencesOptions,
  type SessionCandidate,
  type PreparedSessionReferences,
  type SessionSearchHit,
  type SessionSearchSnippet,
} from './service.js';
export { provideSqliteWasm } from './search/sqlite-provide.js';
export type * from './types.js';
