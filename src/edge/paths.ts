/**
 * `{path}` of `/sessions/{path}` (SPEC §17.4): one or more segments of printable characters, none
 * empty, `.` or `..`, read from the request's percent-encoded path segment by segment, so that the
 * R2 key it names — the tenant's prefix + the path — never leaves the tenant's prefix.
 * @module
 */
import { HttpError } from './http.js';

/** Longest R2 key, in UTF-8 bytes (R2's limit). */
export const MAX_KEY_BYTES = 1024;

/**
 * Characters a segment may not hold (SPEC §17.4 "printable characters", issue 27): controls (C0,
 * DEL, C1), format characters (Cf: bidi overrides, zero-width spaces and joiners, the BOM — a key
 * that renders reversed or like another key), line and paragraph separators, surrogates (lone ones
 * cannot be encoded anyway), noncharacters (U+FFFE, U+FFFF, U+FDD0–U+FDEF, …), the backslash (a
 * path separator elsewhere) and `/` itself (an encoded `%2F` would make one segment two).
 */
const FORBIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cs}\p{Noncharacter_Code_Point}\\/]/u;

/** Whitespace at either end of a segment (`a `, ` `, `a\u3000`): a key that looks like another. */
const EDGE_SPACE = /^\s|\s$/u;

/** What makes a decoded segment unfit, by kind; each completes "path segment N …". */
const FAULTS = {
  empty: () => 'is empty',
  dot: (segment: string) => `is "${segment}": a path never leaves the tenant's prefix`,
  forbidden: () =>
    'holds a character that is not allowed (a control character, a format character, a line or paragraph separator, a noncharacter, "\\" or an encoded "/"): a segment is printable characters only',
  space: () => 'starts or ends with whitespace',
} satisfies Record<string, (segment: string) => string>;

/** Why the decoded `segment` cannot be one of a `{path}`, or `undefined` when it can. */
function segmentFault(segment: string): keyof typeof FAULTS | undefined {
  if (segment === '') return 'empty';
  if (segment === '.' || segment === '..') return 'dot';
  if (FORBIDDEN.test(segment)) return 'forbidden';
  if (EDGE_SPACE.test(segment)) return 'space';
  return undefined;
}

/**
 * True when the tenant-relative `key` is one a `{path}` can name (SPEC §17.4): every segment
 * non-empty, not `.` or `..`, printable. Objects written beside the service (an R2 copy, a sync)
 * under other keys are left out of the catalog: the API could neither cite nor delete them.
 */
export function isSessionPath(key: string): boolean {
  return key.split('/').every((segment) => segmentFault(segment) === undefined);
}

function badPath(message: string): HttpError {
  return new HttpError(400, 'SESSION_REFERENCE_INVALID_ARGUMENT', message);
}

/**
 * The tenant-relative key named by `encoded`, the path after `/sessions/` as the request carries
 * it (percent-encoded). `prefix` is the tenant's prefix: prefix + key is at most
 * {@link MAX_KEY_BYTES} UTF-8 bytes.
 * @throws HttpError 400 `SESSION_REFERENCE_INVALID_ARGUMENT` naming what is wrong.
 */
export function sessionKey(encoded: string, prefix: string): string {
  if (encoded === '') throw badPath('the path after /sessions/ must name the log (one or more segments)');
  const segments = encoded.split('/').map((segment, index) => {
    // The request's own (percent-encoded, so printable) spelling names the segment.
    const which = `path segment ${index + 1} (${JSON.stringify(segment)})`;
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      throw badPath(`${which} is not valid percent-encoded UTF-8`);
    }
    const fault = segmentFault(decoded);
    // An empty or dot segment is named by its number alone: its spelling says nothing more.
    if (fault !== undefined) throw badPath(`${fault === 'empty' || fault === 'dot' ? `path segment ${index + 1}` : which} ${FAULTS[fault](decoded)}`);
    return decoded;
  });
  const key = segments.join('/');
  const bytes = new TextEncoder().encode(prefix + key).length;
  if (bytes > MAX_KEY_BYTES) throw badPath(`the path is too long: the key would be ${bytes} UTF-8 bytes, at most ${MAX_KEY_BYTES}`);
  return key;
}
