/**
 * Compile-time check (npm run typecheck:edge): a Cloudflare R2 bucket binding, as the Workers
 * runtime types declare it, is an {@link ObjectStoreBucket} as it is, and the generated `Env`
 * fits the Worker's own.
 */
import { createObjectStoreSessionQuery, type ObjectStoreBucket } from 'dsh-session-reference/store';
import type { Env as WorkerEnv } from './handler.js';

export const r2IsAnObjectStore = (bucket: R2Bucket): ObjectStoreBucket => bucket;
export const queryOverR2 = (env: Env) => createObjectStoreSessionQuery(env.SESSIONS);
export const generatedEnvFits = (env: Env): WorkerEnv => env;
