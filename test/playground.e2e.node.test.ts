/**
 * End-to-end test of the playground (SPEC §13) in real Chromium: builds the static site with the
 * Vite JS API, serves the built files from 127.0.0.1 under a sub-path (as any static host would),
 * and drives the project's Chromium (scripts/chromium.mjs) through Playwright.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, Page } from 'playwright';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatSessionReferenceMention } from '../src/index.js';
import { buildPlayground, launchChromium, serveStatic } from '../playground/tools/harness.mjs';
import { COMPACTED, ENVELOPED, REAL } from './sample-ids.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REAL_LOG = 'samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl';
const REAL_ID = REAL;
const REAL_TITLE = 'Bu projeyi gemini ile geliştiriyorduk';
const ZSTD_LOG = 'samples/store/77-Dumen/session-2b8e61d4-0f3a-4c7b-b9d2-5e7a1c3f9084/session.v3.jsonl.zstd';
const ZSTD_ID = COMPACTED;
const PICKED_LOG = 'samples/store/ledger-service/session-c5a09e7b-4d1f-4b28-a6e3-8f2d0b7c1e59/session.v3.jsonl';
const PICKED_ID = ENVELOPED;

interface Metadata {
  version: 1;
  references: Array<{
    sessionId: string;
    label: string;
    truncated: boolean;
    serializedBytes: number;
    budgetBytes: number;
    omittedBytes: number;
    omittedMessages: number;
    retainedMessages: number;
    originalMessages: number;
  }>;
}

/** Polls until the assertion holds (the page updates asynchronously). */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: 10_000, interval: 25 });

let outDir: string;
let server: Awaited<ReturnType<typeof serveStatic>>;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];

async function metadata(): Promise<Metadata> {
  return JSON.parse((await page.getByTestId('metadata').textContent()) ?? '') as Metadata;
}

/** Replaces the composer's text by typing it (real key events, one per character). */
async function typeFresh(text: string) {
  const composer = page.getByTestId('composer');
  await composer.fill('');
  await composer.pressSequentially(text);
}

/** Types `@query`, waits for the candidate `sessionId` and moves to it with the arrow keys, then Enter. */
async function citeWithKeyboard(query: string, sessionId: string) {
  const composer = page.getByTestId('composer');
  await composer.pressSequentially(`@${query}`);
  const items = page.getByTestId('candidate');
  await poll(() => items.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-session-id')))).toContain(sessionId);
  const ids = await items.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-session-id')));
  // Move with ArrowDown until the wanted candidate is highlighted.
  for (let i = 0; i < ids.indexOf(sessionId); i++) await composer.press('ArrowDown');
  await poll(() => page.locator('[data-testid=candidate][aria-selected=true]').getAttribute('data-session-id')).toBe(sessionId);
  await composer.press('Enter');
  await poll(() => page.getByTestId('candidate').count()).toBe(0);
}

/** Dispatches a real `drop` event carrying `File`s built from files of the repository. */
async function dropFiles(paths: string[]) {
  const files = paths.map((path) => ({ name: path.slice(path.lastIndexOf('/') + 1), base64: readFileSync(join(ROOT, path)).toString('base64') }));
  const dataTransfer = await page.evaluateHandle((list) => {
    const transfer = new DataTransfer();
    for (const { name, base64 } of list) {
      const binary = atob(base64);
      const bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      transfer.items.add(new File([bytes], name));
    }
    return transfer;
  }, files);
  await page.getByTestId('dropzone').dispatchEvent('dragenter', { dataTransfer });
  await page.getByTestId('dropzone').dispatchEvent('dragover', { dataTransfer });
  await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer });
}

describe('playground (built site, real Chromium)', { timeout: 60_000 }, () => {
  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'dsh-playground-'));
    const [, launched] = await Promise.all([buildPlayground({ outDir }), launchChromium()]);
    browser = launched;
    server = await serveStatic(outDir, { prefix: '/static/host/' });
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.url).origin });
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    await page.goto(server.url);
    await page.waitForSelector('[data-testid=status][data-state=ready]');
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
    if (outDir) rmSync(outDir, { recursive: true, force: true });
  });

  it('loads the sample sessions, real dsh log and zstd logs included, from a relative base', async () => {
    const ids = await page.getByTestId('session').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-session-id')));
    expect(ids).toContain(REAL_ID);
    expect(ids).toContain(ZSTD_ID);
    expect(await page.getByTestId('session-error').count()).toBe(0);
    await poll(() => page.getByTestId('error').count()).toBe(0);
  });

  it('cites a session picked from the @ candidates with the keyboard; block and metadata follow', async () => {
    await typeFresh('Continue the Dümen work from ');
    await citeWithKeyboard('dumen', REAL_ID);
    const mention = formatSessionReferenceMention({ sessionId: REAL_ID, label: REAL_TITLE });
    expect(await page.getByTestId('composer').inputValue()).toBe(`Continue the Dümen work from ${mention} `);
    await page.getByTestId('composer').pressSequentially('and list the open tasks.');

    await poll(() => page.getByTestId('composed').textContent()).toContain(`## My request:\n\nContinue the Dümen work from @${REAL_TITLE} and list the open tasks.`);
    const block = (await page.getByTestId('block').textContent()) ?? '';
    expect(block.startsWith('## Referenced sessions\n\n')).toBe(true);
    expect(block).toContain('\n<referenced-sessions>\n[{"sessionId":"' + REAL_ID + '"');
    expect(block.endsWith('\n</referenced-sessions>')).toBe(true);
    const meta = await metadata();
    expect(meta.version).toBe(1);
    expect(meta.references).toHaveLength(1);
    expect(meta.references[0]).toMatchObject({ sessionId: REAL_ID, label: REAL_TITLE, budgetBytes: 65536, truncated: false });
    const json = block.slice(block.indexOf('<referenced-sessions>\n') + 22, block.lastIndexOf('\n</referenced-sessions>'));
    const [reference] = JSON.parse(json) as Array<{ sessionId: string; conversation: Array<{ role: string; text: string }> }>;
    expect(reference!.conversation[0]!.text.startsWith('Bu projeyi gemini ile')).toBe(true);
    expect(meta.references[0]!.serializedBytes).toBe(new TextEncoder().encode(JSON.stringify(reference).replaceAll('<', '\\u003c')).byteLength);

    // The copy button copies exactly the composed text.
    await page.getByTestId('copy').click();
    const composed = await page.getByTestId('composed').textContent();
    await poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(composed);
    expect(composed).toBe(`${block}\n\n## My request:\n\nContinue the Dümen work from @${REAL_TITLE} and list the open tasks.`);
  });

  it('lowering maxReferenceBytes truncates the reference, and an impossible budget is an error', async () => {
    await page.getByTestId('max-reference-bytes').fill('1200');
    await poll(async () => (await metadata()).references[0]?.budgetBytes).toBe(1200);
    const [entry] = (await metadata()).references;
    expect(entry!.truncated).toBe(true);
    expect(entry!.serializedBytes).toBeLessThanOrEqual(1200);
    expect(entry!.omittedMessages).toBeGreaterThan(0);
    expect(entry!.retainedMessages).toBeLessThan(entry!.originalMessages);
    expect(entry!.omittedBytes).toBeGreaterThan(0);
    expect(await page.getByTestId('truncated').isVisible()).toBe(true);

    // Tighter still: the newest message itself is shortened head/tail with a notice.
    await page.getByTestId('max-reference-bytes').fill('420');
    await poll(() => page.getByTestId('block').textContent()).toContain('UTF-8 bytes omitted');
    expect((await metadata()).references[0]!.serializedBytes).toBeLessThanOrEqual(420);

    await page.getByTestId('max-reference-bytes').fill('40');
    await poll(() => page.getByTestId('error').getAttribute('data-code')).toBe('SESSION_REFERENCE_BUDGET_EXCEEDED');
    await page.getByTestId('max-reference-bytes').fill('0');
    await poll(() => page.getByTestId('error').getAttribute('data-code')).toBe('SESSION_REFERENCE_INVALID_CONFIG');
    await page.getByTestId('max-reference-bytes').fill('65536');
    await poll(() => page.getByTestId('error').count()).toBe(0);
    await poll(async () => (await metadata()).references[0]?.truncated).toBe(false);
  });

  it('a malformed mention shows SESSION_REFERENCE_INVALID_REFERENCE in place, never a blank page', async () => {
    await page.getByTestId('composer').pressSequentially(' See @[broken](dsh-session:not*base64)');
    // Poll for the final text's error: while typing, the partial bare URI `dsh-session:not` already
    // fails with the same code (an intermediate state that must not satisfy the test).
    await poll(() => page.getByTestId('error').textContent()).toContain('dsh-session:not*base64');
    expect(await page.getByTestId('error').getAttribute('data-code')).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
    await poll(() => page.getByTestId('mentions').textContent()).toContain('SESSION_REFERENCE_INVALID_REFERENCE');
    expect(await page.getByTestId('block').textContent()).toBe('');
    expect(await page.getByTestId('composer').isVisible()).toBe(true);
    expect(await page.getByTestId('target').isVisible()).toBe(true);
    // Fixing the text clears the error.
    const broken = ' See @[broken](dsh-session:not*base64)';
    await page.getByTestId('composer').evaluate((node, length) => {
      const area = node as HTMLTextAreaElement;
      area.setSelectionRange(area.value.length - length, area.value.length);
    }, broken.length);
    await page.getByTestId('composer').press('Backspace');
    await poll(() => page.getByTestId('error').count()).toBe(0);
    await poll(async () => (await metadata()).references.length).toBe(1);
  });

  it('the target session is never a candidate and its cwd ranks the others', async () => {
    await page.getByTestId('target').selectOption(REAL_ID);
    await typeFresh('@');
    await poll(() => page.getByTestId('candidate').count()).toBeGreaterThan(2);
    const ids = await page.getByTestId('candidate').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-session-id')));
    expect(ids).not.toContain(REAL_ID);
    expect(ids.slice(0, 2).sort()).toEqual([ZSTD_ID, 'session-7d2f4c1a-93be-4f6e-8a05-c1e4b2d97a30'].sort());
    await page.getByTestId('composer').press('Escape');
    await poll(() => page.getByTestId('candidate').count()).toBe(0);
    await page.getByTestId('target').selectOption('__draft__');
  });

  it('the matchTitles checkbox (on by default) lets @ title words find a session (SPEC §6.7)', async () => {
    const checkbox = page.getByTestId('match-titles');
    expect(await checkbox.isChecked()).toBe(true);
    const candidates = () => page.getByTestId('candidate').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-session-id')));
    await typeFresh('@gemini');
    await poll(candidates).toEqual([REAL_ID]);
    await page.getByTestId('composer').press('Escape');
    await checkbox.uncheck();
    await typeFresh('@gemini');
    await poll(() => page.getByTestId('candidate').count()).toBe(0);
    await checkbox.check();
    await typeFresh('');
  });

  it('dropped real dsh files (plain and zstd) and a picked file replace the store and can be cited', async () => {
    await page.getByTestId('clear-sessions').click();
    await poll(() => page.getByTestId('session').count()).toBe(0);
    await dropFiles([REAL_LOG, ZSTD_LOG]);
    await poll(() => page.getByTestId('session').count()).toBe(2);
    await page.getByTestId('file-input').setInputFiles(join(ROOT, PICKED_LOG));
    await poll(() => page.getByTestId('session').count()).toBe(3);
    const ids = await page.getByTestId('session').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-session-id')));
    expect(ids).toEqual([REAL_ID, ZSTD_ID, PICKED_ID]);
    expect(await page.getByTestId('session-error').count()).toBe(0);

    await typeFresh('Compare ');
    await citeWithKeyboard('2b8e', ZSTD_ID);
    await page.getByTestId('composer').pressSequentially('with ');
    await citeWithKeyboard('904b', REAL_ID);
    await page.getByTestId('composer').pressSequentially('and ');
    await citeWithKeyboard('c5a0', PICKED_ID);
    await poll(async () => (await metadata()).references.map((reference) => reference.sessionId)).toEqual([ZSTD_ID, REAL_ID, PICKED_ID]);
    const block = (await page.getByTestId('block').textContent()) ?? '';
    expect(block.indexOf(ZSTD_ID)).toBeLessThan(block.indexOf(REAL_ID));
    expect(block).toContain('"checkpoint":true');
    expect(await page.getByTestId('reference').count()).toBe(3);

    // Three distinct sessions are one too many for maxReferences 2.
    await page.getByTestId('max-references').fill('2');
    await poll(() => page.getByTestId('error').getAttribute('data-code')).toBe('SESSION_REFERENCE_TOO_MANY');
    await page.getByTestId('max-references').fill('3');
    await poll(() => page.getByTestId('error').count()).toBe(0);
    expect(pageErrors).toEqual([]);
  });
});
