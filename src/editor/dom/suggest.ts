/**
 * The `@` menu's behaviour, owned by the composer (SPEC §15.9): debounced fetches per trigger
 * query with superseded calls aborted and late answers dropped, answers cached per query while
 * the trigger lives, the active row and the menu keys. Draws nothing itself: every change of
 * state goes to a render function (the app's, or the default menu of `./menu.ts`).
 * @module
 */
import { readCallerArray, readCallerFields } from '../../caller-data.js';
import { check, fail } from '../../errors.js';
import { mentionQueryPassedEmpty, type MentionTrigger } from '../trigger.js';

/** A row of the `@` menu: what `suggest.fetch` resolves to (a §6.5 `SessionCandidate` fits). */
export interface MentionSuggestion {
  sessionId: string;
  /** Shown text (the default menu falls back to `sessionId`). */
  label: string;
  /** Shown under the label by the default menu when present. */
  cwd?: string | undefined;
  /** The canonical mention to insert; when absent, one is made from `sessionId` and `label`. */
  mention?: string | undefined;
}

/**
 * What the menu shows, given to `suggest.render` on every change (SPEC §15.9). A new object each
 * time; never mutated afterwards.
 */
export interface MentionMenuState {
  /** Whether the menu is shown: a trigger is being typed, it was not dismissed with Escape, and `items` is not empty. */
  open: boolean;
  /** The trigger's query (`''` when there is no trigger). */
  query: string;
  /** The rows: the latest answer of `fetch` (kept while a newer query is loading). */
  items: readonly MentionSuggestion[];
  /** Index of the active row in `items`, or `-1` when there is none. */
  active: number;
  /** Whether a `fetch` for `query` is waiting out the debounce or running. */
  loading: boolean;
  /** What the last `fetch` for `query` rejected with (`items` is then empty), else `undefined`. */
  error: unknown;
  /** The client rectangle of the trigger's `@` (viewport coordinates), or `undefined` without a trigger. */
  rect: DOMRect | undefined;
  /** The `id` the listbox must carry (the editable's `aria-controls` names it). */
  listboxId: string;
  /** The `id` row `index` must carry (the editable's `aria-activedescendant` names the active one). */
  optionId(index: number): string;
}

/** What the controller needs from the composer. */
export interface SuggestHost {
  /** Draws `state` (the app's `render`, or the default menu). */
  render(state: MentionMenuState): void;
  /** Inserts the picked row in place of the trigger. */
  insert(item: MentionSuggestion): void;
}

/** The `suggest` option, read once and checked. */
export interface SuggestSettings {
  fetch: (query: string, signal: AbortSignal) => unknown;
  debounceMs: number;
  render: ((state: MentionMenuState) => void) | undefined;
  words: boolean;
  menuLabel: string;
}

/** A trigger being typed: `start` is its `@`. */
type Trigger = MentionTrigger & { rect: DOMRect };

/**
 * Reads the `suggest` option (SPEC §10.4: each field once).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_ARGUMENT` naming the bad field.
 */
export function readSuggest(suggest: unknown): SuggestSettings | undefined {
  if (suggest === undefined) return undefined;
  check(typeof suggest === 'object' && suggest !== null, 'INVALID_ARGUMENT', 'options.suggest must be an object', suggest);
  const keys = ['fetch', 'debounceMs', 'render', 'candidateMatch', 'menuLabel'] as const;
  const { fetch, debounceMs, render, candidateMatch, menuLabel } = readCallerFields(suggest, keys, 'options.suggest');
  check(typeof fetch === 'function', 'INVALID_ARGUMENT', 'options.suggest.fetch must be a function', fetch);
  const delay = debounceMs ?? 100;
  check(typeof delay === 'number' && delay >= 0 && delay <= 60_000, 'INVALID_ARGUMENT', 'options.suggest.debounceMs must be a number of milliseconds from 0 to 60000', debounceMs);
  check(render === undefined || typeof render === 'function', 'INVALID_ARGUMENT', 'options.suggest.render must be a function', render);
  check(
    candidateMatch === undefined || candidateMatch === 'substring' || candidateMatch === 'words',
    'INVALID_ARGUMENT',
    "options.suggest.candidateMatch must be 'substring' or 'words'",
    candidateMatch,
  );
  check(menuLabel === undefined || (typeof menuLabel === 'string' && menuLabel.trim() !== ''), 'INVALID_ARGUMENT', 'options.suggest.menuLabel must be a non-empty string', menuLabel);
  return {
    fetch: fetch as SuggestSettings['fetch'],
    debounceMs: delay,
    render: render as SuggestSettings['render'],
    words: candidateMatch === 'words',
    menuLabel: (menuLabel as string | undefined) ?? 'Sessions',
  };
}

/** An answer of `fetch` as plain rows, each read once; anything else is INVALID_ARGUMENT. */
function readItems(answer: unknown): MentionSuggestion[] {
  const rows = readCallerArray(answer, 'suggest.fetch answer');
  if (rows === undefined) throw fail('INVALID_ARGUMENT', 'suggest.fetch must resolve to an array of candidates');
  return rows.map((row, index) => {
    const { sessionId, label, cwd, mention } = readCallerFields(row, ['sessionId', 'label', 'cwd', 'mention'], `suggest.fetch answer[${index}]`);
    check(typeof sessionId === 'string', 'INVALID_ARGUMENT', `suggest.fetch answer[${index}].sessionId must be a string`, sessionId);
    const item: MentionSuggestion = { sessionId, label: typeof label === 'string' && label !== '' ? label : sessionId };
    if (typeof cwd === 'string' && cwd !== '') item.cwd = cwd;
    if (typeof mention === 'string') item.mention = mention;
    return item;
  });
}

let menus = 0;

/** The menu of one composer (SPEC §15.9). */
export class MentionSuggester {
  readonly listboxId = `dsh-mention-menu-${++menus}`;
  readonly optionId = (index: number): string => `${this.listboxId}-option-${index}`;
  readonly #settings: SuggestSettings;
  readonly #host: SuggestHost;
  #trigger: Trigger | undefined;
  /** Answers per query, for the trigger's `@` (cleared when the trigger goes). */
  #cache = new Map<string, MentionSuggestion[]>();
  /** The `@` and query Escape dismissed: the menu stays closed until the trigger changes. */
  #dismissed: { start: number; query: string } | undefined;
  /** The latest trigger whose answer was empty (SPEC §15.10: a space after it ends a spaced query). */
  #empty: MentionTrigger | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #call: AbortController | undefined;
  #items: MentionSuggestion[] = [];
  #active = -1;
  #loading = false;
  #error: unknown;

  constructor(settings: SuggestSettings, host: SuggestHost) {
    this.#settings = settings;
    this.#host = host;
  }

  /** Whether the trigger query may hold spaces (`candidateMatch: 'words'`, SPEC §15.10). */
  get words(): boolean {
    return this.#settings.words;
  }

  get open(): boolean {
    return this.#trigger !== undefined && this.#dismissed === undefined && this.#items.length > 0;
  }

  get active(): number {
    return this.open ? this.#active : -1;
  }

  /**
   * Whether a trigger found with spaces allowed still stands (SPEC §15.10): it ends when a space
   * follows words whose answer was empty ({@link mentionQueryPassedEmpty}); words typed after
   * that space do not bring it back.
   */
  accepts(trigger: MentionTrigger): boolean {
    return this.#empty === undefined || !mentionQueryPassedEmpty(trigger, this.#empty);
  }

  /** The composer's trigger changed (a new `@`, a new query, or none). */
  update(trigger: Trigger | undefined): void {
    const previous = this.#trigger;
    this.#trigger = trigger;
    if (trigger !== undefined && trigger.start !== this.#empty?.start) this.#empty = undefined;
    if (trigger === undefined || trigger.start !== previous?.start) {
      this.#cache.clear();
      this.#dismissed = undefined;
      this.#items = [];
    }
    if (trigger === undefined) {
      this.#cancel();
      this.#loading = false;
      this.#error = undefined;
      this.#draw();
      return;
    }
    if (this.#dismissed !== undefined && this.#dismissed.query !== trigger.query) this.#dismissed = undefined;
    if (previous?.start !== trigger.start || previous.query !== trigger.query) this.#ask(trigger.query);
    this.#draw();
  }

  /**
   * A key pressed in the composer while the menu is open: ↓/↑ (wrapping), Home/End, Enter/Tab
   * (insert the active row), Escape (close until the trigger changes). Returns whether it was the
   * menu's (the composer then cancels it).
   */
  keydown(event: KeyboardEvent): boolean {
    if (!this.open || event.altKey || event.ctrlKey || event.metaKey || event.isComposing) return false;
    const count = this.#items.length;
    const moves: Record<string, number> = { ArrowDown: (this.#active + 1) % count, ArrowUp: (this.#active - 1 + count) % count, Home: 0, End: count - 1 };
    const move = event.shiftKey ? undefined : moves[event.key];
    if (move !== undefined) this.select(move);
    else if ((event.key === 'Enter' && !event.shiftKey) || (event.key === 'Tab' && !event.shiftKey)) this.pick(this.#active);
    else if (event.key === 'Escape') this.dismiss();
    else return false;
    return true;
  }

  /** Makes row `index` the active one (a pointer over it, or a key). */
  select(index: number): void {
    if (index < 0 || index >= this.#items.length || index === this.#active) return;
    this.#active = index;
    this.#draw();
  }

  /** Inserts row `index` (a pointer pick, Enter or Tab). */
  pick(index: number): void {
    const item = this.#items[index];
    if (item !== undefined && this.open) this.#host.insert(item);
  }

  /** Closes the menu until the trigger changes (Escape). */
  dismiss(): void {
    if (this.#trigger === undefined) return;
    this.#dismissed = { start: this.#trigger.start, query: this.#trigger.query };
    this.#cancel();
    this.#loading = false;
    this.#draw();
  }

  /** Stops the pending call and timer, and draws the menu closed. */
  destroy(): void {
    this.#cancel();
    this.#trigger = undefined;
    this.#items = [];
    this.#draw();
  }

  /** Shows the cached answer for `query`, or fetches it after the debounce (aborting the older call). */
  #ask(query: string): void {
    this.#cancel();
    this.#error = undefined;
    const cached = this.#cache.get(query);
    if (cached !== undefined) {
      this.#show(cached);
      return;
    }
    this.#loading = true;
    this.#timer = setTimeout(() => this.#fetch(query), this.#settings.debounceMs);
  }

  #fetch(query: string): void {
    this.#timer = undefined;
    const call = new AbortController();
    this.#call = call;
    const late = () => this.#call !== call;
    new Promise((resolve) => resolve(this.#settings.fetch(query, call.signal)))
      .then(readItems)
      .then(
        (items) => {
          if (late()) return;
          this.#call = undefined;
          this.#cache.set(query, items);
          this.#show(items);
          this.#draw();
        },
        (error: unknown) => {
          if (late()) return;
          this.#call = undefined;
          this.#loading = false;
          this.#error = error;
          this.#items = [];
          this.#active = -1;
          this.#draw();
        },
      );
  }

  #show(items: MentionSuggestion[]): void {
    this.#loading = false;
    this.#items = items;
    this.#active = items.length > 0 ? 0 : -1;
    if (items.length === 0) this.#empty = this.#trigger;
  }

  /** Aborts the running call (its answer will be dropped) and clears the debounce timer. */
  #cancel(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const call = this.#call;
    this.#call = undefined;
    call?.abort(fail('CANCELLED', 'a newer query superseded this one'));
  }

  #draw(): void {
    const trigger = this.#trigger;
    this.#host.render(
      Object.freeze({
        open: this.open,
        query: trigger?.query ?? '',
        items: Object.freeze([...this.#items]),
        active: this.active,
        loading: this.#loading,
        error: this.#error,
        rect: trigger?.rect,
        listboxId: this.listboxId,
        optionId: this.optionId,
      }),
    );
  }
}
