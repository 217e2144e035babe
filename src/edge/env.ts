/**
 * The edge service's bindings and settings (SPEC §17.2–§17.4): what `wrangler.toml` gives the
 * Worker, read once per request into plain values.
 * @module
 */
import { DEFAULT_SESSION_REFERENCE_CONFIG, parsePositiveInteger, resolveConfig, type SessionReferenceConfig } from '../config.js';
import { fail } from '../errors.js';
import type { CatalogApi } from './catalog-api.js';
import { isSessionPath } from './paths.js';

/**
 * The bindings and `[vars]` of the edge Worker (SPEC §17.2–§17.4). Numbers may be given as
 * decimal text (`[vars]` are strings); a malformed one answers 500 `SESSION_REFERENCE_INVALID_CONFIG`.
 */
export interface EdgeEnv {
  /** The R2 bucket holding the logs: one object per log, under `TENANT_PREFIX` + tenant + `/`. */
  SESSIONS: R2Bucket;
  /** The `SessionCatalog` Durable Object namespace (SQLite-backed: `new_sqlite_classes`), one object per tenant. */
  CATALOG: DurableObjectNamespace;
  /** `"none"`: no authentication, one tenant ({@link NO_AUTH_TENANT}), for local development only. Any other value, or none, authenticates. */
  AUTH_MODE?: string;
  /** HS256 secret of bearer tokens (a Worker secret: `wrangler secret put AUTH_JWT_SECRET`). */
  AUTH_JWT_SECRET?: string;
  /** A JWKS URL (RS256, ES256, EdDSA keys), e.g. Cloudflare Access's `https://<team>.cloudflareaccess.com/cdn-cgi/access/certs`. */
  AUTH_JWKS_URL?: string;
  /** Required `iss` of tokens, when set. */
  AUTH_ISSUER?: string;
  /** Required `aud` of tokens (one of them), when set. */
  AUTH_AUDIENCE?: string;
  /** The claim naming the tenant (default `sub`): a non-empty string. */
  AUTH_TENANT_CLAIM?: string;
  /** Key prefix of every tenant's logs (default `tenants/`); a tenant's logs are under it + the percent-encoded tenant + `/`. */
  TENANT_PREFIX?: string;
  /** Comma-separated exact origins that get CORS answers (default: none). */
  ALLOWED_ORIGINS?: string;
  /** Largest `PUT /sessions/{path}` body in bytes (default 100 MiB). */
  MAX_UPLOAD_BYTES?: string | number;
  /** Decoded bytes one log read may pass (SPEC §11.2.1; default {@link EDGE_MAX_LOG_BYTES}). */
  MAX_LOG_BYTES?: string | number;
  /** Per-reference budget in UTF-8 bytes (SPEC §5). */
  MAX_REFERENCE_BYTES?: string | number;
  /** Distinct sessions one prompt may cite (SPEC §5). */
  MAX_REFERENCES?: string | number;
  /** Default and maximum rows of `/candidates` and `/search` (SPEC §5 `candidateLimit`, default 50): a larger `limit` is served at this many rows. */
  CANDIDATE_LIMIT?: string | number;
  /** Objects one reconcile page re-lists (default 1000, R2's page). */
  RECONCILE_PAGE_SIZE?: string | number;
}

/** The tenant of a Worker with `AUTH_MODE = "none"`: its logs are under `tenants/default/`. */
export const NO_AUTH_TENANT = 'default';

/** Default `TENANT_PREFIX`. */
export const DEFAULT_TENANT_PREFIX = 'tenants/';

/** Default `MAX_UPLOAD_BYTES`: 100 MiB (a Workers request body may be at most 100 MB on the Free and Pro plans). */
export const DEFAULT_MAX_UPLOAD_BYTES = 100 * 1024 * 1024;

/**
 * Default `MAX_LOG_BYTES` at the edge: 64 MiB of decoded log per read (the library's own default is
 * 4 GiB). Memory does not depend on it (logs are streamed), CPU time does: a read costs CPU in
 * proportion to its decoded bytes (see docs/edge.md "Limits").
 */
export const EDGE_MAX_LOG_BYTES = 64 * 1024 * 1024;

/** An optional numeric setting: a number, or decimal text (500 `SESSION_REFERENCE_INVALID_CONFIG` otherwise). */
export function settingNumber(env: EdgeEnv, name: keyof EdgeEnv): number | undefined {
  const value = env[name] as unknown;
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'number') {
    if (Number.isSafeInteger(value) && value > 0) return value;
    throw fail('INVALID_CONFIG', `${name} must be a positive integer, got ${value}`);
  }
  return parsePositiveInteger(String(value), name, 'SESSION_REFERENCE_INVALID_CONFIG');
}

/** What bounds one log read (SPEC §11.2.1): `MAX_LOG_BYTES`, else {@link EDGE_MAX_LOG_BYTES}. */
export function logLimits(env: EdgeEnv): { maxLogBytes: number } {
  return { maxLogBytes: settingNumber(env, 'MAX_LOG_BYTES') ?? EDGE_MAX_LOG_BYTES };
}

/**
 * The service's configuration (SPEC §5) from `[vars]`.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` naming the `[vars]` name
 * (`MAX_REFERENCES` is 1..3).
 */
export function serviceConfig(env: EdgeEnv): SessionReferenceConfig {
  const config: SessionReferenceConfig = {};
  const maxReferenceBytes = settingNumber(env, 'MAX_REFERENCE_BYTES');
  const maxReferences = settingNumber(env, 'MAX_REFERENCES');
  const candidateLimit = settingNumber(env, 'CANDIDATE_LIMIT');
  if (maxReferences !== undefined && maxReferences > 3) throw fail('INVALID_CONFIG', `MAX_REFERENCES must be an integer in 1..3, got ${maxReferences}`);
  if (maxReferenceBytes !== undefined) config.maxReferenceBytes = maxReferenceBytes;
  if (maxReferences !== undefined) config.maxReferences = maxReferences;
  if (candidateLimit !== undefined) config.candidateLimit = candidateLimit;
  resolveConfig(config);
  return config;
}

/** The numeric `[vars]` of {@link EdgeEnv}. */
const NUMERIC_SETTINGS = ['MAX_UPLOAD_BYTES', 'MAX_LOG_BYTES', 'MAX_REFERENCE_BYTES', 'MAX_REFERENCES', 'CANDIDATE_LIMIT', 'RECONCILE_PAGE_SIZE'] as const;

/** Shortest `AUTH_JWT_SECRET`, in UTF-8 bytes: an HS256 key has at least 256 bits (RFC 7518 §3.2). */
export const MIN_SECRET_BYTES = 32;

/**
 * Checks every binding and setting of `env` at once (issue 27, SPEC §17.3–§17.4), so that a
 * malformed one fails every route, the queue and the cron alike, not only the route that reads
 * it: the bindings `SESSIONS` (an R2 bucket) and `CATALOG` (a Durable Object namespace), the numbers, `TENANT_PREFIX`,
 * `ALLOWED_ORIGINS` (each entry an exact origin such as `https://app.example.com`, or `null`),
 * and — when `auth` is true (no custom `authenticate`) — the authentication settings:
 * `AUTH_MODE = "none"` beside `AUTH_JWT_SECRET` or `AUTH_JWKS_URL` is refused (a deployment
 * that looks configured must not serve openly), `AUTH_JWT_SECRET` must have at least
 * {@link MIN_SECRET_BYTES} UTF-8 bytes, `AUTH_JWKS_URL` must be an absolute http(s) URL.
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` (500) naming the `[vars]` name.
 */
export function checkEnv(env: EdgeEnv, auth: boolean): void {
  bucketOf(env);
  checkCatalogBinding(env);
  for (const name of NUMERIC_SETTINGS) settingNumber(env, name);
  if (settingNumber(env, 'RECONCILE_PAGE_SIZE') !== undefined && settingNumber(env, 'RECONCILE_PAGE_SIZE')! > 1000) {
    throw fail('INVALID_CONFIG', `RECONCILE_PAGE_SIZE must be an integer in 1..1000, got ${String(env.RECONCILE_PAGE_SIZE)}`);
  }
  serviceConfig(env);
  tenantRoot(env);
  originsOf(env);
  if (!auth) return;
  const secret = typeof env.AUTH_JWT_SECRET === 'string' && env.AUTH_JWT_SECRET !== '' ? env.AUTH_JWT_SECRET : undefined;
  const jwks = typeof env.AUTH_JWKS_URL === 'string' && env.AUTH_JWKS_URL !== '' ? env.AUTH_JWKS_URL : undefined;
  if (env.AUTH_MODE === 'none' && (secret !== undefined || jwks !== undefined)) {
    const set = [secret !== undefined && 'AUTH_JWT_SECRET', jwks !== undefined && 'AUTH_JWKS_URL'].filter(Boolean).join(' and ');
    throw fail('INVALID_CONFIG', `AUTH_MODE = "none" is set together with ${set}: refusing to serve without authentication; remove AUTH_MODE (keep it in .dev.vars, for local development only) or the ${set}`);
  }
  if (secret !== undefined && new TextEncoder().encode(secret).length < MIN_SECRET_BYTES) {
    throw fail('INVALID_CONFIG', `AUTH_JWT_SECRET must be at least ${MIN_SECRET_BYTES} bytes (an HS256 key of 256 bits, RFC 7518 §3.2)`);
  }
  if (jwks !== undefined) {
    let url: URL | undefined;
    try {
      url = new URL(jwks);
    } catch {
      url = undefined;
    }
    if (url === undefined || (url.protocol !== 'https:' && url.protocol !== 'http:')) throw fail('INVALID_CONFIG', 'AUTH_JWKS_URL must be an absolute http(s) URL');
  }
}

/**
 * The exact origins of `ALLOWED_ORIGINS` (comma-separated; an empty list: none).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` for an entry that is not an
 * exact origin (`scheme://host[:port]`, no path, no trailing `/`, no `*`) or `null`.
 */
export function originsOf(env: EdgeEnv): Set<string> {
  const list = env.ALLOWED_ORIGINS;
  if (list === undefined || list === '') return new Set();
  if (typeof list !== 'string') throw fail('INVALID_CONFIG', 'ALLOWED_ORIGINS must be a comma-separated list of origins');
  const origins = new Set(list.split(',').map((origin) => origin.trim()).filter((origin) => origin !== ''));
  for (const origin of origins) {
    if (origin === 'null') continue;
    let exact: string | undefined;
    try {
      exact = new URL(origin).origin;
    } catch {
      exact = undefined;
    }
    if (exact !== origin) {
      throw fail('INVALID_CONFIG', `ALLOWED_ORIGINS entry ${JSON.stringify(origin)} is not an exact origin (scheme://host[:port], no path or trailing "/", no "*")${exact !== undefined && exact !== 'null' ? `: did you mean ${JSON.stringify(exact)}?` : ''}`);
    }
  }
  return origins;
}

/**
 * `TENANT_PREFIX`, or its default (also for `''`: tenants never share the bucket's root).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` for a prefix that is not one or
 * more segments a `{path}` could hold, each followed by `/` (the second probe's N5: an empty, `.`
 * or `..` segment, or a control or format character, would fold tenants together in a
 * path-normalising copy of the bucket, as a dot tenant folder would).
 */
export function tenantRoot(env: EdgeEnv): string {
  const prefix = env.TENANT_PREFIX;
  if (prefix === undefined || prefix === '') return DEFAULT_TENANT_PREFIX;
  if (typeof prefix !== 'string' || !prefix.endsWith('/') || !isSessionPath(prefix.slice(0, -1))) {
    throw fail('INVALID_CONFIG', `TENANT_PREFIX must be printable segments, none empty, "." or "..", each followed by "/" (like "tenants/"), got ${JSON.stringify(prefix)}`);
  }
  return prefix;
}

/**
 * A tenant as one segment of an R2 key: `encodeURIComponent` (no `/` survives, so no tenant's
 * prefix starts another's), and the tenants `.` and `..` as `%2E` and `%2E%2E`, so that no tenant
 * folder is a dot segment a path-normalising copy of the bucket (a sync to disk, a restore) would
 * resolve into another tenant's folder (the probe's F8).
 */
export function tenantSegment(tenant: string): string {
  const encoded = encodeURIComponent(tenant);
  return encoded === '.' || encoded === '..' ? encoded.replaceAll('.', '%2E') : encoded;
}

/**
 * The tenant whose {@link tenantSegment} is `segment`, or `undefined` when it is none's (not
 * percent-encoded UTF-8, empty, or not the canonical spelling: `alice@x` beside `alice%40x`, `%2f`
 * beside `%2F`, `.` beside `%2E`).
 */
export function tenantOfSegment(segment: string): string | undefined {
  let tenant: string;
  try {
    tenant = decodeURIComponent(segment);
  } catch {
    return undefined;
  }
  return tenant !== '' && tenantSegment(tenant) === segment ? tenant : undefined;
}

/** The R2 key prefix of one tenant's logs (SPEC §17.3): `TENANT_PREFIX` + {@link tenantSegment} + `/`. */
export function tenantPrefix(env: EdgeEnv, tenant: string): string {
  return `${tenantRoot(env)}${tenantSegment(tenant)}/`;
}

/**
 * The tenant and tenant-relative key of an R2 key, or `undefined` for a key outside
 * `TENANT_PREFIX` (or whose tenant part is not one {@link tenantPrefix} writes).
 */
export function tenantOfKey(env: EdgeEnv, key: string): { tenant: string; prefix: string; path: string } | undefined {
  const root = tenantRoot(env);
  if (!key.startsWith(root)) return undefined;
  const rest = key.slice(root.length);
  const slash = rest.indexOf('/');
  if (slash <= 0 || slash === rest.length - 1) return undefined;
  const encoded = rest.slice(0, slash);
  const tenant = tenantOfSegment(encoded);
  if (tenant === undefined) return undefined;
  return { tenant, prefix: `${root}${encoded}/`, path: rest.slice(slash + 1) };
}

/** The tenant's catalog (one `SessionCatalog` object per tenant, SPEC §17.5). */
export function catalogOf(env: EdgeEnv, tenant: string): CatalogApi {
  checkCatalogBinding(env);
  return env.CATALOG.get(env.CATALOG.idFromName(tenant)) as unknown as CatalogApi;
}

/** True when `value` is an object with every one of the named methods (a binding's shape). */
function hasMethods(value: unknown, names: readonly string[]): boolean {
  return typeof value === 'object' && value !== null && names.every((name) => typeof (value as Record<string, unknown>)[name] === 'function');
}

/** `CATALOG` is a Durable Object namespace (500 `SESSION_REFERENCE_INVALID_CONFIG` otherwise). */
function checkCatalogBinding(env: EdgeEnv): void {
  if (!hasMethods(env.CATALOG, ['get', 'idFromName'])) {
    throw fail('INVALID_CONFIG', 'the Worker has no Durable Object namespace bound as CATALOG (class SessionCatalog)');
  }
}

/**
 * The R2 bucket, checked to be bound: a missing `SESSIONS`, or one given as a `[vars]` string, is
 * 500 `SESSION_REFERENCE_INVALID_CONFIG` naming it (issue 27), never an empty catalog.
 */
export function bucketOf(env: EdgeEnv): R2Bucket {
  if (!hasMethods(env.SESSIONS, ['get', 'head', 'put', 'list', 'delete'])) {
    throw fail('INVALID_CONFIG', `the Worker has no R2 bucket bound as SESSIONS (got ${env.SESSIONS === undefined ? 'nothing' : `a ${typeof env.SESSIONS === 'string' ? 'string: put it under [[r2_buckets]], not [vars]' : typeof env.SESSIONS}`})`);
  }
  return env.SESSIONS;
}

/** The candidate limit of the service (SPEC §5 `candidateLimit`): `CANDIDATE_LIMIT`, else the library's default. */
export function candidateLimit(env: EdgeEnv): number {
  return settingNumber(env, 'CANDIDATE_LIMIT') ?? DEFAULT_SESSION_REFERENCE_CONFIG.candidateLimit;
}
