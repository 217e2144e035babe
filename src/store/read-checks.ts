/**
 * The argument checks of the stores' log reads (SPEC §10.2, §11.2.1), apart from the read
 * pipeline they guard (`read.ts`, `surface-read.ts`, `pipeline.ts`): a store that lists without
 * reading a log loads these alone (the Node store loads the pipeline on its first read; a warm CLI
 * listing reads no log, issue 30 item 3).
 * @module
 */
import { checkSignal, throwIfAborted } from '../abort.js';
import { isPositiveSafeInteger } from '../config.js';
import { check, describeValue, fail, type ErrorCodeInput } from '../errors.js';

/** Default `maxLogBytes`: 4 GiB of decoded log (SPEC §11.2.1). */
export const DEFAULT_MAX_LOG_BYTES = 4 * 1024 ** 3;

/** Options of `readSessionLog` (`read.ts`) and of the stores' log reads. */
export interface SessionLogReadOptions {
  /**
   * A read fails with `SESSION_REFERENCE_INVALID_LOG` once the decoded log passes this many bytes
   * (SPEC §11.2.1). Positive safe integer; default 4 GiB.
   */
  maxLogBytes?: number | undefined;
  /** Verify zstd frame content checksums (XXH64); default `true`. */
  verifyChecksums?: boolean | undefined;
}

/**
 * The start of a store method: its `signal` checked (SPEC §10.2), and not aborted already.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` for a value that is not a
 * signal, `SESSION_REFERENCE_CANCELLED` (cause `signal.reason`) for an aborted one.
 */
export function enter(signal: unknown): AbortSignal | undefined {
  const checked = checkSignal(signal);
  throwIfAborted(checked);
  return checked;
}

/**
 * Checks read options (`maxLogBytes`, `verifyChecksums`) found among `options`.
 * @throws SessionReferenceError with `code` naming the bad key.
 */
export function checkReadOptions(options: Record<string, unknown>, code: ErrorCodeInput): Required<SessionLogReadOptions> {
  const { maxLogBytes = DEFAULT_MAX_LOG_BYTES, verifyChecksums = true } = options;
  if (typeof maxLogBytes !== 'number' || !Number.isSafeInteger(maxLogBytes) || maxLogBytes < 1) {
    throw fail(code, `maxLogBytes must be a positive safe integer (bytes), got ${describeValue(maxLogBytes)}`);
  }
  if (typeof verifyChecksums !== 'boolean') {
    throw fail(code, `verifyChecksums must be a boolean, got ${describeValue(verifyChecksums)}`);
  }
  return { maxLogBytes, verifyChecksums };
}

/**
 * Checks the budget of a `readRetainedSurface` call (UTF-8 bytes of one reference object).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` unless a positive safe integer.
 */
export function checkBudget(maxReferenceBytes: unknown): asserts maxReferenceBytes is number {
  check(isPositiveSafeInteger(maxReferenceBytes), 'INVALID_ARGUMENT', 'maxReferenceBytes must be a positive safe integer (UTF-8 bytes)', maxReferenceBytes);
}
