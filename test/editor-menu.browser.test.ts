/**
 * The `@` menu and accessibility of `createMentionEditor` (SPEC §15.9, §15.10) in real Chromium,
 * driven like a keyboard user with real key events (vitest browser mode's `userEvent`): the menu
 * opens, moves, picks, closes; superseded fetches are aborted and their late answers never shown;
 * keystrokes are debounced; pointer picks keep the caret; chips are named and activatable; the
 * combobox, listbox and option roles, states and ids; an axe-core audit (WCAG 2.x A and AA) with the
 * menu open and closed. Also: `destroy()` gives the element back exactly (issue 28), and the
 * composer's incremental redraw draws what a fresh composer draws (issue 29.3).
 *
 * Browser-only (`*.browser.test.ts`): only the Chromium row of the matrix runs it.
 */
import axe from 'axe-core';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { userEvent } from 'vitest/browser';
import { cleanTitleLabel, formatSessionReferenceMention } from '../src/index.js';
import { createMentionEditor, type MentionChipActivation, type MentionEditor, type MentionMenuState, type MentionSuggestion } from '../src/editor/dom/index.js';
import { expectCode } from './helpers.js';

const row = (sessionId: string, label: string, cwd?: string): MentionSuggestion => ({
  sessionId,
  label,
  ...(cwd === undefined ? {} : { cwd }),
  mention: formatSessionReferenceMention({ sessionId, label }),
});
const ROWS = [row('session-schema', 'Schema migration', '/work/app'), row('session-checksum', 'Checksum: XXH64', '/work/app'), row('session-triage', 'Freight triage')];

/** A fetch whose answers the test gives: each call is recorded with its query and signal. */
function controlledFetch() {
  const calls: Array<{ query: string; signal: AbortSignal; answer: (rows: MentionSuggestion[]) => void }> = [];
  const fetch = (query: string, signal: AbortSignal) =>
    new Promise<MentionSuggestion[]>((resolve) => calls.push({ query, signal, answer: resolve }));
  return { calls, fetch };
}

/** A fetch that filters ROWS by a case-insensitive substring of the label. */
const filterFetch = async (query: string) => ROWS.filter((r) => r.label.toLowerCase().includes(query.toLowerCase()));

let host: HTMLDivElement;
let element: HTMLDivElement;
let editor: MentionEditor | undefined;

const menu = () => document.querySelector<HTMLUListElement>('ul.dsh-mention-menu');
const options = () => [...(menu()?.querySelectorAll<HTMLLIElement>('[role="option"]') ?? [])];
const expanded = () => element.getAttribute('aria-expanded');

async function openEditor(settings: Parameters<typeof createMentionEditor>[1], text = ''): Promise<MentionEditor> {
  editor = createMentionEditor(element, { text, ...settings });
  await userEvent.click(element);
  await userEvent.keyboard('{Control>}{End}{/Control}');
  return editor;
}

/** Runs axe-core on the page with the WCAG 2.x A and AA rules; returns the violations' ids and targets. */
async function audit(): Promise<string[]> {
  const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'] } });
  return result.violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
}

beforeEach(() => {
  document.documentElement.lang = 'en';
  document.title = 'composer';
  host = document.createElement('main');
  element = document.createElement('div');
  element.style.width = '480px';
  element.style.minHeight = '40px';
  host.append(element);
  document.body.append(host);
});

afterEach(() => {
  editor?.destroy();
  editor = undefined;
  host.remove();
  vi.useRealTimers();
});

describe('the @ menu (SPEC §15.9, real Chromium)', () => {
  it('opens on @, moves with ↓/↑ (wrapping) and Home/End, and Enter inserts the active row', async () => {
    const ed = await openEditor({ suggest: { fetch: filterFetch, debounceMs: 0 } });
    expect(element.getAttribute('role')).toBe('combobox');
    // ARIA 1.2 does not allow aria-multiline on a combobox (axe-core: aria-allowed-attr); see docs/front-ends.md.
    expect(element.hasAttribute('aria-multiline')).toBe(false);
    expect(element.getAttribute('aria-autocomplete')).toBe('list');
    expect(expanded()).toBe('false');
    await userEvent.keyboard('see @');
    await expect.poll(expanded).toBe('true');
    const list = menu()!;
    expect(list.getAttribute('role')).toBe('listbox');
    expect(list.getAttribute('aria-label')).toBe('Sessions');
    expect(element.getAttribute('aria-controls')).toBe(list.id);
    expect(options().map((option) => option.textContent)).toEqual(['Schema migration /work/app', 'Checksum: XXH64 /work/app', 'Freight triage']);
    const ids = options().map((option) => option.id);
    expect(new Set(ids).size).toBe(3);
    const activeId = () => element.getAttribute('aria-activedescendant');
    const selected = () => options().map((option) => option.getAttribute('aria-selected'));
    expect(activeId()).toBe(ids[0]);
    expect(selected()).toEqual(['true', 'false', 'false']);
    await userEvent.keyboard('{ArrowDown}');
    expect(activeId()).toBe(ids[1]);
    expect(selected()).toEqual(['false', 'true', 'false']);
    await userEvent.keyboard('{ArrowUp}{ArrowUp}');
    expect(activeId()).toBe(ids[2]);
    await userEvent.keyboard('{ArrowDown}');
    expect(activeId()).toBe(ids[0]);
    await userEvent.keyboard('{End}');
    expect(activeId()).toBe(ids[2]);
    await userEvent.keyboard('{Home}{ArrowDown}');
    expect(activeId()).toBe(ids[1]);
    // The ids stay the same while the menu shows the same rows.
    expect(options().map((option) => option.id)).toEqual(ids);
    await userEvent.keyboard('{Enter}');
    expect(ed.text).toBe(`see ${ROWS[1]!.mention} `);
    expect(expanded()).toBe('false');
    expect(element.hasAttribute('aria-activedescendant')).toBe(false);
    expect(menu()!.hidden).toBe(true);
    // Typing goes on after the chip; Enter is a line break again.
    await userEvent.keyboard('ok{Enter}');
    expect(ed.text).toBe(`see ${ROWS[1]!.mention} ok\n`);
  });

  it('Tab inserts the active row; Escape closes the menu until the trigger changes', async () => {
    const ed = await openEditor({ suggest: { fetch: filterFetch, debounceMs: 0 } });
    await userEvent.keyboard('@');
    await expect.poll(expanded).toBe('true');
    await userEvent.keyboard('{Escape}');
    expect(expanded()).toBe('false');
    expect(menu()!.hidden).toBe(true);
    expect(ed.text).toBe('@');
    // Escape does not come back by itself; a new query reopens.
    await userEvent.keyboard('s');
    await expect.poll(expanded).toBe('true');
    expect(options().map((option) => option.dataset.sessionId)).toEqual(['session-schema', 'session-checksum']);
    await userEvent.keyboard('{ArrowDown}{Tab}');
    expect(ed.text).toBe(`${ROWS[1]!.mention} `);
    expect(document.activeElement).toBe(element);
  });

  it('inserts a row\'s label as the menu shows it: cleaned as §6.6 cleans labels (menu pick and editor.insert)', async () => {
    const raw = `row\u202Eevil\u0007 ${'R'.repeat(300)}`;
    const shown = cleanTitleLabel(raw);
    const clean = formatSessionReferenceMention({ sessionId: 's2', label: shown });
    const ed = await openEditor({ suggest: { fetch: async () => [{ sessionId: 's2', label: raw }], debounceMs: 0 } });
    await userEvent.keyboard(' @');
    await expect.poll(() => options().length).toBe(1);
    await userEvent.keyboard('{Enter}');
    expect(ed.text).toBe(` ${clean} `);
    // A canonical mention given by the caller is cleaned the same way; an empty label gives the id.
    ed.insert({ sessionId: 's2', label: 'x', mention: formatSessionReferenceMention({ sessionId: 's2', label: raw }) });
    ed.insert({ sessionId: 's3', label: '\u200B\u0007' });
    expect(ed.text).toBe(` ${clean} ${clean} ${formatSessionReferenceMention({ sessionId: 's3' })} `);
  });

  it('aborts a superseded fetch and never shows its late answer', async () => {
    const { calls, fetch } = controlledFetch();
    await openEditor({ suggest: { fetch, debounceMs: 0 } });
    await userEvent.keyboard('@');
    await expect.poll(() => calls.length).toBe(1);
    await userEvent.keyboard('s');
    await expect.poll(() => calls.map((call) => call.query)).toEqual(['', 's']);
    expect(calls[0]!.signal.aborted).toBe(true);
    expect(calls[0]!.signal.reason).toMatchObject({ code: 'SESSION_REFERENCE_CANCELLED' });
    expect(calls[1]!.signal.aborted).toBe(false);
    // The newer answer arrives, then the older one: only the newer is shown.
    calls[1]!.answer([ROWS[0]!]);
    await expect.poll(expanded).toBe('true');
    calls[0]!.answer(ROWS);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(options().map((option) => option.dataset.sessionId)).toEqual(['session-schema']);
    // A late answer after the menu closed is not shown either.
    await userEvent.keyboard('x');
    await expect.poll(() => calls.length).toBe(3);
    await userEvent.keyboard('{Backspace}{Backspace}{Backspace}');
    expect(calls[2]!.signal.aborted).toBe(true);
    calls[2]!.answer(ROWS);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(expanded()).toBe('false');
  });

  it('debounces keystrokes: one fetch for a burst, cached answers while the same @ is typed', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const queries: string[] = [];
    await openEditor({ suggest: { fetch: (query) => (queries.push(query), filterFetch(query)), debounceMs: 250 } });
    await userEvent.keyboard('@sch');
    expect(queries).toEqual([]);
    vi.advanceTimersByTime(249);
    expect(queries).toEqual([]);
    vi.advanceTimersByTime(1);
    expect(queries).toEqual(['sch']);
    await expect.poll(expanded).toBe('true');
    // Back to `sc` and forward to `sch` again: `sch` is answered from the cache, at once.
    await userEvent.keyboard('{Backspace}');
    vi.advanceTimersByTime(250);
    expect(queries).toEqual(['sch', 'sc']);
    await userEvent.keyboard('h');
    expect(queries).toEqual(['sch', 'sc']);
    expect(options().map((option) => option.dataset.sessionId)).toEqual(['session-schema']);
  });

  it('a pointer pick inserts the row without taking the focus or the caret', async () => {
    const ed = await openEditor({ suggest: { fetch: filterFetch, debounceMs: 0 } }, 'ask ');
    await userEvent.keyboard('@');
    await expect.poll(expanded).toBe('true');
    await userEvent.hover(options()[2]!);
    expect(element.getAttribute('aria-activedescendant')).toBe(options()[2]!.id);
    await userEvent.click(options()[2]!);
    expect(ed.text).toBe(`ask ${ROWS[2]!.mention} `);
    expect(document.activeElement).toBe(element);
    await userEvent.keyboard('now');
    expect(ed.text).toBe(`ask ${ROWS[2]!.mention} now`);
  });

  it('flips the default menu above the @ when there is no room below, and keeps it inside the viewport', async () => {
    element.style.position = 'fixed';
    element.style.bottom = '0';
    element.style.right = '0';
    element.style.width = '120px';
    await openEditor({ suggest: { fetch: filterFetch, debounceMs: 0 } }, 'xxxxxxxxx ');
    await userEvent.keyboard('@');
    await expect.poll(expanded).toBe('true');
    await expect.poll(() => menu()!.dataset.placement).toMatch(/^top/);
    const box = menu()!.getBoundingClientRect();
    const at = editor!.trigger!.rect;
    expect(box.bottom).toBeLessThanOrEqual(at.top);
    expect(box.right).toBeLessThanOrEqual(window.innerWidth);
    expect(box.left).toBeGreaterThanOrEqual(0);
  });

  it('gives render() the state and the ids, and draws no menu of its own', async () => {
    const states: MentionMenuState[] = [];
    await openEditor({ suggest: { fetch: filterFetch, debounceMs: 0, render: (state) => states.push(state) } });
    await userEvent.keyboard('@xxh');
    await expect.poll(() => states.at(-1)?.open).toBe(true);
    const state = states.at(-1)!;
    expect(state).toMatchObject({ query: 'xxh', active: 0, loading: false, error: undefined });
    expect(state.items.map((item) => item.sessionId)).toEqual(['session-checksum']);
    expect(state.rect!.width).toBeGreaterThan(0);
    expect(element.getAttribute('aria-controls')).toBe(state.listboxId);
    expect(element.getAttribute('aria-activedescendant')).toBe(state.optionId(0));
    expect(state.optionId(0)).not.toBe(state.optionId(1));
    expect(menu()).toBeNull();
    expect(states.some((s) => s.loading && s.query === 'xxh')).toBe(true);
  });

  it('reports a failed fetch as state.error, with no rows', async () => {
    const states: MentionMenuState[] = [];
    const failure = new Error('offline');
    await openEditor({ suggest: { fetch: () => Promise.reject(failure), debounceMs: 0, render: (state) => states.push(state) } });
    await userEvent.keyboard('@a');
    await expect.poll(() => states.at(-1)?.error).toBe(failure);
    expect(states.at(-1)).toMatchObject({ open: false, items: [], loading: false });
  });

  it("with candidateMatch: 'words', a query holds spaces until a space follows words that left the menu empty (SPEC §15.10)", async () => {
    const queries: string[] = [];
    const words = async (query: string) => {
      queries.push(query);
      const parts = query.toLowerCase().split(/\s+/).filter(Boolean);
      return ROWS.filter((r) => parts.every((part) => r.label.toLowerCase().split(/\W+/).some((word) => word.startsWith(part))));
    };
    const ed = await openEditor({ suggest: { fetch: words, debounceMs: 0, candidateMatch: 'words' } });
    await userEvent.keyboard('@freight tri');
    await expect.poll(() => options().map((option) => option.dataset.sessionId)).toEqual(['session-triage']);
    expect(ed.trigger?.query).toBe('freight tri');
    await userEvent.keyboard('{Enter}');
    expect(ed.text).toBe(`${ROWS[2]!.mention} `);
    // `zz` finds nothing: the space after it ends the query, and what follows is text.
    await userEvent.keyboard('@zz');
    await expect.poll(() => queries.at(-1)).toBe('zz');
    await new Promise((resolve) => setTimeout(resolve, 20));
    await userEvent.keyboard(' more');
    expect(ed.trigger).toBeUndefined();
    expect(expanded()).toBe('false');
  });

  it('rejects a bad suggest option (INVALID_ARGUMENT)', () => {
    const div = document.createElement('div');
    expectCode(() => createMentionEditor(div, { suggest: {} as never }), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    expectCode(() => createMentionEditor(div, { suggest: { fetch: filterFetch, debounceMs: -1 } }), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    expectCode(() => createMentionEditor(div, { suggest: { fetch: filterFetch, candidateMatch: 'fuzzy' as never } }), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    expectCode(() => createMentionEditor(div, { ariaLabel: '' }), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });
});

describe('accessibility (SPEC §15.9)', () => {
  it('names the editable: ariaLabel, else its own label, else "Prompt"; role textbox without suggest', async () => {
    editor = createMentionEditor(element);
    expect(element.getAttribute('role')).toBe('textbox');
    expect(element.getAttribute('aria-multiline')).toBe('true');
    expect(element.getAttribute('aria-label')).toBe('Prompt');
    editor.destroy();
    element.setAttribute('aria-labelledby', 'x');
    editor = createMentionEditor(element);
    expect(element.hasAttribute('aria-label')).toBe(false);
    editor.destroy();
    editor = createMentionEditor(element, { ariaLabel: 'Message to the agent' });
    expect(element.getAttribute('aria-label')).toBe('Message to the agent');
  });

  it('names chips, cleans their title, keeps the exact id, and activates them by click or Enter', async () => {
    const id = 'session-\u202eevil\u200b';
    const text = `a ${formatSessionReferenceMention({ sessionId: id, label: 'Schema\u202e migration' })} b`;
    const activated: MentionChipActivation[] = [];
    const ed = await openEditor({ onChipActivate: (chip) => activated.push(chip), chipLabel: (label) => `cited session ${label}` }, text);
    const chip = element.querySelector<HTMLElement>('.dsh-mention')!;
    expect(chip.dataset.sessionId).toBe(id);
    expect(chip.title).toBe('session-evil');
    expect(chip.textContent).toBe('@Schema migration');
    expect(chip.getAttribute('role')).toBe('button');
    expect(chip.getAttribute('aria-label')).toBe('cited session Schema migration');
    await userEvent.click(chip);
    expect(activated).toHaveLength(1);
    expect(activated[0]).toMatchObject({ sessionId: id, label: 'Schema migration' });
    expect(activated[0]!.rect.width).toBeGreaterThan(0);
    // From the keyboard: Shift+← next to the chip selects it as one unit, Enter activates it.
    ed.focus();
    await userEvent.keyboard('{Control>}{End}{/Control}{ArrowLeft}{ArrowLeft}{Shift>}{ArrowLeft}{/Shift}');
    expect(document.getSelection()!.toString()).toBe('@Schema migration');
    await userEvent.keyboard('{Enter}');
    expect(activated).toHaveLength(2);
    expect(ed.text).toBe(text);
  });

  it('passes an axe-core audit (WCAG 2.x A and AA) with the menu closed and open', async () => {
    const text = `ask ${formatSessionReferenceMention({ sessionId: 'session-schema', label: 'Schema migration' })} and `;
    await openEditor({ suggest: { fetch: filterFetch, debounceMs: 0 }, onChipActivate: () => {} }, text);
    expect(await audit()).toEqual([]);
    await userEvent.keyboard('@');
    await expect.poll(expanded).toBe('true');
    await userEvent.keyboard('{ArrowDown}');
    expect(await audit()).toEqual([]);
  });

  it('passes axe-core\'s default audit (every rule, `region` too) on a page in a <main>, menu closed and open', async () => {
    // The page's content is in a landmark (`host` is a <main>): the default menu must sit in it, next to the composer.
    expect(host.localName).toBe('main');
    // A page has a heading (axe-core's `page-has-heading-one`).
    const heading = document.createElement('h1');
    heading.textContent = 'Ask the agent';
    host.prepend(heading);
    const everyRule = async () => (await axe.run(document)).violations.map((violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(' ')).join(', ')}`);
    await openEditor({ suggest: { fetch: filterFetch, debounceMs: 0 } }, 'ask ');
    expect(await everyRule()).toEqual([]);
    await userEvent.keyboard('@');
    await expect.poll(expanded).toBe('true');
    expect(menu()!.closest('main')).toBe(host);
    expect(element.nextElementSibling).toBe(menu());
    expect(await everyRule()).toEqual([]);
    await userEvent.keyboard('{Escape}');
    expect(await everyRule()).toEqual([]);
    editor!.destroy();
    editor = undefined;
    expect(menu()).toBe(null);
  });
});

describe('destroy (issue 28)', () => {
  it('gives the element back exactly: attributes as they were, no stray style or ARIA', async () => {
    // An element whose style was never touched: no style attribute at all.
    element = document.createElement('div');
    host.replaceChildren(element);
    element.setAttribute('class', 'composer');
    element.setAttribute('aria-label', 'Mine');
    const before = element.cloneNode(false) as HTMLElement;
    const ed = await openEditor({ suggest: { fetch: filterFetch, debounceMs: 0 } });
    expect(element.getAttribute('style')).toBe('white-space: pre-wrap;');
    await userEvent.keyboard('@');
    await expect.poll(expanded).toBe('true');
    ed.destroy();
    editor = undefined;
    expect(element.cloneNode(false).isEqualNode(before)).toBe(true);
    expect([...element.attributes].map((attribute) => `${attribute.name}=${attribute.value}`)).toEqual(['class=composer', 'aria-label=Mine']);
    expect(menu()).toBeNull();
    // Every call on a destroyed editor is INVALID_ARGUMENT.
    for (const call of [() => ed.text, () => ed.trigger, () => ed.setText('x'), () => ed.insert(ROWS[0]!), () => ed.focus(), () => ed.destroy()]) {
      expectCode(call, 'SESSION_REFERENCE_INVALID_ARGUMENT');
    }
  });
});

describe('incremental redraw (issue 29.3)', () => {
  it('after typing, deleting and inserting among many chips, draws exactly what a fresh composer draws', async () => {
    const chip = (i: number) => formatSessionReferenceMention({ sessionId: `session-${i}`, label: `S${i}` });
    const text = Array.from({ length: 40 }, (_, i) => `w${i} ${chip(i)} `).join('') + 'dsh-session:ImEi tail';
    const ed = await openEditor({}, text);
    await userEvent.keyboard('{ArrowLeft}{ArrowLeft}{ArrowLeft}{ArrowLeft}x{Backspace}{Backspace}{Backspace}');
    await userEvent.keyboard('{Control>}{Home}{/Control}{ArrowRight}{ArrowRight}{ArrowRight}{ArrowRight}{Delete}ab @[[x');
    await userEvent.keyboard(']](dsh-session:ImEi) ');
    ed.insert({ sessionId: 'session-new', label: 'New' });
    const drawn = element.innerHTML;
    const fresh = document.createElement('div');
    host.append(fresh);
    const other = createMentionEditor(fresh, { text: ed.text });
    expect(drawn).toBe(fresh.innerHTML);
    other.destroy();
  });

  it('keeps the text and the drawing right across line breaks and blocks of lines (150 lines, edits where blocks meet)', async () => {
    const chip = (i: number) => formatSessionReferenceMention({ sessionId: `session-${i}`, label: `S${i}` });
    const lines = Array.from({ length: 150 }, (_, i) => `line ${i} ${chip(i)} end`);
    const changes: string[] = [];
    const ed = await openEditor({ onChange: (text) => changes.push(text) }, lines.join('\n'));
    // The caret at the end of line 63, the last line of the first block of 64: Delete joins it with line 64.
    const lineEnd = (n: number) => lines.slice(0, n + 1).join('\n').length;
    const place = (offset: number) => {
      // Through the composer's own mapping: type nothing, just move there with the model's help.
      const walker = document.createTreeWalker(element, NodeFilter.SHOW_TEXT);
      let seen = 0;
      for (let node = walker.nextNode() as Text | null; node; node = walker.nextNode() as Text | null) {
        const owner = node.parentElement!;
        if (owner.classList.contains('dsh-mention')) continue;
        // A text node's offset in the canonical text: found by searching its data after what was seen.
        const at = ed.text.indexOf(node.data, seen);
        if (at <= offset && offset <= at + node.data.length) {
          document.getSelection()!.setBaseAndExtent(node, offset - at, node, offset - at);
          return;
        }
        seen = at + node.data.length;
      }
      throw new Error(`no text node at ${offset}`);
    };
    let expected = lines.join('\n');
    place(lineEnd(63));
    await userEvent.keyboard('{Delete}');
    expected = expected.slice(0, lineEnd(63)) + expected.slice(lineEnd(63) + 1);
    expect(ed.text).toBe(expected);
    await userEvent.keyboard('{Enter}{Enter}x');
    expected = `${expected.slice(0, lineEnd(63))}\n\nx${expected.slice(lineEnd(63))}`;
    expect(ed.text).toBe(expected);
    await userEvent.keyboard('{Backspace}{Backspace}{Backspace}');
    expected = expected.slice(0, lineEnd(63)) + expected.slice(lineEnd(63) + 3);
    expect(ed.text).toBe(expected);
    // Backspace right after a chip on line 130 takes the chip whole.
    const at = expected.indexOf(chip(130)) + chip(130).length;
    place(at);
    await userEvent.keyboard('{Backspace}');
    expected = expected.slice(0, at - chip(130).length) + expected.slice(at);
    expect(ed.text).toBe(expected);
    expect(changes.at(-1)).toBe(expected);
    const fresh = document.createElement('div');
    host.append(fresh);
    const other = createMentionEditor(fresh, { text: ed.text });
    // Line by line the same (how lines are grouped in blocks depends on the edits made).
    const drawnLines = (root: HTMLElement) => [...root.querySelectorAll(':scope > div > div')].map((line) => line.innerHTML);
    expect(drawnLines(element)).toEqual(drawnLines(fresh));
    other.destroy();
  });
});
