/**
 * The root entry's functions inside the search chunk: set once by the service's loader
 * ({@link useRoot}) before any search runs (see `kit.ts`), or, for the engine and hits alone, by an
 * edge catalog ({@link useEngineRoot}, see `engine-kit.ts`).
 * @module
 */
export type Kit = typeof import('./kit.js');
export type EngineKit = typeof import('./engine-kit.js');

/** The root's functions for the service's glue (`search.ts`); set before the chunk's first use. */
export let root: Kit;

/** The functions the engine and hits use; set before their first use. */
export let engineRoot: EngineKit;

/** Hands the chunk the root's functions (the service's loader calls it once). */
export function useRoot(kit: Kit): void {
  root = kit;
  engineRoot = kit;
}

/**
 * Hands the engine and hits (`engine.ts`, `hits.ts`) the functions they use, for a host that runs
 * them without the service (an edge catalog on a Durable Object's SQLite):
 * `useEngineRoot(await import('…/search/engine-kit.js'))` once, before its first index.
 */
export function useEngineRoot(kit: EngineKit): void {
  engineRoot = kit;
}
