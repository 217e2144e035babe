/**
 * Who is asking (SPEC §17.3): every request is authenticated before anything is read, and the
 * answer is the tenant whose logs it may touch. Tokens are verified by `jose` (signature, `exp`,
 * `nbf`, `iss`, `aud`), with an allow-list of algorithms per key source: HS256 for
 * `AUTH_JWT_SECRET`; RS256, ES256 and EdDSA for `AUTH_JWKS_URL` — never `none`.
 * @module
 */
import { createRemoteJWKSet, decodeProtectedHeader, errors, jwtVerify, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { fail } from '../errors.js';
import { hasLoneSurrogate } from '../utf8.js';
import { NO_AUTH_TENANT, type EdgeEnv } from './env.js';
import { HttpError } from './http.js';

/** Algorithms accepted for tokens signed with `AUTH_JWT_SECRET`. */
const SECRET_ALGORITHMS = ['HS256'];
/** Algorithms accepted for tokens signed with a key of `AUTH_JWKS_URL` (Cloudflare Access signs RS256). */
const JWKS_ALGORITHMS = ['RS256', 'ES256', 'EdDSA'];
/** Clock skew allowed when checking `exp` and `nbf`, in seconds. */
export const CLOCK_TOLERANCE_SECONDS = 30;
/** Longest token read, in characters: a bound on what a request can make the Worker parse. */
const MAX_TOKEN_LENGTH = 16 * 1024;

/**
 * Replaces the default authentication (SPEC §17.3): the tenant of the request, or nothing
 * (`undefined`, `null`, `''`) to refuse it with 401. A throw is 401 too (its message is not sent).
 */
export type Authenticate<E extends EdgeEnv = EdgeEnv> = (request: Request, env: E) => string | null | undefined | Promise<string | null | undefined>;

/** One remote key set per JWKS URL per isolate: jose caches the keys and refetches on an unknown `kid`. */
const keySets = new Map<string, JWTVerifyGetKey>();
/** Whether the isolate logged that it runs without authentication. */
let warnedOpen = false;

/** 401 with `WWW-Authenticate: Bearer` and `{ code: "UNAUTHENTICATED", message }`. */
export function unauthenticated(message: string, error?: 'invalid_token' | 'invalid_request'): HttpError {
  const challenge = error === undefined ? 'Bearer realm="dsh-session-reference"' : `Bearer realm="dsh-session-reference", error="${error}"`;
  return new HttpError(401, 'UNAUTHENTICATED', message, { 'www-authenticate': challenge });
}

/**
 * The tenant of `request`. Tokens must carry `exp`; `exp` and `nbf` are checked with
 * {@link CLOCK_TOLERANCE_SECONDS} of tolerance.
 * @throws HttpError 401 `UNAUTHENTICATED` for a request that cannot be authenticated (a token
 * without `exp` too), and for every request when no authentication is configured (unless
 * `AUTH_MODE = "none"`); 502 `SESSION_REFERENCE_READ_FAILED` when the key set of `AUTH_JWKS_URL`
 * cannot be fetched or is not a JWKS (the server's fault, not the token's).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` (500) for a malformed `AUTH_JWKS_URL`.
 */
export async function tenantOf<E extends EdgeEnv>(request: Request, env: E, authenticate: Authenticate<E> | undefined): Promise<string> {
  if (authenticate !== undefined) return custom(request, env, authenticate);
  if (env.AUTH_MODE === 'none') {
    if (nonEmpty(env.AUTH_JWT_SECRET) !== undefined || nonEmpty(env.AUTH_JWKS_URL) !== undefined) {
      throw fail('INVALID_CONFIG', 'AUTH_MODE = "none" is set together with AUTH_JWT_SECRET or AUTH_JWKS_URL: refusing to serve without authentication');
    }
    if (!warnedOpen) {
      warnedOpen = true;
      console.warn(`dsh-session-reference edge: AUTH_MODE = "none": every request is served WITHOUT authentication, as tenant "${NO_AUTH_TENANT}" (local development only)`);
    }
    return NO_AUTH_TENANT;
  }
  const secret = nonEmpty(env.AUTH_JWT_SECRET);
  const jwksUrl = nonEmpty(env.AUTH_JWKS_URL);
  if (secret === undefined && jwksUrl === undefined) {
    throw unauthenticated('the service has no authentication configured (set AUTH_JWT_SECRET or AUTH_JWKS_URL; AUTH_MODE = "none" only for local development)');
  }
  const token = bearerToken(request, jwksUrl !== undefined);
  const payload = await verify(token, env, secret, jwksUrl);
  const claim = nonEmpty(env.AUTH_TENANT_CLAIM) ?? 'sub';
  const tenant = payload[claim];
  if (!isTenant(tenant)) throw unauthenticated(`the token has no tenant: its claim "${claim}" must be a non-empty string of well-formed Unicode (no lone surrogate)`, 'invalid_token');
  return tenant;
}

async function custom<E extends EdgeEnv>(request: Request, env: E, authenticate: Authenticate<E>): Promise<string> {
  let tenant: unknown;
  try {
    tenant = await authenticate(request, env);
  } catch (error) {
    console.warn('dsh-session-reference edge: options.authenticate threw; answering 401', error);
    throw unauthenticated('the request could not be authenticated');
  }
  if (!isTenant(tenant)) {
    if (typeof tenant === 'string' && tenant !== '') console.warn('dsh-session-reference edge: options.authenticate returned a tenant with a lone surrogate; answering 401');
    throw unauthenticated('the request could not be authenticated');
  }
  return tenant;
}

/** True for a tenant (SPEC §17.3): a non-empty string that has a UTF-8 form (no R2 prefix could name another). */
function isTenant(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && !hasLoneSurrogate(value);
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/**
 * The token of `Authorization: Bearer <token>`; with a JWKS configured, also Cloudflare Access's
 * `Cf-Access-Jwt-Assertion` header (Access puts the user's token there).
 */
function bearerToken(request: Request, access: boolean): string {
  const authorization = request.headers.get('authorization');
  if (authorization !== null) {
    const match = /^Bearer +([^\s]+) *$/i.exec(authorization);
    if (match === null) throw unauthenticated('the Authorization header must be "Bearer <token>"', 'invalid_request');
    return checkedLength(match[1]!);
  }
  const assertion = access ? request.headers.get('cf-access-jwt-assertion') : null;
  if (assertion !== null && assertion !== '') return checkedLength(assertion);
  throw unauthenticated('the request has no bearer token (Authorization: Bearer <token>)');
}

function checkedLength(token: string): string {
  if (token.length > MAX_TOKEN_LENGTH) throw unauthenticated(`the token is longer than ${MAX_TOKEN_LENGTH} characters`, 'invalid_token');
  return token;
}

/** The verified claims: HS256 tokens against the secret, others against the JWKS. */
async function verify(token: string, env: EdgeEnv, secret: string | undefined, jwksUrl: string | undefined): Promise<JWTPayload> {
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch {
    throw unauthenticated('the token is not a JWT', 'invalid_token');
  }
  const options = { issuer: nonEmpty(env.AUTH_ISSUER), audience: nonEmpty(env.AUTH_AUDIENCE), requiredClaims: ['exp'], clockTolerance: CLOCK_TOLERANCE_SECONDS };
  if (secret !== undefined && (alg === 'HS256' || jwksUrl === undefined)) {
    try {
      return (await jwtVerify(token, new TextEncoder().encode(secret), { ...options, algorithms: SECRET_ALGORITHMS })).payload;
    } catch (error) {
      throw unauthenticated(`the token was refused: ${reason(error)}`, 'invalid_token');
    }
  }
  // A malformed URL is the configuration's fault (500), checked before any token is.
  const keys = keySet(jwksUrl!);
  try {
    return (await jwtVerify(token, keys, { ...options, algorithms: JWKS_ALGORITHMS })).payload;
  } catch (error) {
    if (keySetFailed(error)) {
      console.error('dsh-session-reference edge: the key set of AUTH_JWKS_URL could not be used', error);
      throw new HttpError(502, 'SESSION_REFERENCE_READ_FAILED', `the key set of AUTH_JWKS_URL could not be fetched or read (${keySetReason(error)}): the server's configuration or the key server is at fault, not the token`);
    }
    throw unauthenticated(`the token was refused: ${reason(error)}`, 'invalid_token');
  }
}

/** Whether jose failed on the key set itself (unreachable, timed out, not a JWKS), not on the token. */
function keySetFailed(error: unknown): boolean {
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return true;
  // jose's generic error is what a key-set response that is not 200 or not JSON gives; a network failure is not a JOSEError.
  if (error instanceof errors.JOSEError) return error.code === 'ERR_JOSE_GENERIC';
  return true;
}

function keySetReason(error: unknown): string {
  if (error instanceof errors.JWKSTimeout) return 'it did not answer in time';
  if (error instanceof errors.JWKSInvalid) return 'the answer is not a JSON Web Key Set';
  if (error instanceof errors.JOSEError) return 'the answer is not a 200 JSON Web Key Set';
  return 'it could not be reached';
}

function keySet(url: string): JWTVerifyGetKey {
  let keys = keySets.get(url);
  if (keys === undefined) {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      throw fail('INVALID_CONFIG', 'AUTH_JWKS_URL must be an absolute URL');
    }
    keys = createRemoteJWKSet(parsed);
    keySets.set(url, keys);
  }
  return keys;
}

/** Why jose refused a token, in words that reveal no key material. */
function reason(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'it has expired';
  if (error instanceof errors.JWTClaimValidationFailed && error.claim === 'exp' && error.reason === 'missing') return 'it has no "exp" claim (tokens must expire)';
  if (error instanceof errors.JWTClaimValidationFailed) return `claim "${error.claim}" ${error.reason === 'check_failed' ? 'is not valid' : error.reason}`;
  if (error instanceof errors.JOSEAlgNotAllowed) return 'its algorithm is not accepted';
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'its signature does not verify';
  if (error instanceof errors.JWKSNoMatchingKey) return 'no key of the key set matches it';
  if (error instanceof errors.JOSEError) return error.code;
  return 'it could not be verified';
}
