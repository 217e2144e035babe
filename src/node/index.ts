/**
 * Node entry `dsh-session-reference/node` (SPEC §1.2, §12): dsh's on-disk session store as a
 * `SessionQuery`, and the bundled sample store. Node only; the core never imports this entry.
 * @module dsh-session-reference/node
 */
export {
  createDshStoreSessionQuery,
  defaultSessionStoreRoot,
  type DshStoreOptions,
  type DshStoreSessionQuery,
} from './store.js';
export { sampleStoreRoot } from './samples.js';
