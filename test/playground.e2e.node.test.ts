/**
 * End-to-end test of the playground (SPEC §13, §15) in real Chromium: builds the static site with
 * the Vite JS API, serves the built files from 127.0.0.1 under a sub-path (as any static host
 * would), and drives the project's Chromium (scripts/chromium.mjs) through Playwright.
 *
 * Every test opens the page afresh (beforeEach), so none depends on what another left behind: the
 * file passes alone, in any order (`--sequence.shuffle`) and test by test.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { encodeSessionReferenceUri, formatSessionReferenceMention, REFERENCE_WARNING } from '../src/index.js';
import { parseSessionLog } from '../src/store/index.js';
import { buildPlayground, launchChromium, serveStatic } from '../playground/tools/harness.mjs';
import { historyText } from '../playground/src/history.js';
import { countTokens } from '../playground/src/token-count.js';
import { WAIT_HANG_GUARD_MS } from './hang-guard.js';
import { COMPACTED, ENVELOPED, REAL } from './sample-ids.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const REAL_LOG = 'samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl';
const REAL_ID = REAL;
const REAL_TITLE = 'Bu projeyi gemini ile geliştiriyorduk';
const ZSTD_LOG = 'samples/store/77-Dumen/session-2b8e61d4-0f3a-4c7b-b9d2-5e7a1c3f9084/session.v3.jsonl.zstd';
const ZSTD_ID = COMPACTED;
const PICKED_LOG = 'samples/store/ledger-service/session-c5a09e7b-4d1f-4b28-a6e3-8f2d0b7c1e59/session.v3.jsonl';
const PICKED_ID = ENVELOPED;
const REAL_MENTION = formatSessionReferenceMention({ sessionId: REAL_ID, label: REAL_TITLE });

interface MetadataEntry {
  sessionId: string;
  label: string;
  capturedThroughSeq: number | null;
  compacted: boolean;
  truncated: boolean;
  serializedBytes: number;
  budgetBytes: number;
  omittedBytes: number;
  omittedMessages: number;
  retainedMessages: number;
  originalMessages: number;
}

interface Metadata {
  version: 1;
  references: MetadataEntry[];
}

/** Polls until the assertion holds (the page updates asynchronously); the limit is a hang guard. */
const poll = <T>(read: () => T | Promise<T>) => expect.poll(read, { timeout: WAIT_HANG_GUARD_MS, interval: 25 });

let outDir: string;
let server: Awaited<ReturnType<typeof serveStatic>>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let pageErrors: string[];

async function metadata(): Promise<Metadata> {
  return JSON.parse((await page.getByTestId('metadata').textContent()) ?? '') as Metadata;
}

const composer = () => page.getByTestId('composer');

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The composer's underlying text, read from its raw view (every test starts with it shown). */
async function rawText(): Promise<string> {
  return page.getByTestId('composer-raw').inputValue();
}

/** Empties the composer with the keyboard (select all, Backspace), then types `text` key by key. */
async function typeFresh(text: string) {
  await composer().click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.press('Backspace');
  await poll(() => composer().textContent()).toBe('');
  await page.keyboard.type(text);
}

/** The session ids of the candidates shown once the list for `query` has arrived. */
async function candidatesFor(query: string): Promise<string[]> {
  await page.locator(`[data-testid=candidates][data-state=ready][data-query="${query}"]`).waitFor();
  return page.getByTestId('candidate').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-session-id')!));
}

/**
 * Types `@query`, waits for the candidates of exactly that query, moves to `sessionId` with
 * ArrowDown and inserts it with `key` (Enter or Tab).
 */
async function citeWithKeyboard(query: string, sessionId: string, key: 'Enter' | 'Tab' = 'Enter') {
  await page.keyboard.type(`@${query}`);
  const ids = await candidatesFor(query);
  expect(ids).toContain(sessionId);
  for (let i = 0; i < ids.indexOf(sessionId); i++) await page.keyboard.press('ArrowDown');
  await poll(() => page.locator('[data-testid=candidate][aria-selected=true]').getAttribute('data-session-id')).toBe(sessionId);
  await page.keyboard.press(key);
  await poll(() => page.getByTestId('candidates').count()).toBe(0);
}

/** The chips of the composer, as `[state, session id or code, shown text]`. */
async function chips(): Promise<string[][]> {
  return composer()
    .locator('[data-testid=chip]')
    .evaluateAll((nodes) => nodes.map((node) => [node.getAttribute('data-state')!, node.getAttribute('data-session-id') ?? node.getAttribute('data-code')!, node.textContent!]));
}

/** Dispatches a real `drop` event carrying `File`s built from files of the repository (or given contents). */
async function dropFiles(files: Array<string | { name: string; text: string }>) {
  const list = files.map((file) =>
    typeof file === 'string'
      ? { name: file.slice(file.lastIndexOf('/') + 1), base64: readFileSync(join(ROOT, file)).toString('base64') }
      : { name: file.name, base64: Buffer.from(file.text).toString('base64') },
  );
  const dataTransfer = await page.evaluateHandle((entries) => {
    const transfer = new DataTransfer();
    for (const { name, base64 } of entries) {
      const binary = atob(base64);
      const bytes = new Uint8Array(binary.length);
      for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
      transfer.items.add(new File([bytes], name));
    }
    return transfer;
  }, list);
  await page.getByTestId('dropzone').dispatchEvent('dragenter', { dataTransfer });
  await page.getByTestId('dropzone').dispatchEvent('dragover', { dataTransfer });
  await page.getByTestId('dropzone').dispatchEvent('drop', { dataTransfer });
}

/** Puts `text` on the clipboard and pastes it into the composer with the keyboard. */
async function paste(text: string) {
  await page.evaluate((value) => navigator.clipboard.writeText(value), text);
  await page.keyboard.press('ControlOrMeta+v');
}

describe('playground (built site, real Chromium)', () => {
  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'dsh-playground-'));
    const [, launched] = await Promise.all([buildPlayground({ outDir }), launchChromium()]);
    browser = launched;
    server = await serveStatic(outDir, { prefix: '/static/host/' });
    context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    // Every Playwright wait and action (30 s by default) gets the hang guard: a busy machine is slow, not stuck.
    context.setDefaultTimeout(WAIT_HANG_GUARD_MS);
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(server.url).origin });
  });

  // A fresh page for every test: a known state, whatever ran before.
  beforeEach(async () => {
    pageErrors = [];
    page = await context.newPage();
    page.on('pageerror', (error) => pageErrors.push(String(error)));
    await page.goto(server.url);
    await page.waitForSelector('[data-testid=status][data-state=ready]');
    await page.getByTestId('raw-toggle').check();
  });

  afterEach(async () => {
    expect(pageErrors).toEqual([]);
    await page?.close();
  });

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

  it('cites a session picked from the @ candidates with the keyboard: a chip over the canonical markup; block and metadata follow', async () => {
    await typeFresh('Continue the Dümen work from ');
    await citeWithKeyboard('dumen', REAL_ID);
    expect(await chips()).toEqual([['ok', REAL_ID, `@${REAL_TITLE}`]]);
    expect(await composer().locator('[data-testid=chip]').getAttribute('title')).toBe(REAL_ID);
    await page.keyboard.type('and list the open tasks.');
    expect(await rawText()).toBe(`Continue the Dümen work from ${REAL_MENTION} and list the open tasks.`);

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

  it('Tab inserts too, Esc closes the candidates without inserting, ↑ wraps to the last row', async () => {
    await typeFresh('See ');
    await page.keyboard.type('@');
    const ids = await candidatesFor('');
    expect(ids.length).toBeGreaterThan(2);
    await page.keyboard.press('ArrowUp');
    await poll(() => page.locator('[data-testid=candidate][aria-selected=true]').getAttribute('data-session-id')).toBe(ids.at(-1));
    await page.keyboard.press('Escape');
    await poll(() => page.getByTestId('candidates').count()).toBe(0);
    expect(await rawText()).toBe('See @');
    await page.keyboard.press('Backspace');
    await citeWithKeyboard('2b8e', ZSTD_ID, 'Tab');
    expect(await rawText()).toBe(`See ${formatSessionReferenceMention({ sessionId: ZSTD_ID, label: 'Dümen: seeds.py done, Annex XI dossier (compacted)' })} `);
  });

  it('a pointer standing still over the candidates never takes the highlight from the keyboard (the old order-dependent failure)', async () => {
    // Earlier tests used to leave the mouse where the candidate list opens: Chromium then sends
    // mouse events to the rows that appear or scroll under it, and the highlight jumped there.
    await typeFresh('');
    await page.keyboard.type('@');
    const ids = await candidatesFor('');
    const box = (await page.getByTestId('candidate').nth(2).boundingBox())!;
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await poll(() => page.locator('[data-testid=candidate][aria-selected=true]').getAttribute('data-session-id')).toBe(ids[2]);
    // The pointer stays put while the keyboard walks to the last row, which scrolls the list under it.
    for (let i = 2; i < ids.length - 1; i++) await page.keyboard.press('ArrowDown');
    await poll(() => page.locator('#candidate-list').evaluate((list) => list.scrollTop)).toBeGreaterThan(0);
    await page.waitForTimeout(300);
    expect(await page.locator('[data-testid=candidate][aria-selected=true]').getAttribute('data-session-id')).toBe(ids.at(-1));
    await page.keyboard.press('Enter');
    expect((await chips()).map(([state, id]) => [state, id])).toEqual([['ok', ids.at(-1)]]);
  });

  it('chips are atomic: the caret steps over a chip, Backspace and Delete next to one remove it whole', async () => {
    await typeFresh('A ');
    await citeWithKeyboard('904b', REAL_ID);
    await page.keyboard.type('B');
    expect(await rawText()).toBe(`A ${REAL_MENTION} B`);
    await composer().click();
    await page.keyboard.press('End');
    // B, the space, then the chip in one step: the caret is never inside the markup.
    for (const key of ['ArrowLeft', 'ArrowLeft', 'ArrowLeft']) await page.keyboard.press(key);
    await page.keyboard.type('[');
    await page.keyboard.press('ArrowRight');
    await page.keyboard.type(']');
    expect(await rawText()).toBe(`A [${REAL_MENTION}] B`);
    // Backspace just after the chip removes the whole mention.
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('Backspace');
    expect(await rawText()).toBe('A [] B');
    expect(await chips()).toEqual([]);
    // Delete just before a chip removes it whole too.
    await paste(REAL_MENTION);
    expect(await chips()).toEqual([['ok', REAL_ID, `@${REAL_TITLE}`]]);
    await page.keyboard.press('ArrowLeft');
    expect(await rawText()).toBe(`A [${REAL_MENTION}] B`);
    await page.keyboard.press('Delete');
    expect(await rawText()).toBe('A [] B');
    // Undo brings it back, redo removes it again.
    await page.keyboard.press('ControlOrMeta+z');
    expect(await rawText()).toBe(`A [${REAL_MENTION}] B`);
    await page.keyboard.press('ControlOrMeta+Shift+z');
    expect(await rawText()).toBe('A [] B');
    // A letter typed right after a bare URI would join its token: the editor puts a space between.
    const bare = encodeSessionReferenceUri(ZSTD_ID);
    await typeFresh('');
    await paste(bare);
    await page.keyboard.type('x');
    expect(await rawText()).toBe(`${bare} x`);
  });

  it("a session row's Cite button inserts its mention as a chip at the caret", async () => {
    await typeFresh('see  now');
    for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowLeft');
    await page.locator(`[data-testid=session][data-session-id="${REAL_ID}"]`).getByRole('button', { name: 'Cite' }).click();
    await poll(rawText).toBe(`see ${REAL_MENTION} now`);
    expect(await chips()).toEqual([['ok', REAL_ID, `@${REAL_TITLE}`]]);
    // The caret is after the chip, in the composer: typing goes on there.
    await page.keyboard.type('!');
    expect(await rawText()).toBe(`see ${REAL_MENTION}! now`);
  });

  it('the search box finds a session by words said in it, marks the matched words, and Cite inserts its chip (SPEC §16.6)', async () => {
    await typeFresh('compare ');
    const query = 'currencies reconciled';
    await page.getByTestId('search-input').fill(query);
    await page.locator(`[data-testid=search][data-state=ready][data-query="${query}"]`).waitFor();
    const hit = page.getByTestId('search-hit').first();
    expect(await hit.getAttribute('data-session-id')).toBe(PICKED_ID);
    const marks = (await hit.locator('mark').allTextContents()).map((word) => word.toLowerCase());
    expect(marks).toContain('currencies');
    // Snippet text is built from text nodes and <mark> elements only, never parsed as markup.
    const kinds = await page.locator('[data-testid=snippet] > span:last-child').evaluateAll((spans) =>
      [...new Set(spans.flatMap((span) => [...span.childNodes].map((node) => (node.nodeType === Node.TEXT_NODE ? '#text' : node.nodeName))))].sort(),
    );
    expect(kinds).toEqual(['#text', 'MARK']);
    const label = (await hit.locator('strong').textContent())!;
    await composer().click();
    await page.keyboard.press('ControlOrMeta+End');
    await hit.getByTestId('search-cite').click();
    await poll(rawText).toBe(`compare ${formatSessionReferenceMention({ sessionId: PICKED_ID, label })} `);
    expect(await chips()).toEqual([['ok', PICKED_ID, `@${label}`]]);
    await poll(async () => (await metadata()).references.map((reference) => reference.sessionId)).toEqual([PICKED_ID]);
  });

  it('the search index is kept in IndexedDB; a corrupt saved index is rebuilt and gives the right answer', async () => {
    const savedIndex = () =>
      page.evaluate(
        () =>
          new Promise<string>((resolve, reject) => {
            const open = indexedDB.open('dsh-session-reference-playground', 1);
            open.onerror = () => reject(open.error);
            open.onsuccess = () => {
              const get = open.result.transaction('search-index').objectStore('search-index').get('index');
              get.onsuccess = () => {
                open.result.close();
                resolve(get.result instanceof Uint8Array ? new TextDecoder().decode(get.result.subarray(0, 40)) : String(get.result));
              };
              get.onerror = () => reject(get.error);
            };
          }),
      );
    const search = async (query: string) => {
      await page.getByTestId('search-input').fill(query);
      await page.locator(`[data-testid=search][data-state=ready][data-query="${query}"]`).waitFor();
      return page.getByTestId('search-hit').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-session-id')));
    };
    expect((await search('currencies reconciled'))[0]).toBe(PICKED_ID);
    await poll(savedIndex).toMatch(/^dsh-session-reference\/search-index@\d+ /);
    // Damaged bytes in the database: the next visit ignores them and rebuilds.
    await page.evaluate(
      () =>
        new Promise<void>((resolve, reject) => {
          const open = indexedDB.open('dsh-session-reference-playground', 1);
          open.onerror = () => reject(open.error);
          open.onsuccess = () => {
            const transaction = open.result.transaction('search-index', 'readwrite');
            transaction.objectStore('search-index').put(new TextEncoder().encode('dsh-session-reference/search-index@1 not-a-checksum\n{"broken":'), 'index');
            transaction.oncomplete = () => {
              open.result.close();
              resolve();
            };
            transaction.onerror = () => reject(transaction.error);
          };
        }),
    );
    await page.reload();
    await page.waitForSelector('[data-testid=status][data-state=ready]');
    expect((await search('currencies reconciled'))[0]).toBe(PICKED_ID);
    expect(await page.getByTestId('search-error').count()).toBe(0);
    await poll(savedIndex).toMatch(/^dsh-session-reference\/search-index@\d+ [0-9a-f]{3}/);
  });

  it('pasted text with canonical mentions and a bare URI yields chips; unknown and malformed ones are marked', async () => {
    const unknown = formatSessionReferenceMention({ sessionId: 'session-not-in-store', label: 'Gone [old]' });
    const bare = encodeSessionReferenceUri(ZSTD_ID);
    const pasted = `Compare ${REAL_MENTION} with ${bare}\nand ${unknown}, not @[bad](dsh-session:e30).`;
    await typeFresh('');
    await paste(pasted);
    expect(await rawText()).toBe(pasted);
    expect(await chips()).toEqual([
      ['ok', REAL_ID, `@${REAL_TITLE}`],
      ['ok', ZSTD_ID, `@${ZSTD_ID}`],
      ['unknown', 'session-not-in-store', '@Gone [old]'],
      ['malformed', 'SESSION_REFERENCE_INVALID_REFERENCE', '@bad'],
    ]);
    // Copy puts the canonical markup (not the labels) on the clipboard.
    await composer().click();
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.press('ControlOrMeta+c');
    await poll(() => page.evaluate(() => navigator.clipboard.readText())).toBe(pasted);
    // Editing the raw markup redraws the chips.
    await page.getByTestId('composer-raw').fill(`only ${bare}`);
    expect(await chips()).toEqual([['ok', ZSTD_ID, `@${ZSTD_ID}`]]);
  });

  it('lowering maxReferenceBytes truncates the reference, and an impossible budget is an error', async () => {
    await typeFresh('Continue ');
    await citeWithKeyboard('dumen', REAL_ID);
    await poll(async () => (await metadata()).references.length).toBe(1);
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

  it('a malformed mention is a warning chip and SESSION_REFERENCE_INVALID_REFERENCE in place; one Backspace removes it', async () => {
    await typeFresh('Continue ');
    await citeWithKeyboard('dumen', REAL_ID);
    await page.keyboard.type('See ');
    // Pasted: typed key by key, the payload would start a bare URI chip that the next letter may
    // not join (SPEC §15.7), so the editor would put a space after it.
    await paste('@[broken](dsh-session:not*base64)');
    await poll(() => page.getByTestId('error').textContent()).toContain('dsh-session:not*base64');
    expect(await page.getByTestId('error').getAttribute('data-code')).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
    expect((await chips()).at(-1)).toEqual(['malformed', 'SESSION_REFERENCE_INVALID_REFERENCE', '@broken']);
    expect(await page.getByTestId('block').textContent()).toBe('');
    expect(await composer().isVisible()).toBe(true);
    expect(await page.getByTestId('target').isVisible()).toBe(true);
    // The malformed mention is one chip too: Backspace removes it whole and the error goes away.
    await page.keyboard.press('Backspace');
    expect(await rawText()).toBe(`Continue ${REAL_MENTION} See `);
    await poll(() => page.getByTestId('error').count()).toBe(0);
    await poll(async () => (await metadata()).references.length).toBe(1);
  });

  it('the target session is never a candidate and its cwd ranks the others', async () => {
    await page.getByTestId('target').selectOption(REAL_ID);
    await typeFresh('');
    await page.keyboard.type('@');
    const ids = await candidatesFor('');
    expect(ids.length).toBeGreaterThan(2);
    expect(ids).not.toContain(REAL_ID);
    expect(ids.slice(0, 2).sort()).toEqual([ZSTD_ID, 'session-7d2f4c1a-93be-4f6e-8a05-c1e4b2d97a30'].sort());
    await page.keyboard.press('Escape');
    await poll(() => page.getByTestId('candidates').count()).toBe(0);
  });

  it('the matchTitles checkbox (on by default) lets @ title words find a session (SPEC §6.7)', async () => {
    const checkbox = page.getByTestId('match-titles');
    expect(await checkbox.isChecked()).toBe(true);
    await typeFresh('@gemini');
    expect(await candidatesFor('gemini')).toEqual([REAL_ID]);
    // Unticked while the same query stays open: the list is asked again, with the new config.
    await checkbox.uncheck();
    await composer().click();
    await page.keyboard.press('ControlOrMeta+End');
    await poll(() => page.getByTestId('candidates').getAttribute('data-query')).toBe('gemini');
    expect(await candidatesFor('gemini')).toEqual([]);
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
    await page.keyboard.type('with ');
    await citeWithKeyboard('904b', REAL_ID);
    await page.keyboard.type('and ');
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
  });

  it('the replay view shows the typed text with chips where the mentions stood and one source card per session, equal to the metadata', async () => {
    await page.getByTestId('max-reference-bytes').fill('3000');
    await typeFresh('Ask ');
    await citeWithKeyboard('2b8e', ZSTD_ID);
    await page.keyboard.type('then email @A team and @Anna, then ');
    await citeWithKeyboard('904b', REAL_ID);
    await poll(async () => (await metadata()).references.map((reference) => reference.sessionId)).toEqual([ZSTD_ID, REAL_ID]);
    const meta = await metadata();
    const replay = page.getByTestId('replay');
    const zstdLabel = 'Dümen: seeds.py done, Annex XI dossier (compacted)';
    await poll(() => replay.getByTestId('replay-display').textContent()).toBe(`Ask @${zstdLabel} then email @A team and @Anna, then @${REAL_TITLE} `);
    // Exactly two chips, where the mentions were typed (`@A` and `@Anna` are plain text).
    const replayChips = await replay.getByTestId('replay-chip').evaluateAll((nodes) => nodes.map((node) => [node.getAttribute('data-session-id'), node.textContent]));
    expect(replayChips).toEqual([
      [ZSTD_ID, `@${zstdLabel}`],
      [REAL_ID, `@${REAL_TITLE}`],
    ]);
    const cards = await replay.getByTestId('source-card').evaluateAll((nodes) =>
      nodes.map((node) => ({
        sessionId: node.getAttribute('data-session-id'),
        label: node.querySelector('[data-testid=source-label]')?.textContent,
        seq: node.querySelector('[data-testid=source-seq]')?.textContent,
        kept: node.querySelector('[data-testid=source-kept]')?.textContent,
        omitted: node.querySelector('[data-testid=source-omitted]')?.textContent ?? '0',
        omittedBytes: node.querySelector('[data-testid=source-omitted-bytes]')?.textContent ?? '0',
        compacted: !!node.querySelector('[data-testid=source-compacted]'),
        truncated: !!node.querySelector('[data-testid=source-truncated]'),
      })),
    );
    const number = (value: number) => new Intl.NumberFormat('en-US').format(value);
    expect(cards).toEqual(
      meta.references.map((entry) => ({
        sessionId: entry.sessionId,
        label: entry.label,
        seq: String(entry.capturedThroughSeq ?? '–'),
        kept: number(entry.retainedMessages),
        omitted: number(entry.omittedMessages),
        omittedBytes: number(entry.omittedBytes),
        compacted: entry.compacted,
        truncated: entry.truncated,
      })),
    );
    expect(meta.references.some((entry) => entry.truncated)).toBe(true);
    expect(meta.references.some((entry) => entry.compacted)).toBe(true);

    // A dsh recall message (SPEC §14.3) pasted as JSON: its source cards, no display.
    const recall = {
      id: 'recall-1',
      role: 'user',
      content: [{ type: 'text', text: (await page.getByTestId('block').textContent()) ?? '' }],
      source: { kind: 'session-reference', form: 'recall', version: 1, references: meta.references.map((entry, inputIndex) => ({ ...entry, inputIndex })) },
    };
    await page.getByTestId('replay-input').fill(JSON.stringify(recall));
    const external = page.getByTestId('replay-external');
    await poll(() => external.getAttribute('data-kind')).toBe('recall');
    expect(await external.getByTestId('replay-display').count()).toBe(0);
    expect(await external.getByTestId('source-card').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-session-id')))).toEqual([ZSTD_ID, REAL_ID]);
    expect(await external.getByTestId('source-label').allTextContents()).toEqual(meta.references.map((entry) => entry.label));

    // The composed message itself, dropped as a .json file, replays like the live one.
    await page.evaluate(() => {
      const toggle = [...document.querySelectorAll('label.toggle')].find((label) => label.textContent?.includes('as JSON'))?.querySelector('input');
      toggle?.click();
    });
    // The pane shows the message as JSON once it has re-rendered (its text view is not JSON).
    const composedText = async () => (await page.getByTestId('composed').textContent()) ?? '';
    await poll(async () => isJson(await composedText())).toBe(true);
    const composedJson = await composedText();
    await dropFiles([{ name: 'message.json', text: composedJson }]);
    await poll(() => external.getAttribute('data-kind')).toBe('composed');
    expect(await external.getByTestId('replay-chip').count()).toBe(2);
    expect(await external.getByTestId('source-card').count()).toBe(2);
  });

  it('token counts (DeepSeek V3) of the warning, each reference and the whole message equal the tokenizer in Node; the KV-cache prefix is the target history', async () => {
    await page.getByTestId('target').selectOption(REAL_ID);
    await typeFresh('Finish what ');
    await citeWithKeyboard('2b8e', ZSTD_ID);
    await page.keyboard.type('decided.');
    await poll(() => page.getByTestId('tokenizer-state').getAttribute('data-state')).toBe('ready');
    // The composed message of the whole typed text (the panes update after each keystroke).
    const request = '## My request:\n\nFinish what @Dümen: seeds.py done, Annex XI dossier (compacted) decided.';
    await poll(async () => ((await page.getByTestId('composed').textContent()) ?? '').endsWith(request)).toBe(true);
    const composed = (await page.getByTestId('composed').textContent()) ?? '';
    const block = (await page.getByTestId('block').textContent()) ?? '';
    const json = block.slice(block.indexOf('<referenced-sessions>\n') + 22, block.lastIndexOf('\n</referenced-sessions>'));
    const references = (JSON.parse(json) as unknown[]).map((reference) => JSON.stringify(reference).replaceAll('<', '\\u003c'));

    const count = (testid: string) => page.getByTestId(testid).first().getAttribute('data-count');
    await poll(() => count('tokens-message')).toBe(String(countTokens(composed)));
    expect(await count('tokens-warning')).toBe(String(countTokens(REFERENCE_WARNING)));
    expect(await page.getByTestId('tokens-reference').evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-count')))).toEqual(
      references.map((text) => String(countTokens(text))),
    );
    // KV cache: the target's projected history is the prefix, the composed message the new suffix.
    const history = historyText(parseSessionLog(readFileSync(join(ROOT, REAL_LOG))));
    expect(history.length).toBeGreaterThan(1000);
    expect(await count('kv-prefix')).toBe(String(countTokens(history)));
    expect(await count('kv-suffix')).toBe(String(countTokens(composed)));
    // A new session has no history: an empty prefix.
    await page.getByTestId('target').selectOption('__draft__');
    await poll(() => count('kv-prefix')).toBe('0');
  });
});
