/**
 * The playground's chips (playground/src/chips.ts): the composer is the kit's `createMentionEditor`
 * (its edit model is tested in test/editor-edit.test.ts and test/editor-dom.browser.test.ts); the
 * playground only marks each chip the kit draws — ok, a session not in the store, malformed
 * (SPEC §13). Vectors, then a property over generated texts: every chip of `segmentMentions` gets
 * exactly one state, from what the kit puts on the chip.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { encodeSessionReferenceUri, formatSessionReferenceMention } from '../src/index.js';
import { segmentMentions } from '../src/editor/index.js';
import { chipDecoration } from '../playground/src/chips.js';
import { promptText } from './prompt-texts.js';

const KNOWN = new Set(['session-a', 'session-b', 'A']);

/** The decorations of a text's chips, from the attributes the kit gives them (data-session-id, data-valid). */
const decorations = (text: string) =>
  segmentMentions(text).flatMap((s) => (s.kind === 'mention' ? [chipDecoration(s.valid ? s.token.sessionId : undefined, s.valid, KNOWN)] : []));

describe('chip decorations', () => {
  it('marks known, unknown and malformed chips', () => {
    const text = `x ${formatSessionReferenceMention({ sessionId: 'session-a', label: 'Alpha [1]' })}${encodeSessionReferenceUri('session-b')} ${formatSessionReferenceMention({ sessionId: 'gone' })} @[bad](dsh-session:e30)`;
    expect(decorations(text)).toEqual([
      { state: 'ok' },
      { state: 'ok' },
      { state: 'unknown', title: 'gone (no session with this id in the store)' },
      { state: 'malformed', code: 'SESSION_REFERENCE_INVALID_REFERENCE' },
    ]);
  });

  it('property: one decoration per chip; malformed exactly for the invalid ones, ok exactly for known ids', () => {
    fc.assert(
      fc.property(promptText(true), (text) => {
        const chips = segmentMentions(text).flatMap((s) => (s.kind === 'mention' ? [s] : []));
        const states = decorations(text).map((d) => d.state);
        expect(states).toHaveLength(chips.length);
        chips.forEach((chip, i) => {
          const expected = !chip.valid ? 'malformed' : KNOWN.has(chip.token.sessionId!) ? 'ok' : 'unknown';
          expect(states[i]).toBe(expected);
        });
      }),
      { numRuns: 300 },
    );
  });
});
