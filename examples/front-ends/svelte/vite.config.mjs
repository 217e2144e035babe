import { svelte } from '@sveltejs/vite-plugin-svelte';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { packageFromDist } from '../shared/package-from-dist.mjs';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  publicDir: false,
  envDir: false,
  plugins: [svelte({ configFile: false }), packageFromDist()],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
});
