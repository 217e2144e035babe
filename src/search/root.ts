/**
 * The root entry's functions inside the search chunk: set once by the service's loader
 * ({@link useRoot}) before any search runs (see `kit.ts`).
 * @module
 */
export type Kit = typeof import('./kit.js');

/** The root's functions; set before the chunk's first use. */
export let root: Kit;

/** Hands the chunk the root's functions (the service's loader calls it once). */
export function useRoot(kit: Kit): void {
  root = kit;
}
