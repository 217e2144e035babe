/**
 * The embedded store: sessions without a host (SPEC §11). Web APIs only: parses dsh session logs
 * (JSON Lines or zstd frames, whole or streamed) and serves them through an in-memory `SessionQuery`
 * or over an object store.
 * @module dsh-session-reference/store
 */
export { parseSessionLog, parseSessionLogHeader, type SessionLog, type SessionLogInput } from './log.js';
export { readSessionLog, type SessionLogReadOptions, type SessionLogSource, type SessionLogChunk } from './read.js';
export { provideZstdWasm } from './libzstd-provide.js';
export { createMemorySessionQuery, type MemorySessionQuery } from './memory.js';
export { createObjectStoreSessionQuery, type ObjectStoreBucket, type ObjectStoreListing, type ObjectStoreObjectBody, type ObjectStoreRange, type ObjectStoreSessionQuery, type ObjectStoreSessionQueryOptions } from './object-store.js';
