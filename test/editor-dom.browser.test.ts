/**
 * `createMentionEditor` (SPEC §15.8) in real Chromium, driven with real key events (vitest browser
 * mode's `userEvent`, backed by Playwright) and a real IME composition (Chrome DevTools Protocol
 * `Input.imeSetComposition`): typing `@` and picking a candidate, Backspace/Delete on chips, word
 * deletion, undo/redo, paste and copy, arrow keys over chips, and the element it draws.
 *
 * Browser-only (`*.browser.test.ts`): only the Chromium row of the matrix runs it
 * (scripts/test-matrix.mjs expects exactly these files there besides the shared suite).
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cdp, userEvent } from 'vitest/browser';
import { encodeSessionReferenceUri, formatSessionReferenceMention } from '../src/index.js';
import { createMentionEditor, type MentionEditor, type MentionEditorTrigger } from '../src/editor/dom/index.js';
import { expectCode } from './helpers.js';

const SCHEMA = { sessionId: 'session-434', label: 'Schema', cwd: '/repo', createdAt: 1, mention: formatSessionReferenceMention({ sessionId: 'session-434', label: 'Schema' }) };
const CJK = formatSessionReferenceMention({ sessionId: '会话-7', label: '数据库迁移' });
const BAD = '@[bad](dsh-session:e30)';

let host: HTMLDivElement;
let element: HTMLDivElement;
let editor: MentionEditor;
let changes: string[];
let triggers: Array<MentionEditorTrigger | undefined>;

/** A fresh editor over `text`, focused with a real click at its end. */
async function open(text = ''): Promise<void> {
  editor = createMentionEditor(element, { text, onChange: (next) => changes.push(next), onTrigger: (t) => triggers.push(t) });
  await userEvent.click(element);
  // The click puts the caret where it lands; move it to the end of the text.
  await userEvent.keyboard('{Control>}{End}{/Control}');
}

/** The chips as drawn: `[shown text, data-session-id or data-valid, title]`. */
const chips = (): string[][] =>
  [...element.querySelectorAll('.dsh-mention')].map((chip) => [
    chip.textContent!,
    (chip as HTMLElement).dataset.sessionId ?? `valid=${(chip as HTMLElement).dataset.valid}`,
    (chip as HTMLElement).title,
  ]);

/** Puts `text` on the real clipboard through a textarea (select all, Ctrl+C). */
async function copyToClipboard(text: string): Promise<void> {
  const area = document.createElement('textarea');
  area.value = text;
  host.append(area);
  area.focus();
  area.select();
  await userEvent.copy();
  area.remove();
  // Back to the editor, with its selection where it was.
  editor.focus();
}

beforeEach(() => {
  host = document.createElement('div');
  element = document.createElement('div');
  element.style.width = '480px';
  element.style.minHeight = '40px';
  host.append(element);
  document.body.append(host);
  changes = [];
  triggers = [];
});

afterEach(() => {
  editor?.destroy();
  editor = undefined as never;
  host.remove();
});

describe('createMentionEditor (SPEC §15.8, real Chromium)', () => {
  it('draws the canonical text: plain runs as text, chips non-editable with the label, id, title; invalid ones marked', async () => {
    const text = `ask ${SCHEMA.mention} or ${CJK} ${BAD} ${encodeSessionReferenceUri('a')}`;
    await open(text);
    expect(element.contentEditable).toBe('true');
    expect(editor.text).toBe(text);
    expect(chips()).toEqual([
      ['@Schema', 'session-434', 'session-434'],
      ['@数据库迁移', '会话-7', '会话-7'],
      ['@bad', 'valid=false', expect.stringContaining('dsh-session:e30')],
      ['@a', 'a', 'a'],
    ]);
    for (const chip of element.querySelectorAll<HTMLElement>('.dsh-mention')) expect(chip.isContentEditable).toBe(false);
    expect(element.textContent).toBe('ask @Schema or @数据库迁移 @bad @a');
    expect(changes).toEqual([]);
  });

  it('types @, reports the trigger with the rectangle of the @, and inserts the picked candidate as a chip', async () => {
    await open();
    await userEvent.keyboard('see @sch');
    expect(editor.text).toBe('see @sch');
    const trigger = triggers.at(-1)!;
    expect(trigger).toMatchObject({ start: 4, end: 8, query: 'sch' });
    expect(trigger.rect.width).toBeGreaterThan(0);
    expect(trigger.rect.left).toBeGreaterThanOrEqual(element.getBoundingClientRect().left);
    expect(editor.trigger).toBe(trigger);
    // One report per new query, none for the same one.
    expect(triggers.map((t) => t?.query)).toEqual(['', 's', 'sc', 'sch']);
    editor.insert(SCHEMA);
    expect(editor.text).toBe(`see ${SCHEMA.mention} `);
    expect(triggers.at(-1)).toBeUndefined();
    expect(chips()).toEqual([['@Schema', 'session-434', 'session-434']]);
    // The caret is after the chip and its space: typing goes on there.
    await userEvent.keyboard('now');
    expect(editor.text).toBe(`see ${SCHEMA.mention} now`);
    expect(changes.at(-1)).toBe(editor.text);
  });

  it('Backspace after a chip removes it whole; Delete before one too', async () => {
    await open(`a ${SCHEMA.mention}`);
    await userEvent.keyboard('{Backspace}');
    expect(editor.text).toBe('a ');
    expect(chips()).toEqual([]);
    editor.setText(`${SCHEMA.mention}b`);
    await userEvent.keyboard('{Home}{Delete}');
    expect(editor.text).toBe('b');
  });

  it('deletes by word with Ctrl+Backspace and Ctrl+Delete, a chip being one word', async () => {
    await open(`see ${SCHEMA.mention} hello world`);
    await userEvent.keyboard('{Control>}{Backspace}{/Control}');
    expect(editor.text).toBe(`see ${SCHEMA.mention} hello `);
    await userEvent.keyboard('{Control>}{Backspace}{Backspace}{/Control}');
    expect(editor.text).toBe('see ');
    editor.setText('one two');
    await userEvent.keyboard('{Home}{Control>}{Delete}{/Control}');
    expect(editor.text).toBe(' two');
  });

  it('steps over a chip with ←/→ in one move; Shift+←/→ next to it selects it whole', async () => {
    await open(`a${SCHEMA.mention}b`);
    await userEvent.keyboard('{ArrowLeft}{ArrowLeft}X');
    expect(editor.text).toBe(`aX${SCHEMA.mention}b`);
    await userEvent.keyboard('{ArrowRight}Y');
    expect(editor.text).toBe(`aX${SCHEMA.mention}Yb`);
    // Ctrl+← steps over it too.
    await userEvent.keyboard('{ArrowLeft}{Control>}{ArrowLeft}{/Control}Z');
    expect(editor.text).toBe(`aXZ${SCHEMA.mention}Yb`);
    // Shift+→ selects the chip as one unit (a screen reader reads its name); Delete takes it.
    await userEvent.keyboard('{Shift>}{ArrowRight}{/Shift}');
    expect(document.getSelection()!.toString()).toBe('@Schema');
    await userEvent.keyboard('{Delete}');
    expect(editor.text).toBe('aXZYb');
  });

  it('undoes a burst of typing in one step, a chip deletion in another, and redoes them', async () => {
    await open(`${SCHEMA.mention} `);
    await userEvent.keyboard('{Backspace}{Backspace}');
    expect(editor.text).toBe('');
    await userEvent.keyboard('hello');
    expect(editor.text).toBe('hello');
    await userEvent.keyboard('{Control>}z{/Control}');
    expect(editor.text).toBe('');
    await userEvent.keyboard('{Control>}z{/Control}');
    expect(editor.text).toBe(`${SCHEMA.mention} `);
    expect(chips()).toHaveLength(1);
    await userEvent.keyboard('{Control>}{Shift>}z{/Shift}{/Control}');
    expect(editor.text).toBe('');
    await userEvent.keyboard('{Control>}y{/Control}');
    expect(editor.text).toBe('hello');
    // A caret move ends a burst: the next typing is a step of its own.
    await userEvent.keyboard('{ArrowLeft} {Control>}z{/Control}');
    expect(editor.text).toBe('hello');
  });

  it('pastes canonical mentions as chips (line breaks as \\n) and copies the canonical markup', async () => {
    await open('see ');
    await copyToClipboard(`${CJK} and\r\n${SCHEMA.mention}`);
    await userEvent.paste();
    expect(editor.text).toBe(`see ${CJK} and\n${SCHEMA.mention}`);
    expect(chips().map(([shown]) => shown)).toEqual(['@数据库迁移', '@Schema']);
    // Select everything, copy, and paste into a textarea: the markup, not the labels.
    await userEvent.keyboard('{Control>}a{/Control}');
    await userEvent.copy();
    const area = document.createElement('textarea');
    host.append(area);
    area.focus();
    await userEvent.paste();
    expect(area.value).toBe(editor.text);
  });

  it('cuts the selection (chips whole) as one undo step', async () => {
    await open(`x ${SCHEMA.mention} y`);
    await userEvent.keyboard('{Control>}a{/Control}');
    await userEvent.cut();
    expect(editor.text).toBe('');
    await userEvent.keyboard('{Control>}z{/Control}');
    expect(editor.text).toBe(`x ${SCHEMA.mention} y`);
  });

  it('applies an IME composition when it ends (Chrome DevTools Protocol input), as one step', async () => {
    await open('a ');
    const session = cdp();
    await session.send('Input.imeSetComposition', { text: 'に', selectionStart: 1, selectionEnd: 1 });
    await session.send('Input.imeSetComposition', { text: 'にほ', selectionStart: 2, selectionEnd: 2 });
    // While composing, the canonical text waits for the end.
    expect(editor.text).toBe('a ');
    await session.send('Input.insertText', { text: '日本' });
    expect(editor.text).toBe('a 日本');
    expect(element.textContent).toBe('a 日本');
    await userEvent.keyboard('!');
    expect(editor.text).toBe('a 日本!');
    await userEvent.keyboard('{Control>}z{/Control}');
    expect(editor.text).toBe('a ');
  });

  it('setText draws without onChange; destroy gives the element back', async () => {
    await open('a');
    editor.setText(`b ${SCHEMA.mention}`);
    expect(chips()).toHaveLength(1);
    expect(changes).toEqual([]);
    editor.destroy();
    expect(element.hasAttribute('contenteditable')).toBe(false);
    expectCode(() => editor.setText('c'), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    expectCode(() => editor.text, 'SESSION_REFERENCE_INVALID_ARGUMENT');
    // A second editor may then take the element.
    editor = createMentionEditor(element, { text: 'again' });
    expect(element.textContent).toBe('again');
  });

  it.each([
    ['no element', () => createMentionEditor(null as never)],
    ['a text node', () => createMentionEditor(document.createTextNode('x') as never)],
    ['a text option that is not a string', () => createMentionEditor(document.createElement('div'), { text: 1 as never })],
    ['an onChange that is not a function', () => createMentionEditor(document.createElement('div'), { onChange: 'x' as never })],
    ['a revoked proxy as element', () => createMentionEditor(revoked() as never)],
    ['a revoked proxy as options', () => createMentionEditor(document.createElement('div'), revoked() as never)],
    ['options whose text getter throws', () => createMentionEditor(document.createElement('div'), Object.defineProperty({}, 'text', { get: () => { throw new TypeError('no'); } }) as never)],
  ])('rejects %s (INVALID_ARGUMENT)', (_, call) => {
    expectCode(call, 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });

  it('refuses a second editor on the same element', async () => {
    await open();
    expectCode(() => createMentionEditor(element), 'SESSION_REFERENCE_INVALID_ARGUMENT');
  });
});

/** A proxy revoked at once: reading anything of it throws a TypeError. */
function revoked(): object {
  const { proxy, revoke } = Proxy.revocable({}, {});
  revoke();
  return proxy;
}
