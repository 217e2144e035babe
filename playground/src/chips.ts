/**
 * How the playground marks the chips the kit's composer draws (SPEC §13, §15.8): a chip of a
 * session that is not in the store is a warning, a malformed one an error. The editing model
 * itself is the kit's (`dsh-session-reference/editor/dom`); this module only decorates its chips.
 */
import { CHIP_CLASS } from '../../src/editor/dom/index.js';

/** How a chip is drawn. */
export type ChipState = 'ok' | 'unknown' | 'malformed';

/** What the playground adds to one chip: its state, and the hover text and error code of a marked one. */
export interface ChipDecoration {
  state: ChipState;
  /** Replaces the kit's `title` (the id) for a chip of an unknown session. */
  title?: string;
  /** Error code of a malformed chip (SPEC §3.3: always INVALID_REFERENCE). */
  code?: string;
}

/**
 * The decoration of a chip from what the kit put on it: `data-session-id` (a valid mention) and
 * `data-valid="false"` (a malformed one). `knownIds`: the sessions in the store.
 */
export function chipDecoration(sessionId: string | undefined, valid: boolean, knownIds: ReadonlySet<string>): ChipDecoration {
  if (!valid || sessionId === undefined) return { state: 'malformed', code: 'SESSION_REFERENCE_INVALID_REFERENCE' };
  if (knownIds.has(sessionId)) return { state: 'ok' };
  return { state: 'unknown', title: `${sessionId} (no session with this id in the store)` };
}

/** Decorates every chip in `root` (after each draw of the composer). */
export function decorateChips(root: HTMLElement, knownIds: ReadonlySet<string>): void {
  for (const chip of root.querySelectorAll<HTMLElement>(`.${CHIP_CLASS}`)) {
    const { state, title, code } = chipDecoration(chip.dataset.sessionId, chip.dataset.valid !== 'false', knownIds);
    chip.classList.add('chip');
    chip.classList.remove('chip-ok', 'chip-unknown', 'chip-malformed');
    chip.classList.add(`chip-${state}`);
    chip.dataset.testid = 'chip';
    chip.dataset.state = state;
    if (code !== undefined) chip.dataset.code = code;
    if (title !== undefined) chip.title = title;
    else if (chip.dataset.sessionId !== undefined) chip.title = chip.dataset.sessionId;
  }
}
