import vue from '@vitejs/plugin-vue';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { packageFromDist } from '../shared/package-from-dist.mjs';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  publicDir: false,
  envDir: false,
  plugins: [vue(), packageFromDist()],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
});
