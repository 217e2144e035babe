/**
 * The R2 calls the catalog makes, typed structurally (an R2 bucket binding satisfies
 * {@link CatalogBucket} as it is), and the reading of one log object through the store pipeline
 * (SPEC §11.2.2): header, latest title, projected conversation and `capturedThroughSeq`, from one
 * streamed `get`.
 * @module
 */
import { describeValue, fail } from '../../errors.js';
import { cleanTitleLabel } from '../../label.js';
import { projectSurface, type ConversationItem } from '../../projection.js';
import { foldSurface } from '../../surface.js';
import { inObject } from '../../store/object-store.js';
import { DEFAULT_MAX_LOG_BYTES, SizedSource } from '../../store/pipeline.js';
import { firstThen, readSessionSurface } from '../../store/surface-read.js';

/** What `head`, `list` and `get` tell of an object (an `R2Object` fits). */
export interface CatalogObjectInfo {
  key: string;
  size: number;
  etag: string;
  uploaded: Date;
}

/** What `get` answers (an `R2ObjectBody` fits). */
export interface CatalogObjectBody extends CatalogObjectInfo {
  body: ReadableStream<Uint8Array>;
}

/** The R2 bucket binding as the catalog uses it. */
export interface CatalogBucket {
  head(key: string): Promise<CatalogObjectInfo | null>;
  get(key: string): Promise<CatalogObjectBody | null>;
  list(options: { prefix: string; cursor?: string; limit?: number }): Promise<{ objects: CatalogObjectInfo[]; truncated: boolean; cursor?: string }>;
}

/** What the catalog keeps of one log, read from its object. */
export interface ReadObject {
  key: string;
  etag: string;
  size: number;
  uploaded: number;
  sessionId: string;
  version: number;
  createdAt: number;
  /** The header's cwd as it is (any JSON value; only a non-empty string is a cwd, SPEC §6.3). */
  cwd: unknown;
  /** The latest title cleaned as SPEC §6.6, `undefined` when none is left. */
  title: string | undefined;
  capturedThroughSeq: number | null;
  /** The projected conversation (SPEC §8.2), what search indexes (SPEC §16.3). */
  items: ConversationItem[];
}

/**
 * Messages a read holds before retention drops texts: twice the search index's default
 * `maxIndexBytes` (256 KiB) plus room for the JSON, as `searchSessions` reads a session.
 */
const READ_BUDGET = 2 * 256 * 1024 + 4096;

/**
 * Reads the log at `fullKey` as it is now; `undefined` when the object is gone. With `unchanged`,
 * an object it says is unchanged (its etag and upload time) is not read: its body is cancelled and
 * `'unchanged'` returned (one R2 operation either way).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_LOG` (not a dsh log, or past
 * `maxLogBytes`) and `SESSION_REFERENCE_READ_FAILED` (a failed or short R2 read, or an object that
 * changed between two gets of one read), each naming the key.
 */
export async function readObject(
  bucket: CatalogBucket,
  fullKey: string,
  key: string,
  maxLogBytes = DEFAULT_MAX_LOG_BYTES,
  unchanged?: (info: CatalogObjectInfo) => boolean,
): Promise<ReadObject | 'unchanged' | undefined> {
  const first = await r2(`get(${describeValue(key)})`, () => bucket.get(fullKey));
  if (first === null) return undefined;
  if (unchanged?.(first)) {
    await first.body.cancel().catch(() => undefined);
    return 'unchanged';
  }
  const reopen = async () => {
    const again = await r2(`get(${describeValue(key)})`, () => bucket.get(fullKey));
    if (again === null || again.etag !== first.etag) throw fail('READ_FAILED', `object ${describeValue(key)} changed while it was being read`);
    return new SizedSource(again.body, again.size);
  };
  const read = await inObject(key, () => readSessionSurface(firstThen(new SizedSource(first.body, first.size), reopen), { maxLogBytes }, READ_BUDGET));
  const { header } = read;
  return {
    key,
    etag: first.etag,
    size: first.size,
    uploaded: first.uploaded.getTime(),
    sessionId: header.id,
    version: header.version as number,
    createdAt: header.createdAt,
    cwd: header.cwd,
    title: typeof read.title === 'string' ? cleanTitleLabel(read.title) || undefined : undefined,
    capturedThroughSeq: read.capturedThroughSeq,
    items: projectSurface(foldSurface(read.events)),
  };
}

/** One R2 call, its failure `SESSION_REFERENCE_READ_FAILED` (cause kept). */
export async function r2<T>(what: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw fail('READ_FAILED', `R2 ${what} failed: ${describeValue(error)}`, error);
  }
}
