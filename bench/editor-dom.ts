/**
 * `npm run bench -- --only editor-dom`: what a keystroke costs in the DOM composer
 * (`createMentionEditor`, SPEC §15.8) in the project's Chromium, in a 5 MB draft with 10,000
 * chips against a 10 KB draft of the same make (runs of words with a line break every few hundred
 * characters, one chip per ~430 characters), side by side in one page (issue 29.3: a keystroke
 * costs what it changes; it was 0.8–0.95 s per key in the long draft).
 *
 * The composer is bundled from src/ by esbuild and loaded into a page of the packaged Chromium
 * (scripts/chromium.mjs) through Playwright. A keystroke is the event the browser sends for it,
 * dispatched in the page and handled synchronously by the composer: the `beforeinput` of a typed
 * letter, the `beforeinput` of Backspace right after a chip (the chip goes whole), and a mention
 * inserted at the caret (`editor.insert`). Each sample times the handler and then a forced layout
 * (`offsetHeight`), so the browser's own work for the change counts too; the caret is put in a
 * new place between samples (outside the timing). Both drafts are measured in alternation, and the
 * median of each kind of keystroke is compared: target ≤ 3×. A letter typed in the same 5 MB with
 * no chip at all (issue 29: the edit stretch is then bounded by line breaks) is compared with one
 * typed in the 10 KB draft, the same way.
 */
import { build } from 'esbuild';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { formatMs } from './harness.js';

interface Hooks {
  ratioRow(section: string, name: string, ours: number, reference: number, max: number | undefined, detail?: string): void;
  quick: boolean;
}

/** The project (bench/run.mjs runs a bundle from node_modules/.cache and says where bench/ is). */
const ROOT = join(process.env.BENCH_DIR ?? join(process.cwd(), 'bench'), '..');

/** The page's side: builds a draft, makes a composer over it, and times keystrokes. */
const PAGE_SCRIPT = String.raw`
window.benchEditor = (() => {
  const { createMentionEditor } = window.DshEditorDom;
  const editors = {};
  function mention(i) {
    const id = 'session-' + i.toString(36).padStart(8, '0') + '-4be6-9f0c';
    const json = JSON.stringify(id);
    const payload = btoa(String.fromCharCode(...new TextEncoder().encode(json))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
    return '@[Topic ' + i + '](dsh-session:' + payload + ')';
  }
  const WORDS = 'the schema migration adds a nullable column to orders and an index on it while the checksum stays XXH64 for frames'.split(' ');
  /** A draft of about 'bytes' characters: runs of words and line breaks with one chip every 'every' characters (none when 'plain'). */
  function draft(bytes, every, plain) {
    const parts = [];
    let length = 0;
    let i = 0;
    while (length < bytes) {
      let run = '';
      while (run.length < every) run += WORDS[(run.length + i) % WORDS.length] + ((run.length % 97) < 2 ? '\n' : ' ');
      const chip = plain ? '' : mention(i);
      i++;
      parts.push(run, chip, ' ');
      length += run.length + chip.length + 1;
    }
    return parts.join('');
  }
  function make(name, bytes, every, plain) {
    const element = document.createElement('div');
    element.style.cssText = 'width: 700px; height: 300px; overflow: auto; font: 14px sans-serif';
    document.body.append(element);
    const text = draft(bytes, every, plain);
    const editor = createMentionEditor(element, { text, onChange: (next) => (editors[name].last = next) });
    editors[name] = { element, editor, chips: element.getElementsByClassName('dsh-mention') };
    element.focus();
    return { length: text.length, chips: editors[name].chips.length, lines: element.querySelectorAll(':scope > div > div').length };
  }
  /** Puts the caret a few characters into line 'k' (a chip-free draft). */
  function caretInLine(name, k) {
    const { element } = editors[name];
    element.focus();
    const lines = element.querySelectorAll(':scope > div > div');
    const run = lines[Math.min(k, lines.length - 1)].firstChild;
    const at = Math.min(5, run.nodeType === 3 ? run.data.length : 0);
    document.getSelection().setBaseAndExtent(run, at, run, at);
  }
  /** Puts the caret right after chip 'k', or 'inRun' a few characters into the run after it. */
  function caretAfterChip(name, k, inRun) {
    const { element, chips } = editors[name];
    element.focus();
    const chip = chips[Math.min(k, chips.length - 1)];
    const next = chip.nextSibling;
    if (inRun && next && next.nodeType === 3 && next.data.length >= 5) {
      document.getSelection().setBaseAndExtent(next, 5, next, 5);
    } else {
      const index = Array.prototype.indexOf.call(chip.parentNode.childNodes, chip) + 1;
      document.getSelection().setBaseAndExtent(chip.parentNode, index, chip.parentNode, index);
    }
  }
  function timed(name, act) {
    const { element } = editors[name];
    const started = performance.now();
    act();
    void element.offsetHeight;
    return performance.now() - started;
  }
  const input = (name, inputType, data) =>
    editors[name].element.dispatchEvent(new InputEvent('beforeinput', { inputType, data, bubbles: true, cancelable: true }));
  return {
    make,
    caretAfterChip,
    caretInLine,
    type: (name) => timed(name, () => input(name, 'insertText', 'x')),
    backspace: (name) => timed(name, () => input(name, 'deleteContentBackward', null)),
    insert: (name) => timed(name, () => editors[name].editor.insert({ sessionId: 'session-inserted', label: 'Inserted' })),
    /** Puts a chip back where Backspace took one (untimed), so every sample finds chips. */
    restore: (name) => editors[name].editor.insert({ sessionId: 'session-restored', label: 'Restored' }),
    length: (name) => editors[name].editor.text.length,
  };
})();
`;

/** The DOM composer's keystrokes, long draft against short, in Chromium. */
export async function benchEditorDom(hooks: Hooks): Promise<void> {
  console.log('\nDOM composer — keystrokes in a 5 MB draft with 10,000 chips vs a 10 KB draft, Chromium (issue 29.3, SPEC §15.8)');
  const bundle = await build({
    entryPoints: [join(ROOT, 'src/editor/dom/index.ts')],
    bundle: true,
    format: 'iife',
    globalName: 'DshEditorDom',
    platform: 'browser',
    write: false,
    logLevel: 'warning',
  });
  const { chromium } = await import('playwright');
  // Loaded from its place at run time (it finds the packaged Chromium relative to itself).
  const { CHROMIUM_ARGS, chromiumExecutable } = (await import(pathToFileURL(join(ROOT, 'scripts/chromium.mjs')).href)) as {
    CHROMIUM_ARGS: string[];
    chromiumExecutable(): string;
  };
  const browser = await chromium.launch({ executablePath: chromiumExecutable(), args: CHROMIUM_ARGS, headless: true });
  try {
    const page = await browser.newPage();
    await page.setContent('<!doctype html><html lang="en"><body></body></html>');
    await page.addScriptTag({ content: bundle.outputFiles[0]!.text });
    await page.addScriptTag({ content: PAGE_SCRIPT });
    // 10,000 chips in 5 MB: one chip per ~500 characters; the short draft is made the same way.
    const long = await page.evaluate(() => (window as never as { benchEditor: { make(n: string, b: number, e: number): { length: number; chips: number } } }).benchEditor.make('long', 5_000_000, 430));
    const short = await page.evaluate(() => (window as never as { benchEditor: { make(n: string, b: number, e: number): { length: number; chips: number } } }).benchEditor.make('short', 10_000, 430));
    const samples = hooks.quick ? 7 : 31;
    const kinds = ['type', 'backspace', 'insert'] as const;
    const times: Record<string, number[]> = {};
    for (let i = 0; i < samples; i++) {
      for (const kind of kinds) {
        for (const [name, draft] of [['long', long], ['short', short]] as const) {
          // A different chip each time, spread over the draft (the short one has ~20 chips).
          const k = Math.floor(((i + 0.5) / samples) * (draft.chips - 2));
          const ms = await page.evaluate(
            ({ name, kind, k }) => {
              const bench = (window as never as { benchEditor: Record<string, (...args: unknown[]) => number> }).benchEditor;
              bench.caretAfterChip!(name, k, kind === 'type');
              const ms = bench[kind]!(name);
              if (kind === 'backspace') bench.restore!(name);
              return ms;
            },
            { name, kind, k },
          );
          (times[`${kind} ${name}`] ??= []).push(ms);
        }
      }
    }
    // The same 5 MB with no chip at all (issue 29: a pasted log; the edit stretch is bounded by line breaks there).
    const plain = await page.evaluate(() => (window as never as { benchEditor: { make(n: string, b: number, e: number, p: boolean): { length: number; lines: number } } }).benchEditor.make('plain', 5_000_000, 430, true));
    for (let i = 0; i < samples; i++) {
      for (const name of ['plain', 'short'] as const) {
        const ms = await page.evaluate(
          ({ name, i, samples, lines }) => {
            const bench = (window as never as { benchEditor: Record<string, (...args: unknown[]) => number> }).benchEditor;
            if (name === 'plain') bench.caretInLine!(name, Math.floor(((i + 0.5) / samples) * (lines - 1)));
            else bench.caretAfterChip!(name, i % 10, true);
            return bench.type!(name);
          },
          { name, i, samples, lines: plain.lines },
        );
        (times[`plain ${name}`] ??= []).push(ms);
      }
    }
    const median = (values: number[]) => [...values].sort((a, b) => a - b)[values.length >> 1]!;
    const labels = { type: 'typing a letter', backspace: 'Backspace over a chip', insert: 'a mention inserted' };
    for (const kind of kinds) {
      const ours = median(times[`${kind} long`]!);
      const reference = median(times[`${kind} short`]!);
      hooks.ratioRow(
        'editor-dom',
        `${labels[kind]}: 5 MB (${long.chips} chips) vs 10 KB`,
        ours,
        reference,
        3,
        `median ${formatMs(ours)} / ${formatMs(reference)} over ${samples} keys each; drafts ${long.length} and ${short.length} UTF-16 units`,
      );
    }
    const ours = median(times['plain plain']!);
    const reference = median(times['plain short']!);
    hooks.ratioRow(
      'editor-dom',
      `typing a letter: 5 MB with no chip (${plain.lines} lines) vs 10 KB`,
      ours,
      reference,
      3,
      `median ${formatMs(ours)} / ${formatMs(reference)} over ${samples} keys each; draft ${plain.length} UTF-16 units`,
    );
  } finally {
    await browser.close();
  }
}
