/**
 * The sample store shipped with the package (`samples/store/`, used by `--demo`).
 * @module
 */
import { fileURLToPath } from 'node:url';

/**
 * Absolute path of the bundled sample dsh store (`<package>/samples/store`): a real dsh log plus
 * generated sessions covering compaction, envelopes, steering, zstd logs and retention. Resolved
 * from this module's location, so it works from `src/`, `dist/` and an npm-installed copy.
 */
export function sampleStoreRoot(): string {
  // src/node/samples.ts and dist/node/samples.js both sit two levels below the package root.
  return fileURLToPath(new URL('../../samples/store', import.meta.url));
}
