#!/usr/bin/env node
// Regenerates docs/playground.png, the playground screenshot shown in docs/playground.md: builds the
// playground (playground/dist), serves it on 127.0.0.1, drives the project's Chromium through
// Playwright (a prompt citing two sample sessions, a lowered budget, the @ candidates open) and
// saves the viewport.
//
// Usage: npm run screenshot   (the Chromium of scripts/chromium.mjs)
//
// Fonts: the packaged Chromium has no CJK or emoji fonts, and the machine may have none either, so
// the sample session titled in Chinese (with an emoji in its id) would show as boxes. The script
// brings its own, from npm (devDependencies): Noto Emoji (the monochrome one: the color font's
// glyphs came out blank in this Chromium) and Noto Sans SC, as @fontsource packages. Their @font-face rules are added to the page, cut to the emoji and CJK ranges (so
// Latin text keeps the page's own fonts), their files served from node_modules through
// Playwright's request routing, and the two families put first in every font-family of the page.
// First, not last: this Chromium finds a font for any character in `system-ui` and `DejaVu Sans`
// through fontconfig and draws a box, so a family after them is never asked.
import { mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildPlayground, launchChromium, serveStatic } from '../playground/tools/harness.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'docs', 'playground.png');
const REAL_ID = 'session-904b047f-eb01-493f-b98a-391ecfae5b66';
const COMPACTED_ID = 'session-2b8e61d4-0f3a-4c7b-b9d2-5e7a1c3f9084';
const TARGET_ID = 'session-7d2f4c1a-93be-4f6e-8a05-c1e4b2d97a30';

/**
 * The @fontsource packages whose fonts the page gets, the family each declares, and which of its
 * unicode ranges to keep: emoji above U+1F000 (with the joiner and variation selector) and CJK,
 * never Latin, Cyrillic or Vietnamese.
 */
const FONTS = [
  { pkg: '@fontsource/noto-emoji', family: 'Noto Emoji', keep: (start) => start >= 0x1f000 || start === 0x200d || start === 0xfe0f },
  { pkg: '@fontsource-variable/noto-sans-sc', family: 'Noto Sans SC Variable', keep: (start) => start >= 0x2e80 },
];
const FONT_ROUTE = '/__screenshot-fonts/';

/** The package's @font-face rules with file URLs under FONT_ROUTE and only the kept ranges. */
function fontFaces({ pkg, keep }, origin) {
  const css = readFileSync(join(ROOT, 'node_modules', pkg, 'index.css'), 'utf8');
  return [...css.matchAll(/@font-face \{[^}]*\}/g)]
    .map(([rule]) => {
      const ranges = /unicode-range: ([^;]*);/.exec(rule)[1].split(',').filter((range) => keep(Number.parseInt(range.trim().slice(2), 16)));
      if (ranges.length === 0) return '';
      return rule.replace(/unicode-range: [^;]*;/, `unicode-range: ${ranges.join(',')};`).replaceAll('url(./files/', `url(${origin}${FONT_ROUTE}${pkg}/files/`);
    })
    .join('\n');
}

/** Serves the font files under FONT_ROUTE, adds the @font-face rules and puts the families first. */
async function addFonts(page, origin) {
  await page.route(`${origin}${FONT_ROUTE}**`, (route) => {
    const path = decodeURIComponent(new URL(route.request().url()).pathname.slice(FONT_ROUTE.length));
    const [scope, name, , file] = path.split('/');
    const font = FONTS.find(({ pkg }) => pkg === `${scope}/${name}`);
    if (!font || !/^[\w.-]+\.woff2?$/.test(file ?? '')) return route.fulfill({ status: 404 });
    const body = readFileSync(join(ROOT, 'node_modules', font.pkg, 'files', file));
    return route.fulfill({ status: 200, body, contentType: file.endsWith('.woff2') ? 'font/woff2' : 'font/woff' });
  });
  await page.addStyleTag({ content: FONTS.map((font) => fontFaces(font, origin)).join('\n') });
  await page.evaluate((families) => {
    const first = (stack) => `${families.map((family) => `"${family}"`).join(', ')}, ${stack}`;
    for (const sheet of document.styleSheets) {
      for (const rule of sheet.href ? sheet.cssRules : []) {
        if (!(rule instanceof CSSStyleRule)) continue;
        if (rule.style.fontFamily && !rule.style.fontFamily.startsWith('var(')) rule.style.fontFamily = first(rule.style.fontFamily);
        for (const name of rule.style) {
          const value = rule.style.getPropertyValue(name).trim();
          if (name.startsWith('--') && /\b(sans-serif|serif|monospace)$/.test(value)) rule.style.setProperty(name, first(value));
        }
      }
    }
  }, FONTS.map(({ family }) => family));
}

const outDir = await buildPlayground();
const server = await serveStatic(outDir);
const browser = await launchChromium();
try {
  const page = await browser.newPage({ viewport: { width: 1440, height: 1400 }, deviceScaleFactor: 1 });
  await page.goto(server.url);
  await page.waitForSelector('[data-testid=status][data-state=ready]');
  await addFonts(page, new URL(server.url).origin);
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
  // Every font the visible text needs has loaded (the CJK and emoji files load on first use).
  await page.evaluate(() => document.fonts.ready);
  const missing = await page.evaluate((families) => families.filter((family) => ![...document.fonts].some((face) => face.family.replaceAll('"', '') === family && face.status === 'loaded')), FONTS.map(({ family }) => family));
  if (missing.length > 0) throw new Error(`fonts not loaded: ${missing.join(', ')}`);
  mkdirSync(dirname(OUT), { recursive: true });
  await page.screenshot({ path: OUT });
  console.log(`wrote ${OUT}`);
} finally {
  await browser.close();
  await server.close();
}
