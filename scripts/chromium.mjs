// Debian's Chromium and the flags every headless launch here uses: the browser tests (vitest
// browser mode), the playground e2e test and the screenshot script share them. Never
// `playwright install`: browser downloads fail on these machines.
export const CHROMIUM_PATH = '/usr/bin/chromium';
/** Headless, and quiet: without the background-networking flags the closed network refuses many connections. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
