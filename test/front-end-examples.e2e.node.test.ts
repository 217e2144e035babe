/**
 * The React, Svelte 5 and Vue 3 example composers (examples/front-ends, SPEC §15.8) as users meet
 * them: the package's web entries are built (tsc, into a private folder), each example is built
 * with Vite against them through the package's exports map, served from 127.0.0.1, and driven in
 * the project's Chromium (scripts/chromium.mjs) through Playwright with real keys: type `@`, pick
 * with the keyboard from the composer's own menu (`suggest`, SPEC §15.9: Enter, then ↓↓ and Tab;
 * the combobox's `aria-activedescendant` follows), Backspace a chip, paste a mention, send, and
 * read the replay drawn from `describeReferencedMessage` over the framework's reactive state. No
 * console error and no page error may occur.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatSessionReferenceMention } from '../src/index.js';
import { buildExample, EXAMPLES } from '../examples/front-ends/build.mjs';
import { launchChromium, serveStatic } from '../playground/tools/harness.mjs';
import { WAIT_HANG_GUARD_MS } from './hang-guard.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const SCHEMA = formatSessionReferenceMention({ sessionId: 'session-schema', label: 'Schema migration' });

let work: string;
let browser: Browser;
let context: BrowserContext;
const servers: Record<string, Awaited<ReturnType<typeof serveStatic>>> = {};

beforeAll(async () => {
  // The package as built for users, in a folder of its own inside the project (so the examples
  // resolve its dependencies from node_modules like an installed package does).
  work = mkdtempSync(join(ROOT, 'node_modules', '.cache', 'front-end-examples-'));
  const dist = join(work, 'dist');
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(ROOT, 'tsconfig.build.json'), '--outDir', dist], { cwd: ROOT });
  process.env.DSH_SESSION_REFERENCE_DIST = dist;
  const out = mkdtempSync(join(tmpdir(), 'dsh-front-ends-'));
  const [, launched] = await Promise.all([
    (async () => {
      for (const name of EXAMPLES) servers[name] = await serveStatic(await buildExample(name, { outDir: join(out, name) }), { prefix: `/${name}/` });
    })(),
    launchChromium(),
  ]);
  browser = launched;
  context = await browser.newContext({ viewport: { width: 1000, height: 800 } });
  // Every Playwright wait and action (30 s by default) gets the hang guard: a busy machine is slow, not stuck.
  context.setDefaultTimeout(WAIT_HANG_GUARD_MS);
  for (const server of Object.values(servers)) await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.url).origin });
});

afterAll(async () => {
  await browser?.close();
  for (const server of Object.values(servers)) await server.close();
  delete process.env.DSH_SESSION_REFERENCE_DIST;
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Polls until the assertion holds (the page updates asynchronously); the limit is a hang guard, not vitest's 1 s. */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: WAIT_HANG_GUARD_MS, interval: 25 });

/** The session ids of the chips in the composer, in order. */
const chipIds = (page: Page) =>
  page.getByTestId('composer').locator('.dsh-mention').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-session-id')));

/** The session ids of the rows of the composer's menu while it is shown (none when it is hidden). */
const menuRows = (page: Page) =>
  page.locator('.dsh-mention-menu:not([hidden]) [role=option]').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-session-id')!));

describe.each(EXAMPLES)('the %s example composer (built with Vite, real Chromium)', (name) => {
  it('type @, pick with the keyboard, Backspace a chip, paste a mention, send, replay; no console errors', async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    page.on('console', (message) => message.type() === 'error' && errors.push(message.text()));
    page.on('pageerror', (error) => errors.push(String(error)));
    await page.goto(servers[name]!.url);
    const composer = page.getByTestId('composer');
    await composer.click();

    // `@` opens the composer's menu; the query narrows it; Enter inserts the active row as a chip.
    expect(await composer.getAttribute('role')).toBe('combobox');
    expect(await composer.getAttribute('aria-label')).toBe('Message');
    await page.keyboard.type('Compare @');
    await poll(() => menuRows(page)).toEqual(['session-schema', 'session-checksum', 'session-triage']);
    expect(await composer.getAttribute('aria-expanded')).toBe('true');
    await page.keyboard.type('sum');
    await poll(() => menuRows(page)).toEqual(['session-checksum']);
    await page.keyboard.press('Enter');
    await poll(() => chipIds(page)).toEqual(['session-checksum']);
    expect(await composer.locator('.dsh-mention').textContent()).toBe('@校验和：选用 XXH64');
    await poll(() => menuRows(page)).toEqual([]);
    expect(await composer.getAttribute('aria-expanded')).toBe('false');

    // ↓↓ and Tab pick the third row.
    await page.keyboard.type('and @');
    await poll(() => menuRows(page)).toEqual(['session-schema', 'session-checksum', 'session-triage']);
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await poll(() => page.locator('[role=option][aria-selected=true]').getAttribute('data-session-id')).toBe('session-triage');
    const active = await page.locator('[role=option][aria-selected=true]').getAttribute('id');
    expect(await composer.getAttribute('aria-activedescendant')).toBe(active);
    await page.keyboard.press('Tab');
    await poll(() => chipIds(page)).toEqual(['session-checksum', 'session-triage']);

    // Backspace: the space after the chip, then the whole chip.
    await page.keyboard.press('Backspace');
    await page.keyboard.press('Backspace');
    await poll(() => chipIds(page)).toEqual(['session-checksum']);

    // A pasted canonical mention becomes a chip.
    await page.evaluate((text) => navigator.clipboard.writeText(text), `${SCHEMA} please`);
    await page.keyboard.press('ControlOrMeta+v');
    await poll(() => chipIds(page)).toEqual(['session-checksum', 'session-schema']);
    expect(await composer.textContent()).toBe('Compare @校验和：选用 XXH64 and @Schema migration please');

    // Send: the replay shows the typed text with its chips and one line per source; the composer empties.
    await page.getByTestId('send').click();
    const sent = page.getByTestId('sent');
    await sent.waitFor();
    expect(await sent.locator('p').textContent()).toBe('Compare @校验和：选用 XXH64 and @Schema migration please');
    expect(await sent.getByTestId('replay-chip').evaluateAll((nodes) => nodes.map((node) => [node.getAttribute('data-session-id'), node.textContent]))).toEqual([
      ['session-checksum', '@校验和：选用 XXH64'],
      ['session-schema', '@Schema migration'],
    ]);
    expect(await sent.getByTestId('source').allTextContents()).toEqual(['校验和：选用 XXH64: 2 of 2 messages', 'Schema migration: 2 of 2 messages']);
    await poll(() => composer.textContent()).toBe('');
    expect(errors).toEqual([]);
    await page.close();
  });
});
