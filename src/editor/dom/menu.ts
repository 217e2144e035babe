/**
 * The default `@` menu (SPEC §15.9): a `<ul role="listbox">` of `<li role="option">` rows drawn from
 * the menu state, placed at the `@` with `@floating-ui/dom` (below it, flipped above when the
 * viewport has no room, shifted to stay inside it). Loaded as a lazy chunk only by a composer
 * whose `suggest` has no `render`, so an app that draws its own menu never ships floating-ui.
 *
 * Class names: `dsh-mention-menu` (the list), `dsh-mention-option` (a row; the active one has
 * `aria-selected="true"`), `dsh-mention-option-label` and `dsh-mention-option-cwd` (its two lines).
 * CSS custom properties (with their defaults): `--dsh-mention-menu-background` (`Canvas`),
 * `--dsh-mention-menu-color` (`CanvasText`), `--dsh-mention-menu-border` (`1px solid GrayText`),
 * `--dsh-mention-menu-radius` (`6px`), `--dsh-mention-menu-shadow`, `--dsh-mention-menu-max-height`
 * (`16rem`), `--dsh-mention-menu-z-index` (`1000`), `--dsh-mention-option-active-background`
 * (`Highlight`), `--dsh-mention-option-active-color` (`HighlightText`).
 * @module
 */
import { computePosition, flip, offset, shift } from '@floating-ui/dom';
import { collapseUntrustedText } from '../../label.js';
import type { MentionMenuState } from './suggest.js';

/** What the default menu calls back: a row under the pointer becomes active; a click picks it. */
export interface MenuActions {
  select(index: number): void;
  pick(index: number): void;
}

const LIST_STYLE = [
  'position: fixed',
  'left: 0',
  'top: 0',
  'margin: 0',
  'padding: 4px',
  'list-style: none',
  'box-sizing: border-box',
  'min-width: 12rem',
  'max-width: min(28rem, calc(100vw - 16px))',
  'overflow: auto',
  'font: inherit',
  'max-height: var(--dsh-mention-menu-max-height, 16rem)',
  'z-index: var(--dsh-mention-menu-z-index, 1000)',
  'background: var(--dsh-mention-menu-background, Canvas)',
  'color: var(--dsh-mention-menu-color, CanvasText)',
  'border: var(--dsh-mention-menu-border, 1px solid GrayText)',
  'border-radius: var(--dsh-mention-menu-radius, 6px)',
  'box-shadow: var(--dsh-mention-menu-shadow, 0 4px 16px rgb(0 0 0 / 0.18))',
].join(';');

const ROW_STYLE = 'padding: 4px 8px; border-radius: 4px; cursor: pointer; white-space: nowrap; overflow: hidden; text-overflow: ellipsis';
const ACTIVE_STYLE = 'background: var(--dsh-mention-option-active-background, Highlight); color: var(--dsh-mention-option-active-color, HighlightText)';

/**
 * The default menu of one composer: a listbox placed right after the composer's element (so it
 * sits in the composer's landmark: axe-core's `region` rule; in the body when the element has no
 * parent), positioned `fixed` so no ancestor's overflow clips it, redrawn from each state.
 */
export class DefaultMenu {
  readonly #list: HTMLUListElement;
  #items: MentionMenuState['items'] | undefined;
  /** Placements are asynchronous: only the latest one is applied. */
  #placing = 0;

  constructor(composer: HTMLElement, label: string, actions: MenuActions) {
    const document = composer.ownerDocument;
    const list = document.createElement('ul');
    list.className = 'dsh-mention-menu';
    list.setAttribute('role', 'listbox');
    list.setAttribute('aria-label', label);
    list.setAttribute('style', LIST_STYLE);
    list.hidden = true;
    // A press on the menu must not take the focus (and the caret) from the composer.
    list.addEventListener('mousedown', (event) => event.preventDefault());
    list.addEventListener('click', (event) => {
      const index = rowIndex(event.target);
      if (index !== undefined) actions.pick(index);
    });
    list.addEventListener('mousemove', (event) => {
      const index = rowIndex(event.target);
      if (index !== undefined) actions.select(index);
    });
    if (composer.parentNode === null) document.body.append(list);
    else composer.after(list);
    this.#list = list;
  }

  /** Draws `state`: rows when the items changed, the active row, the placement at `state.rect`. */
  render(state: MentionMenuState): void {
    const list = this.#list;
    list.id = state.listboxId;
    list.hidden = !state.open;
    list.setAttribute('aria-busy', String(state.loading));
    if (!state.open) return;
    if (state.items !== this.#items) {
      this.#items = state.items;
      list.replaceChildren(...state.items.map((item, index) => row(list.ownerDocument, item, state.optionId(index))));
    }
    for (const [index, option] of Array.from(list.children).entries()) {
      const active = index === state.active;
      option.setAttribute('aria-selected', String(active));
      option.setAttribute('style', active ? `${ROW_STYLE};${ACTIVE_STYLE}` : ROW_STYLE);
      if (active) option.scrollIntoView?.({ block: 'nearest' });
    }
    if (state.rect !== undefined) this.#place(state.rect);
  }

  /** Removes the menu from the document. */
  remove(): void {
    this.#placing++;
    this.#list.remove();
  }

  /** Below the `@` (4 px apart), flipped above it or shifted along the viewport's edges when there is no room. */
  #place(rect: DOMRect): void {
    const placing = ++this.#placing;
    const anchor = { getBoundingClientRect: () => rect };
    void computePosition(anchor, this.#list, { strategy: 'fixed', placement: 'bottom-start', middleware: [offset(4), flip(), shift({ padding: 8 })] }).then(
      ({ x, y, placement }) => {
        if (placing !== this.#placing) return;
        this.#list.style.left = `${x}px`;
        this.#list.style.top = `${y}px`;
        this.#list.dataset.placement = placement;
      },
    );
  }
}

/** The index of the row an event happened in, if any. */
function rowIndex(target: EventTarget | null): number | undefined {
  const option = (target as Element | null)?.closest?.('[role="option"]');
  if (!option?.parentElement) return undefined;
  return Array.prototype.indexOf.call(option.parentElement.children, option) as number;
}

/** One row: the label, and the cwd after it when there is one (text only, cleaned as labels are, SPEC §6.6). */
function row(document: Document, item: MentionMenuState['items'][number], id: string): HTMLLIElement {
  const option = document.createElement('li');
  option.className = 'dsh-mention-option';
  option.id = id;
  option.setAttribute('role', 'option');
  option.dataset.sessionId = item.sessionId;
  const label = document.createElement('span');
  label.className = 'dsh-mention-option-label';
  label.textContent = collapseUntrustedText(item.label);
  option.append(label);
  if (item.cwd !== undefined) {
    const cwd = document.createElement('span');
    cwd.className = 'dsh-mention-option-cwd';
    cwd.textContent = ` ${collapseUntrustedText(item.cwd)}`;
    option.append(cwd);
  }
  return option;
}
