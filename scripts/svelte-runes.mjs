// Svelte 5 rune modules (`*.svelte.js`) for the test projects: compiled with the Svelte compiler's
// `compileModule`, as the Svelte Vite plugin does for an app, so a test's `$state(value)` is the
// deep reactive proxy Svelte really creates (`$.proxy` of `svelte/internal/client`). Used by
// vite.config.ts (node, chromium, workerd) and vitest.runtime.config.ts (Deno, Bun).
import { compileModule } from 'svelte/compiler';

/** @returns {import('vite').Plugin} */
export function svelteRunes() {
  return {
    name: 'svelte-runes',
    enforce: 'pre',
    transform(code, id) {
      if (!/\.svelte\.js$/.test(id.split('?')[0])) return null;
      const { js } = compileModule(code, { filename: id, generate: 'client' });
      return { code: js.code, map: js.map };
    },
  };
}
