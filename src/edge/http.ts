/**
 * JSON answers and errors of the edge service (SPEC §17.4): every failure is `{ code, message }`
 * with the statuses of the example Worker it replaces (§16.6), plus 401 for authentication.
 * @module
 */
import { isInstance, SessionReferenceError } from '../errors.js';

/** HTTP status of each library error code. */
const STATUS: Record<string, number> = {
  SESSION_REFERENCE_INVALID_ARGUMENT: 400,
  SESSION_REFERENCE_INVALID_REFERENCE: 400,
  SESSION_REFERENCE_SELF_REFERENCE: 400,
  SESSION_REFERENCE_TOO_MANY: 400,
  SESSION_REFERENCE_NOT_FOUND: 404,
  SESSION_REFERENCE_BUDGET_EXCEEDED: 413,
  SESSION_REFERENCE_CANCELLED: 499,
  SESSION_REFERENCE_INVALID_CONFIG: 500,
  SESSION_REFERENCE_READ_FAILED: 502,
  SESSION_REFERENCE_INVALID_LOG: 502,
};

/** An answer of the service itself (authentication, routing, body limits): status, code, message, headers. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** A JSON response, never cached. */
export function json(body: unknown, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', ...headers },
  });
}

/** `SESSION_REFERENCE_INVALID_ARGUMENT` (400) naming the bad input. */
export function invalid(message: string): SessionReferenceError {
  return new SessionReferenceError('SESSION_REFERENCE_INVALID_ARGUMENT', message);
}

/**
 * The response for a failure. A read failure caused by an unknown session answers 404
 * `SESSION_REFERENCE_NOT_FOUND` with the message of an unknown id, one caused by a log that is not
 * readable 502 `SESSION_REFERENCE_INVALID_LOG` with the log's own message; other wrapped library errors are reported as
 * `cause`. Anything else is 500 `INTERNAL_ERROR` (logged; its message is not sent).
 */
export function errorResponse(error: unknown): Response {
  if (error instanceof HttpError) return json({ code: error.code, message: error.message }, error.status, error.headers);
  if (!isInstance(error)) {
    console.error('dsh-session-reference edge: internal error', error);
    return json({ code: 'INTERNAL_ERROR', message: 'internal error' }, 500);
  }
  const cause = isInstance(error.cause) ? error.cause : undefined;
  // A session the service's own reads found gone or broken (issue 27): its own code and message,
  // not the core's wrapper (`sessionQuery.readSurface(…) failed: …`).
  if (cause?.code === 'SESSION_REFERENCE_NOT_FOUND' || cause?.code === 'SESSION_REFERENCE_INVALID_LOG') return json({ code: cause.code, message: cause.message }, STATUS[cause.code]!);
  const body: Record<string, unknown> = { code: error.code, message: error.message };
  if (cause) body.cause = { code: cause.code, message: cause.message };
  return json(body, STATUS[error.code] ?? 500);
}
