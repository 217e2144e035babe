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

const outDir = await buildPlayground();
const server = await serveStatic(outDir);
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1180 }, deviceScaleFactor: 1 });
  await page.goto(server.url);
  await page.waitForSelector('[data-testid=status][data-state=ready]');
  const composer = page.getByTestId('composer');

  /** Types `@query`, highlights `sessionId` with the arrow keys and inserts it with Enter. */
  async function cite(query, sessionId) {
    await composer.pressSequentially(`@${query}`);
    await page.waitForSelector(`[data-testid=candidate][data-session-id="${sessionId}"]`);
    const ids = await page.getByTestId('candidate').evaluateAll((nodes) => nodes.map((node) => node.dataset.sessionId));
    for (let i = 0; i < ids.indexOf(sessionId); i++) await composer.press('ArrowDown');
    await composer.press('Enter');
  }

  await composer.fill('');
  await composer.pressSequentially('Finish the Annex XI dossier. What we decided before: ');
  await cite('dumen', REAL_ID);
  await composer.pressSequentially('and ');
  await cite('2b8e', COMPACTED_ID);
  await composer.pressSequentially('\nKeep the report format; also check the ledger import ');
  await page.getByTestId('max-reference-bytes').fill('3000');
  await page.waitForFunction(() => document.querySelector('[data-testid=metadata]')?.textContent?.includes('"budgetBytes": 3000'));
  // Leave the candidates open on a fresh "@" so the screenshot shows the autocomplete.
  await composer.focus();
  await composer.press('End');
  await composer.pressSequentially('@led');
  await page.waitForSelector('[data-testid=candidate]');
  await page.keyboard.press('ArrowDown');
  await page.waitForTimeout(200);
  mkdirSync(dirname(OUT), { recursive: true });
  await page.screenshot({ path: OUT });
  console.log(`wrote ${OUT}`);
} finally {
  await browser.close();
  await server.close();
}
