/**
 * What the engine and the hits of search (`engine.ts`, `hits.ts`, `stored.ts`, `snippets.ts`) use
 * of the root entry: handed to them once ({@link useEngineRoot} of `root.ts`) by the service's
 * search chunk (inside `kit.ts`) or by an edge catalog that runs the engine on its own SQLite.
 * Imports nothing of the service, so the catalog bundles none of it.
 * @module
 */
export { throwIfAborted } from '../abort.js';
export { pace } from '../pace.js';
export { hostDeflate } from '../host-deflate.js';
export { cwdGroup } from '../candidates.js';
export { isNonEmptyString } from '../host.js';
export { cleanTitleLabel, collapseUntrustedText } from '../label.js';
export { formatSessionReferenceMention } from '../mention.js';
export { utf8ByteLength } from '../utf8.js';
export { segmenterFingerprint } from '../host-segmenter.js';
