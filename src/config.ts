/**
 * Configuration of the service (SPEC §5).
 * @module
 */
import { check } from './errors.js';

/** Service configuration; every key is optional (SPEC §5). */
export interface SessionReferenceConfig {
  /** Distinct sources per prepared message; integer 1..3. Default 3. */
  maxReferences?: number;
  /** Default candidate count of `listCandidates`; positive safe integer. Default 50. */
  candidateLimit?: number;
  /** Max UTF-8 bytes of one serialized reference object (SPEC §8.1); positive safe integer. Default 65536. */
  maxReferenceBytes?: number;
}

/** A validated configuration with every default filled in. */
export type ResolvedSessionReferenceConfig = Required<SessionReferenceConfig>;

/** The defaults of SPEC §5. */
export const DEFAULT_SESSION_REFERENCE_CONFIG: Readonly<ResolvedSessionReferenceConfig> = Object.freeze({
  maxReferences: 3,
  candidateLimit: 50,
  maxReferenceBytes: 65536,
});

/** The hard upper bound of `maxReferences` (SPEC §5). */
export const MAX_REFERENCES_LIMIT = 3;

/**
 * Validates `config` and fills in defaults (SPEC §5). A key set to `undefined` takes its default.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` naming the key for a value that
 * is not a positive safe integer (NaN, fractions, ≤ 0), `maxReferences > 3`, an unknown key, or a
 * `config` that is not a plain object.
 */
export function resolveConfig(config: unknown): ResolvedSessionReferenceConfig {
  const resolved: ResolvedSessionReferenceConfig = { ...DEFAULT_SESSION_REFERENCE_CONFIG };
  if (config === undefined) return resolved;
  check(typeof config === 'object' && config !== null && !Array.isArray(config), 'SESSION_REFERENCE_INVALID_CONFIG', 'config must be an object', config);
  for (const [key, value] of Object.entries(config)) {
    check(Object.hasOwn(resolved, key), 'SESSION_REFERENCE_INVALID_CONFIG', 'unknown config key', key);
    if (value === undefined) continue;
    const max = key === 'maxReferences' ? MAX_REFERENCES_LIMIT : Number.MAX_SAFE_INTEGER;
    check(isPositiveSafeInteger(value) && value <= max, 'SESSION_REFERENCE_INVALID_CONFIG', `config.${key} must be an integer in 1..${max}`, value);
    resolved[key as keyof ResolvedSessionReferenceConfig] = value;
  }
  return resolved;
}

/** True for an integer in 1..Number.MAX_SAFE_INTEGER. */
export function isPositiveSafeInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
