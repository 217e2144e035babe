/**
 * Configuration of the service (SPEC §5).
 * @module
 */
import type { CandidateMatch } from './candidate-match.js';
import { readCallerOptions } from './caller-data.js';
import { check, fail, type SessionReferenceErrorCode } from './errors.js';

/** Service configuration; every key is optional (SPEC §5). */
export interface SessionReferenceConfig {
  /** Distinct sources per prepared message; integer 1..3. Default 3. */
  maxReferences?: number | undefined;
  /** Default candidate count of `listCandidates`; positive safe integer. Default 50. */
  candidateLimit?: number | undefined;
  /** Max UTF-8 bytes of one serialized reference object (SPEC §8.1); positive safe integer. Default 65536. */
  maxReferenceBytes?: number | undefined;
  /**
   * When `true`, a non-empty `listCandidates` query also matches the latest title (its cleaned
   * label, SPEC §6.6–§6.7), reading titles in batches in rank order. Default `false`.
   */
  matchTitles?: boolean | undefined;
  /**
   * How a non-empty `listCandidates` query matches (SPEC §15.10): `'substring'` (default, dsh's rule:
   * the query as one case-insensitive substring of the id or cwd, §6.2) or `'words'` (for front
   * ends: the query cut at whitespace, every word a prefix of a word of the id, cwd or, with
   * `matchTitles`, label, all folded without case or diacritics as §16.3 — `dumen` finds `Dümen`,
   * `ledger rec` finds `Ledger reconciler`). Order, `limit` and title reads stay as §6.3–§6.7.
   */
  candidateMatch?: CandidateMatch | undefined;
  /**
   * UTF-8 bytes of one session's conversation text that `searchSessions` indexes, the newest kept
   * (SPEC §16.3); positive safe integer. Default 262144 (256 KiB).
   */
  maxIndexBytes?: number | undefined;
  /**
   * Bytes of an earlier `exportSearchIndex()` to start searching from (SPEC §16.4); copied once.
   * Bytes of another version or damaged ones are ignored (the index is rebuilt), never an error.
   */
  searchIndex?: Uint8Array | undefined;
}

/** A validated configuration with every default filled in (`searchIndex` has none). */
export type ResolvedSessionReferenceConfig = {
  [K in Exclude<keyof SessionReferenceConfig, 'searchIndex'>]-?: Exclude<SessionReferenceConfig[K], undefined>;
} & { searchIndex?: Uint8Array };

/** The defaults of SPEC §5. */
export const DEFAULT_SESSION_REFERENCE_CONFIG: Readonly<ResolvedSessionReferenceConfig> = Object.freeze({
  maxReferences: 3,
  candidateLimit: 50,
  maxReferenceBytes: 65536,
  matchTitles: false,
  candidateMatch: 'substring',
  maxIndexBytes: 262144,
});

/**
 * Validates `config` and fills in defaults (SPEC §5). A key set to `undefined` takes its default.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` naming the key for a numeric
 * value that is not a positive safe integer (NaN, fractions, ≤ 0), `maxReferences > 3`, a
 * `matchTitles` that is not a boolean, a `candidateMatch` other than `'substring'` or `'words'`, an
 * unknown key, or a `config` that is not a plain object.
 */
export function resolveConfig(config: unknown): ResolvedSessionReferenceConfig {
  const resolved: ResolvedSessionReferenceConfig = { ...DEFAULT_SESSION_REFERENCE_CONFIG };
  check(config === undefined || (typeof config === 'object' && config !== null && !Array.isArray(config)), 'INVALID_CONFIG', 'config must be an object', config);
  // A key set to undefined takes its default, which the checks below accept (SPEC §5).
  // Each key read once (SPEC §10.4).
  for (const [key, value = resolved[key as keyof ResolvedSessionReferenceConfig]] of Object.entries(readCallerOptions(config, 'config', 'INVALID_CONFIG') ?? {})) {
    check(Object.hasOwn(resolved, key) || key === 'searchIndex', 'INVALID_CONFIG', 'unknown config key', key);
    if (key === 'searchIndex') {
      check(value === undefined || value instanceof Uint8Array, 'INVALID_CONFIG', 'config.searchIndex must be a Uint8Array', value);
      // A private copy: the caller's bytes are read once, here.
      if (value !== undefined) resolved.searchIndex = new Uint8Array(value as Uint8Array);
      continue;
    } else if (key === 'matchTitles') {
      check(typeof value === 'boolean', 'INVALID_CONFIG', 'config.matchTitles must be a boolean', value);
    } else if (key === 'candidateMatch') {
      check(value === 'substring' || value === 'words', 'INVALID_CONFIG', "config.candidateMatch must be 'substring' or 'words'", value);
    } else {
      // The default of maxReferences is also its hard upper bound (SPEC §5).
      const max = key === 'maxReferences' ? 3 : Number.MAX_SAFE_INTEGER;
      check(isPositiveSafeInteger(value) && value <= max, 'INVALID_CONFIG', `config.${key} must be an integer in 1..${max}`, value);
    }
    (resolved as Record<string, unknown>)[key] = value;
  }
  return resolved;
}

/** True for an integer in 1..Number.MAX_SAFE_INTEGER. */
export function isPositiveSafeInteger(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) > 0;
}

/** Decimal digits, no sign, space, point or exponent. */
const DECIMAL_DIGITS = /^[0-9]+$/;

/**
 * Reads a count given as text — a CLI flag, an environment or Worker `[vars]` setting, a query
 * parameter (SPEC §5) — the one way every part of the project reads one: decimal digits only (no
 * sign, no space around them, no point, exponent or `0x`), making a positive safe integer.
 * @param text The text as given.
 * @param name What it sets, for the message (`--limit`, `MAX_LOG_BYTES`).
 * @param code The error's code (default `SESSION_REFERENCE_INVALID_ARGUMENT`;
 *   `SESSION_REFERENCE_INVALID_CONFIG` for a setting).
 * @returns The number.
 * @throws SessionReferenceError `code`: "`name` must be a positive integer in decimal digits, got
 * " 5"" — the text quoted as given, never as it parsed (`9007199254740993` stays itself).
 */
export function parsePositiveInteger(
  text: string,
  name: string,
  code: SessionReferenceErrorCode = 'SESSION_REFERENCE_INVALID_ARGUMENT',
): number {
  const value = typeof text === 'string' && DECIMAL_DIGITS.test(text) ? Number(text) : NaN;
  if (isPositiveSafeInteger(value)) return value;
  const given = typeof text === 'string' ? JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text) : `a ${typeof text}`;
  throw fail(code.replace('SESSION_REFERENCE_', '') as Parameters<typeof fail>[0], `${name} must be a positive integer in decimal digits (at most ${Number.MAX_SAFE_INTEGER}), got ${given}`);
}

