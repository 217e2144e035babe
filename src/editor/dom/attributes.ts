/**
 * Attributes the composer sets on the app's element, each remembered as it was before the first
 * change, so that `destroy()` gives the element back exactly (an attribute that was absent is
 * removed, not left empty).
 * @module
 */

/** The element's attributes as the composer found them. */
export class AttributeLedger {
  readonly #element: Element;
  readonly #saved = new Map<string, string | null>();

  constructor(element: Element) {
    this.#element = element;
  }

  /** The attribute as it was before the composer touched it (`null`: absent). */
  original(name: string): string | null {
    return this.#saved.has(name) ? this.#saved.get(name)! : this.#element.getAttribute(name);
  }

  /** Remembers `name` as it is now, before the composer changes it another way (`element.style`). */
  remember(name: string): void {
    if (!this.#saved.has(name)) this.#saved.set(name, this.#element.getAttribute(name));
  }

  /** Sets `name` to `value`, or removes it when `value` is `undefined`. */
  set(name: string, value: string | undefined): void {
    this.remember(name);
    if (value === undefined) this.#element.removeAttribute(name);
    else if (this.#element.getAttribute(name) !== value) this.#element.setAttribute(name, value);
  }

  /** Puts every attribute back as it was. */
  restore(): void {
    for (const [name, value] of this.#saved) {
      if (value === null) this.#element.removeAttribute(name);
      else this.#element.setAttribute(name, value);
    }
    this.#saved.clear();
  }
}
