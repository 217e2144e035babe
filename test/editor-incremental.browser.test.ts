/**
 * The composer's incremental editing (issue 29.3) against the pure functions of SPEC §15.7, as a
 * property in real Chromium: for generated drafts (chips, bare URIs, malformed mentions, line
 * breaks, sometimes more than one block of 64 lines) and generated edits (typing, line breaks,
 * Backspace/Delete by character and word, over carets and ranges at every place the DOM can hold
 * a caret), the composer's text equals the pure function applied to the whole draft, and its
 * drawing equals a fresh composer's, line by line. The edits are the `beforeinput` events the
 * browser sends, dispatched on the element with the DOM selection set first.
 *
 * Browser-only (`*.browser.test.ts`): only the Chromium row of the matrix runs it. fast-check
 * prints the seed and the shrunk case on failure.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { deleteBackward, deleteForward, replaceSelection, segmentMentions, type MentionEdit, type MentionSelection } from '../src/editor/index.js';
import { createMentionEditor } from '../src/editor/dom/index.js';
import { canonicalMention, promptText } from './prompt-texts.js';

/** One edit, as the browser proposes it. */
type Edit = { inputType: 'insertText' | 'insertLineBreak' | 'deleteContentBackward' | 'deleteContentForward' | 'deleteWordBackward' | 'deleteWordForward'; data: string | null; at: [number, number] };

/** What the composer must make of `edit` (the pure function over the whole draft). */
function expected(text: string, selection: MentionSelection, edit: Edit): MentionEdit {
  switch (edit.inputType) {
    case 'insertText':
      // The composer keeps one kind of line break (`\r\n` and `\r` become `\n`).
      return replaceSelection(text, selection, edit.data!.replace(/\r\n?/g, '\n'));
    case 'insertLineBreak':
      return replaceSelection(text, selection, '\n');
    case 'deleteContentBackward':
      return deleteBackward(text, selection);
    case 'deleteWordBackward':
      return deleteBackward(text, selection, { unit: 'word' });
    case 'deleteContentForward':
      return deleteForward(text, selection);
    case 'deleteWordForward':
      return deleteForward(text, selection, { unit: 'word' });
  }
}

/**
 * The offsets where the DOM can hold a caret (outside chips, not inside a surrogate pair), each
 * with its DOM point, from the composer's drawing read in order against §15.6's segments.
 */
function domPoints(element: HTMLElement, text: string): Array<{ offset: number; node: Node; at: number }> {
  // The empty draft draws nothing: the caret is in the element.
  if (text === '') return [{ offset: 0, node: element, at: 0 }];
  const lines = [...element.querySelectorAll(':scope > div > div')];
  const runs = lines.flatMap((line) => [...line.childNodes].filter((node) => node.nodeName !== 'BR'));
  // Every line's start: the line block, before its first child.
  const points: Array<{ offset: number; node: Node; at: number }> = [{ offset: 0, node: lines[0]!, at: 0 }];
  let line = 0;
  let child = 0;
  for (const segment of segmentMentions(text)) {
    if (segment.kind === 'mention') {
      const chip = runs[child++]!;
      const range = document.createRange();
      range.setStartAfter(chip);
      points.push({ offset: segment.end, node: range.startContainer, at: range.startOffset });
      continue;
    }
    let start = segment.start;
    segment.text.split('\n').forEach((part, index) => {
      if (index > 0) points.push({ offset: start, node: lines[++line]!, at: 0 });
      if (part !== '') {
        const node = runs[child++]!;
        for (let i = 0; i <= part.length; i++) {
          const code = part.charCodeAt(i);
          if (!(code >= 0xdc00 && code <= 0xdfff)) points.push({ offset: start + i, node, at: i });
        }
      }
      start += part.length + 1;
    });
  }
  return points;
}

const edit: fc.Arbitrary<Omit<Edit, 'at'> & { at: [number, number] }> = fc.record({
  inputType: fc.constantFrom('insertText', 'insertLineBreak', 'deleteContentBackward', 'deleteContentForward', 'deleteWordBackward', 'deleteWordForward'),
  data: fc.oneof(fc.constantFrom('x', ' ', '@', '@[', '](dsh-session:', ')', 'dsh-session:', 'a\nb', '\n'), canonicalMention),
  at: fc.tuple(fc.nat(), fc.nat()),
}) as never;

/**
 * Chip-free text (issue 29: the stretch is bounded by line breaks there): long lines and paragraphs
 * of words, blanks and line breaks, with pieces that could start a mention or a bare URI across a
 * line break (`@[`, `]`, a label's escape, a split `dsh-session:`) and a combining mark after a break.
 */
const chipFree = fc
  .array(fc.constantFrom('word', 'Wort ', 'x@', '@[', ']', '\\', ' ', '  \t', '\n', '\n\n', 'é', '\u0301', 'dsh-sess', 'ion:IkEi', '](dsh-session:IkEi)', '🙂'), { maxLength: 80 })
  .map((parts) => parts.join(''));

/**
 * Drafts: generated prompt text, sometimes after 70 lines (so edits meet where blocks of 64 lines
 * meet), with chip-free text before and after it.
 */
const draft = fc
  .tuple(fc.boolean(), chipFree, promptText(true), chipFree)
  .map(([long, before, text, after]) => `${long ? `${Array.from({ length: 70 }, (_, i) => `l${i}`).join('\n')}\n` : ''}${before}${text}${after}`);

let element: HTMLDivElement | undefined;

afterEach(() => element?.remove());

describe('incremental editing (issue 29.3) equals the pure functions (SPEC §15.7), real Chromium', () => {
  it('for generated drafts and edits: the same text, and the same drawing as a fresh composer', () => {
    fc.assert(
      fc.property(draft, fc.array(edit, { minLength: 1, maxLength: 6 }), (text, edits) => {
        element?.remove();
        element = document.createElement('div');
        document.body.append(element);
        const editor = createMentionEditor(element, { text });
        element.focus();
        let model = text;
        try {
          for (const { inputType, data, at } of edits) {
            const points = domPoints(element, model);
            const anchor = points[at[0] % points.length]!;
            const focus = points[at[1] % points.length]!;
            document.getSelection()!.setBaseAndExtent(anchor.node, anchor.at, focus.node, focus.at);
            const event = new InputEvent('beforeinput', { inputType, data: inputType === 'insertText' ? data : null, bubbles: true, cancelable: true });
            element.dispatchEvent(event);
            model = expected(model, { anchor: anchor.offset, focus: focus.offset }, { inputType, data, at }).text;
            expect(editor.text).toBe(model);
          }
          const fresh = document.createElement('div');
          document.body.append(fresh);
          const other = createMentionEditor(fresh, { text: model });
          const lines = (root: HTMLElement) => [...root.querySelectorAll(':scope > div > div')].map((line) => line.innerHTML);
          expect(lines(element)).toEqual(lines(fresh));
          other.destroy();
          fresh.remove();
        } finally {
          editor.destroy();
        }
      }),
      { numRuns: 200 },
    );
  });

  it('a chip deleted before identical chips in a row keeps each of them (a bug the property found)', () => {
    const A = '@[A](dsh-session:IkEi)';
    element = document.createElement('div');
    document.body.append(element);
    const editor = createMentionEditor(element, { text: `${A}@[x](dsh-session:)${A}${A}` });
    element.focus();
    const line = element.querySelector(':scope > div > div')!;
    document.getSelection()!.setBaseAndExtent(line, 0, line, 1);
    element.dispatchEvent(new InputEvent('beforeinput', { inputType: 'deleteContentForward', bubbles: true, cancelable: true }));
    expect(editor.text).toBe(`@[x](dsh-session:)${A}${A}`);
    expect([...line.childNodes].map((chip) => chip.textContent)).toEqual(['@x', '@A', '@A']);
    editor.destroy();
  });
});
