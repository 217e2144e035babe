/**
 * Undo and redo of the DOM composer (SPEC §15.8): one step per edit, a burst of typing (or of
 * Backspace, or of Delete) one step.
 * @module
 */
import type { MentionEdit, MentionSelection } from '../edit.js';

/** What an edit was: a burst of one of the first three kinds makes one step. */
export type EditKind = 'typing' | 'deleteBackward' | 'deleteForward' | 'other';

interface Step {
  kind: EditKind;
  before: MentionEdit;
  after: MentionEdit;
}

/** Steps kept; older ones are dropped. */
const LIMIT = 200;

const sameSelection = (a: MentionSelection, b: MentionSelection): boolean => a.anchor === b.anchor && a.focus === b.focus;

/** The undo and redo stacks of one editor. */
export class EditHistory {
  #undo: Step[] = [];
  #redo: Step[] = [];
  /** When set, the next edit starts a new step even if it continues a burst. */
  #sealed = true;

  /**
   * Records an edit from `before` to `after`. An edit of a mergeable kind that continues the last
   * step (same kind, made where that step left the text and caret, nothing undone or sealed since)
   * extends that step instead.
   */
  record(kind: EditKind, before: MentionEdit, after: MentionEdit): void {
    const last = this.#undo.at(-1);
    const continues =
      !this.#sealed && kind !== 'other' && last?.kind === kind && last.after.text === before.text && sameSelection(last.after.selection, before.selection);
    if (continues) last.after = after;
    else this.#undo.push({ kind, before, after });
    if (this.#undo.length > LIMIT) this.#undo.shift();
    this.#redo = [];
    this.#sealed = kind === 'other';
  }

  /** Ends the current burst: the next edit is a step of its own (a caret move, `setText`). */
  seal(): void {
    this.#sealed = true;
  }

  /** Forgets every step (the text was replaced from outside). */
  clear(): void {
    this.#undo = [];
    this.#redo = [];
    this.#sealed = true;
  }

  /** The text and selection before the last step (moved to the redo stack), or `undefined`. */
  undo(): MentionEdit | undefined {
    const step = this.#undo.pop();
    if (step === undefined) return undefined;
    this.#redo.push(step);
    this.#sealed = true;
    return step.before;
  }

  /** The text and selection after the last undone step (moved back to the undo stack), or `undefined`. */
  redo(): MentionEdit | undefined {
    const step = this.#redo.pop();
    if (step === undefined) return undefined;
    this.#undo.push(step);
    this.#sealed = true;
    return step.after;
  }
}
