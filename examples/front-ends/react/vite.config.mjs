import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';
import { packageFromDist } from '../shared/package-from-dist.mjs';

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  publicDir: false,
  envDir: false,
  plugins: [react(), packageFromDist()],
  build: { outDir: 'dist', emptyOutDir: true, target: 'es2022' },
});
