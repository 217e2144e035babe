/**
 * Caller data read once (SPEC §10.3, §10.4): the one mechanism by which every public function of
 * every entry takes in its arguments.
 *
 * Each caller argument is read exactly once, synchronously (before the function first awaits),
 * into a private plain copy; the function then validates and uses only that copy. So a getter
 * cannot answer one thing to a check and another to the use, a draft revoked once the call has
 * returned its promise (Immer) is never touched again, and the deep reactive proxies of UI
 * frameworks (Svelte 5 `$state`, Vue `reactive`, MobX, Immer, Solid stores) read like the plain
 * objects they stand for. Nothing here calls `structuredClone`, which refuses such proxies.
 *
 * The copy, precisely:
 * - strings, numbers, booleans, bigints, `null` and `undefined` are kept;
 * - an array (`Array.isArray`, proxies of arrays included) becomes a new dense array of the
 *   entries it holds, in index order: its `length` is read once, then each index below it that
 *   the array has is read once; a hole is not an entry, so a sparse array with `length` 2³²−1 and
 *   three entries is copied as three entries, at the cost of three (SPEC §10.3). Other own
 *   properties of an array are not copied;
 * - `ArrayBuffer`s, typed arrays and `DataView`s are copied byte for byte, as the same type;
 * - any other object whose `Object.prototype.toString` tag is `Object` (plain objects, class
 *   instances, proxies of objects) becomes a new plain object with its own enumerable string
 *   keys, in `Object.keys` order, each read once with an ordinary property read (so MobX's
 *   accessor properties and a proxy's `get` trap answer as they do for the app);
 * - the same object met twice gives the same copy (shared parts and cycles are kept, and a graph
 *   with shared parts costs its size, not the number of its paths);
 * - a function, a symbol, or an object whose data is not in its own properties (`Map`, `Set`,
 *   `Date`, `RegExp`, `Error`, `Promise`, …) cannot be copied as data and is refused, as is
 *   nesting deeper than {@link MAX_CALLER_DATA_DEPTH} levels.
 * A read that throws (a throwing getter, a revoked proxy) and a value refused are a
 * `SessionReferenceError` (by default `SESSION_REFERENCE_INVALID_ARGUMENT`) naming the path,
 * e.g. `message.content[2].text`, with the original error as `cause`.
 * @module
 */
import { describeValue, fail, isInstance, type ErrorCodeInput } from './errors.js';

/** Levels of objects and arrays a copy follows below the argument itself; deeper is refused. */
export const MAX_CALLER_DATA_DEPTH = 1000;

/** Type tags of the binary objects copied byte for byte. */
const BINARY = /^\[object (?:ArrayBuffer|DataView|(?:Ui|I)nt(?:8|16|32)Array|Uint8ClampedArray|Float(?:16|32|64)Array|Big(?:Ui|I)nt64Array)\]$/;

/** Where a read is: the argument's name, then keys and indices. */
type Path = Array<string | number>;

/** `message.content[2].text` for `['message', 'content', 2, 'text']`; odd keys as `["a b"]`. */
function formatPath([name, ...keys]: Path): string {
  let out = String(name);
  for (const key of keys) out += typeof key === 'number' ? `[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  return out;
}

/** One copy in progress: the objects copied so far, where it is, and the code its errors carry. */
class Copier {
  private readonly copies = new Map<object, unknown>();

  /** @param deep Copy what the argument holds too; otherwise its entries or values are kept as they are. */
  constructor(
    private readonly path: Path,
    private readonly code: ErrorCodeInput,
    private readonly deep = true,
  ) {}

  /** `step()`, with a failure of it turned into this copy's error naming the path (plus `key`). */
  read<T>(step: () => T, key?: string | number): T {
    try {
      return step();
    } catch (error) {
      if (isInstance(error)) throw error;
      throw fail(this.code, `${formatPath(key === undefined ? this.path : [...this.path, key])} cannot be read: ${describeValue(error)}`, error);
    }
  }

  refuse(what: string): never {
    throw fail(this.code, `${formatPath(this.path)} is ${what}, not data that can be copied (SPEC §10.4)`);
  }

  copy(value: unknown): unknown {
    if (typeof value === 'function' || typeof value === 'symbol') this.refuse(typeof value === 'symbol' ? 'a symbol' : 'a function');
    if (typeof value !== 'object' || value === null) return value;
    const known = this.copies.get(value);
    if (known !== undefined) return known;
    if (this.path.length > MAX_CALLER_DATA_DEPTH) this.refuse(`nested deeper than ${MAX_CALLER_DATA_DEPTH} levels`);
    if (this.read(() => Array.isArray(value))) return this.copyArray(value as unknown[]);
    const tag = this.read(() => Object.prototype.toString.call(value));
    if (tag === '[object Object]') return this.copyObject(value as Record<string, unknown>);
    if (BINARY.test(tag)) return this.read(() => copyBinary(value as ArrayBuffer | ArrayBufferView, tag.slice(8, -1)));
    return this.refuse(`a ${tag.slice(8, -1)}`);
  }

  /** A dense copy of the entries `array` holds, each index read once (see the module comment). */
  copyArray(array: unknown[]): unknown[] {
    const out: unknown[] = [];
    this.copies.set(array, out);
    const length = this.read(() => Number(array.length));
    for (let index = 0; index < length; index++) {
      const entry = this.read(() => array[index], index);
      // Holes read as undefined: from the first one on, only the indices the array has are visited.
      if (entry === undefined && !this.read(() => Object.hasOwn(array, index), index)) {
        for (const held of this.read(() => ownIndices(array, length)).filter((i) => i > index)) out.push(this.child(held, this.read(() => array[held], held)));
        return out;
      }
      out.push(this.child(index, entry));
    }
    return out;
  }

  /** A plain object of the own enumerable string keys of `object`, each read once. */
  private copyObject(object: Record<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    this.copies.set(object, out);
    for (const key of this.read(() => Object.keys(object))) {
      const value = this.child(key, this.read(() => object[key], key));
      // An own `__proto__` key (JSON.parse makes one) stays a key, not the copy's prototype.
      if (key === '__proto__') Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
      else out[key] = value;
    }
    return out;
  }

  /** The copy of `value`, found at `key` below the current path. */
  private child(key: string | number, value: unknown): unknown {
    if (!this.deep || (typeof value !== 'object' && typeof value !== 'function' && typeof value !== 'symbol')) return value;
    this.path.push(key);
    try {
      return this.copy(value);
    } finally {
      this.path.pop();
    }
  }
}

/**
 * A byte-for-byte copy of an `ArrayBuffer`, typed array or `DataView` whose type is `type`, as
 * that standard type (a Node `Buffer`, tagged `Uint8Array`, becomes a `Uint8Array`).
 */
function copyBinary(value: ArrayBuffer | ArrayBufferView, type: string): ArrayBuffer | ArrayBufferView {
  if (type === 'ArrayBuffer') return ArrayBuffer.prototype.slice.call(value, 0);
  const view = value as ArrayBufferView;
  const bytes = ArrayBuffer.prototype.slice.call(view.buffer, view.byteOffset, view.byteOffset + view.byteLength);
  return new (globalThis as unknown as Record<string, new (buffer: ArrayBuffer) => ArrayBufferView>)[type]!(bytes);
}

/**
 * A private plain copy of the caller argument `value` named `name` (SPEC §10.4; the rules are in
 * the module comment).
 * @throws SessionReferenceError `code` (default `SESSION_REFERENCE_INVALID_ARGUMENT`) naming the
 * path, for a read that throws or a value that cannot be copied.
 */
export function copyCallerData(value: unknown, name: string, code: ErrorCodeInput = 'INVALID_ARGUMENT'): unknown {
  return new Copier([name], code).copy(value);
}

/**
 * The entries of the caller argument `value` named `name` when it is an array, each read once into
 * a new dense array (a hole is not an entry, as in {@link copyCallerData}), the entries themselves
 * as they are (not copied): for a list whose entries a function reads field by field
 * (`readCallerFields`). `undefined` when `value` is not an array.
 * @throws SessionReferenceError `code` naming the index whose read throws.
 */
export function readCallerArray(value: unknown, name: string, code: ErrorCodeInput = 'INVALID_ARGUMENT'): unknown[] | undefined {
  const copier = new Copier([name], code, false);
  return copier.read(() => Array.isArray(value)) ? copier.copyArray(value as unknown[]) : undefined;
}

/**
 * The fields `keys` of the caller argument `value` named `name`, each read once with an ordinary
 * property read (inherited getters answer too), values as they are (not copied): for arguments
 * that are not data — an agent, an options bag holding a signal — of which a function uses only
 * a few fields. A value that is not an object has none (`undefined` each).
 * @throws SessionReferenceError `code` naming the field whose read throws.
 */
export function readCallerFields<K extends string>(value: unknown, keys: readonly K[], name: string, code: ErrorCodeInput = 'INVALID_ARGUMENT'): Record<K, unknown> {
  const copier = new Copier([name], code);
  const fields = {} as Record<K, unknown>;
  if (typeof value !== 'object' && typeof value !== 'function') return fields;
  for (const key of keys) fields[key] = copier.read(() => (value as Record<K, unknown> | null)?.[key], key);
  return fields;
}

/**
 * The own enumerable string keys of the caller argument `value` named `name` and their values,
 * each read once, values as they are (not copied): an options bag whose unknown keys are refused
 * and whose values are then read as each needs (a signal stays the signal). `undefined` when
 * `value` is not an object.
 * @throws SessionReferenceError `code` naming the key whose read throws.
 */
export function readCallerOptions(value: unknown, name: string, code: ErrorCodeInput = 'INVALID_ARGUMENT'): Record<string, unknown> | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const copier = new Copier([name], code);
  const keys = copier.read(() => Object.keys(value));
  return Object.fromEntries(keys.map((key) => [key, copier.read(() => (value as Record<string, unknown>)[key], key)]));
}

/** The array indices below `length` among the own keys of `array`, ascending (a proxy's keys come in any order). */
export function ownIndices(array: readonly unknown[], length: number): number[] {
  const indices: number[] = [];
  for (const key of Object.getOwnPropertyNames(array)) {
    // Canonical array indices only: not "length", "-1", "1.5" or "01".
    const index = Number(key);
    if (index >>> 0 === index && index < length && String(index) === key) indices.push(index);
  }
  return indices.sort((a, b) => a - b);
}
