// Svelte 5 state as an app writes it (compiled by scripts/svelte-runes.mjs in every test runtime).

/**
 * `value` as Svelte 5 `$state`: a deep reactive proxy, the kind a component's state is.
 * @template T
 * @param {T} value
 * @returns {T}
 */
export function svelteState(value) {
  const state = $state(value);
  return state;
}
