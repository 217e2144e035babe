#!/usr/bin/env node
// Regenerates docs/playground.png, the playground screenshot shown in the README: builds the
// playground (playground/dist), serves it on 127.0.0.1, drives the project's Chromium through
// Playwright (a prompt citing two sample sessions, a lowered budget, the @ candidates open) and
// saves the viewport.
//
// Usage: npm run screenshot   (the Chromium of scripts/chromium.mjs; CJK/emoji glyphs need fonts such
// as fonts-wqy-microhei and fonts-noto-color-emoji, otherwise they render as boxes)
import { mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPlayground, launchChromium, serveStatic } from '../playground/tools/harness.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'docs', 'playground.png');
const REAL_ID = 'session-904b047f-eb01-493f-b98a-391ecfae5b66';
const COMPACTED_ID = 'session-2b8e61d4-0f3a-4c7b-b9d2-5e7a1c3f9084';
const TARGET_ID = 'session-7d2f4c1a-93be-4f6e-8a05-c1e4b2d97a30';

const outDir = await buildPlayground();
const server = await serveStatic(outDir);
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1400 }, deviceScaleFactor: 1 });
  await page.goto(server.url);
  await page.waitForSelector('[data-testid=status][data-state=ready]');
  const keyboard = page.keyboard;

  /** Types `@query`, waits for that query's candidates, highlights `sessionId` with the arrow keys and inserts it with Enter. */
  async function cite(query, sessionId) {
    await keyboard.type(`@${query}`);
    await page.waitForSelector(`[data-testid=candidates][data-state=ready][data-query="${query}"]`);
    const ids = await page.getByTestId('candidate').evaluateAll((nodes) => nodes.map((node) => node.dataset.sessionId));
    for (let i = 0; i < ids.indexOf(sessionId); i++) await keyboard.press('ArrowDown');
    await keyboard.press('Enter');
  }

  await page.getByTestId('target').selectOption(TARGET_ID);
  await page.getByTestId('composer').click();
  await keyboard.press('ControlOrMeta+a');
  await keyboard.press('Backspace');
  await keyboard.type('Finish the Annex XI dossier. What we decided before: ');
  await cite('dumen', REAL_ID);
  await keyboard.type('and ');
  await cite('2b8e', COMPACTED_ID);
  await keyboard.type('\nKeep the report format; also check the ledger import ');
  await page.getByTestId('max-reference-bytes').fill('3000');
  await page.waitForFunction(() => document.querySelector('[data-testid=metadata]')?.textContent?.includes('"budgetBytes": 3000'));
  await page.waitForSelector('[data-testid=tokenizer-state][data-state=ready]', { timeout: 60_000 });
  await page.waitForFunction(() => document.querySelector('[data-testid=kv-suffix]')?.getAttribute('data-count'));
  // Leave the candidates open on a fresh "@" so the screenshot shows the autocomplete.
  await page.getByTestId('composer').click();
  await keyboard.press('ControlOrMeta+End');
  await keyboard.type('@led');
  await page.waitForSelector('[data-testid=candidates][data-state=ready][data-query="led"]');
  await page.mouse.move(0, 0);
  await page.waitForTimeout(200);
  mkdirSync(dirname(OUT), { recursive: true });
  await page.screenshot({ path: OUT });
  console.log(`wrote ${OUT}`);
} finally {
  await browser.close();
  await server.close();
}
