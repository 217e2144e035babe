// Shared by the playground's end-to-end test (test/playground.e2e.node.test.ts) and the screenshot
// script (scripts/screenshot-playground.mjs): build the static site with the Vite JS API, serve it
// from 127.0.0.1 with a tiny static server, and launch the project's Chromium (scripts/chromium.mjs:
// the one @sparticuz/chromium ships, or $CHROMIUM_PATH) through Playwright.
// Node-only; never part of the page.
import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { createServer } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PLAYGROUND_DIR = fileURLToPath(new URL('..', import.meta.url));
import { CHROMIUM_ARGS, chromiumExecutable } from '../../scripts/chromium.mjs';

/**
 * Builds the playground into `outDir` (default playground/dist) with the root vite.config.ts.
 * @param {{ outDir?: string }} [options]
 * @returns {Promise<string>} the output directory
 */
export async function buildPlayground({ outDir = join(PLAYGROUND_DIR, 'dist') } = {}) {
  const { build } = await import('vite');
  await build({
    configFile: join(PLAYGROUND_DIR, '..', 'vite.config.ts'),
    logLevel: 'warn',
    build: { outDir, emptyOutDir: true },
  });
  return outDir;
}

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.jsonl': 'application/jsonl; charset=utf-8',
  '.zstd': 'application/zstd',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/**
 * Serves `dir` statically on 127.0.0.1 (a random free port) under `prefix` (default `/`),
 * like any static host would: no SPA fallback, no special headers.
 * @param {string} dir
 * @param {{ prefix?: string }} [options]
 * @returns {Promise<{ url: string; close: () => Promise<void> }>}
 */
export async function serveStatic(dir, { prefix = '/' } = {}) {
  const root = normalize(dir + sep);
  const server = createServer(async (request, response) => {
    try {
      const pathname = decodeURIComponent(new URL(request.url ?? '/', 'http://localhost').pathname);
      if (!pathname.startsWith(prefix)) throw Object.assign(new Error('outside prefix'), { status: 404 });
      let file = normalize(join(root, pathname.slice(prefix.length)));
      if (!file.startsWith(root)) throw Object.assign(new Error('outside root'), { status: 403 });
      if ((await stat(file)).isDirectory()) file = join(file, 'index.html');
      await stat(file);
      response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
      createReadStream(file).pipe(response);
    } catch (error) {
      response.writeHead(error?.status ?? 404, { 'content-type': 'text/plain' });
      response.end('not found');
    }
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address());
  return {
    url: `http://127.0.0.1:${port}${prefix}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

/** The project's Chromium (scripts/chromium.mjs) through Playwright (never `playwright install`). */
export async function launchChromium() {
  const { chromium } = await import('playwright');
  return chromium.launch({ executablePath: chromiumExecutable(), args: CHROMIUM_ARGS, headless: true });
}
