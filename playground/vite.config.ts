/**
 * The playground (SPEC §13): a static Vite app over the library source in ../src.
 *
 *   npm run playground         dev server
 *   npm run build:playground   static site in playground/dist (relative base: works from any static host)
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));
const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig({
  root,
  base: './',
  // Keep the page self-contained: no public dir, no env files from the repository.
  publicDir: false,
  envDir: false,
  clearScreen: false,
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // Sample session logs stay separate files (fetched by the page), even small ones.
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  server: {
    host: '127.0.0.1',
    // The page imports ../src and fetches ../samples.
    fs: { allow: [repoRoot] },
  },
  preview: { host: '127.0.0.1' },
});
