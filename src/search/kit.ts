/**
 * What the search chunk uses of the root entry (SPEC §16.5), handed to it when it loads. The chunk
 * imports nothing of the root itself: a static import would make bundlers split the shared modules
 * into a chunk every root import loads up front, growing even apps that never search.
 * @module
 */
export * from './engine-kit.js';
export { checkSignal, raceAbort } from '../abort.js';
export { listCandidates, readTitleLabels } from '../candidates.js';
export { isPositiveSafeInteger } from '../config.js';
export { check, fail } from '../errors.js';
export { callHost, presentEntries } from '../host.js';
export { readSnapshot } from '../service.js';
export { compileWasm, compileWasmSync } from '../wasm.js';
export { sqliteWasm } from './sqlite-provide.js';
