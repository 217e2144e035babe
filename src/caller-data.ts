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
const BINARY = /^(?:ArrayBuffer|DataView|(?:Ui|I)nt(?:8|16|32)Array|Uint8ClampedArray|Float(?:16|32|64)Array|Big(?:Ui|I)nt64Array)$/;

/** Where a read is: the argument's name, then keys and indices. */
type Path = Array<string | number>;

/**
 * `message.content[2].text` for `['message', 'content', 2, 'text']`; odd keys as `["a b"]`. A path
 * longer than 120 code units keeps its first and last 60, joined by `…` (error messages stay short).
 */
function formatPath([name, ...keys]: Path): string {
  let out = String(name);
  for (const key of keys) out += typeof key === 'number' ? `[${key}]` : /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
  return out.length > 120 ? `${out.slice(0, 60)}…${out.slice(-60)}` : out;
}

/**
 * `step()`; what it throws (a getter, a revoked proxy) becomes `code` naming `path` (then `key`,
 * when given), the cause kept. The path is formatted only then: reads that succeed cost no string.
 */
function attempt<T>(step: () => T, path: Path, code: ErrorCodeInput, key?: string | number): T {
  try {
    return step();
  } catch (error) {
    throw isInstance(error) ? error : fail(code, `${formatPath(key === undefined ? path : [...path, key])} cannot be read: ${describeValue(error)}`, error);
  }
}

/**
 * The copy of `value` (see the module comment); with `deep` false, an array's entries are kept as
 * they are. One walk: `path` grows and shrinks as it goes down and back, `copies` maps each object
 * met to its copy.
 */
function copyData(value: unknown, name: string, code: ErrorCodeInput, deep: boolean): unknown {
  const copies = new Map<object, unknown>();
  const path: Path = [name];
  const read = <T>(step: () => T, key: string | number): T => attempt(step, path, code, key);
  const refuse = (what: string): never => {
    throw fail(code, `${formatPath(path)} is ${what}, not data that can be copied (SPEC §10.4)`);
  };
  /** The copy of `entry`, found at `key` below the current path. */
  const child = (key: string | number, entry: unknown): unknown => {
    if (!deep || (typeof entry !== 'object' && typeof entry !== 'function' && typeof entry !== 'symbol')) return entry;
    path.push(key);
    try {
      return copy(entry);
    } finally {
      path.pop();
    }
  };
  const copy = (source: unknown): unknown => {
    if (typeof source === 'function' || typeof source === 'symbol') refuse(`a ${typeof source}`);
    if (typeof source !== 'object' || source === null) return source;
    if (copies.has(source)) return copies.get(source);
    if (path.length > MAX_CALLER_DATA_DEPTH) refuse(`nested deeper than ${MAX_CALLER_DATA_DEPTH} levels`);
    const tag = attempt(() => (Array.isArray(source) ? 'Array' : isPlain(source) ? 'Object' : Object.prototype.toString.call(source).slice(8, -1)), path, code);
    if (tag === 'Array') {
      // The entries the array holds, each index read once: a dense walk until the first hole (a
      // hole reads as undefined), then only the indices the array has (SPEC §10.3).
      const array = source as unknown[];
      const out: unknown[] = [];
      copies.set(array, out);
      const length = read(() => Number(array.length), 'length');
      for (let index = 0; index < length; index++) {
        const entry = read(() => array[index], index);
        if (entry === undefined && !read(() => Object.hasOwn(array, index), index)) {
          for (const held of read(() => ownIndices(array, length), index)) if (held > index) out.push(child(held, read(() => array[held], held)));
          break;
        }
        out.push(child(index, entry));
      }
      return out;
    }
    if (tag === 'Object') {
      const object = source as Record<string, unknown>;
      const out: Record<string, unknown> = {};
      copies.set(object, out);
      for (const key of attempt(() => Object.keys(object), path, code)) {
        const entry = child(key, read(() => object[key], key));
        // An own `__proto__` key (JSON.parse makes one) stays a key, not the copy's prototype.
        if (key === '__proto__') Object.defineProperty(out, key, { value: entry, writable: true, enumerable: true, configurable: true });
        else out[key] = entry;
      }
      return out;
    }
    return BINARY.test(tag) ? attempt(() => copyBinary(source as ArrayBuffer | ArrayBufferView, tag), path, code) : refuse(`a ${tag}`);
  };
  return copy(value);
}

/** True for an object whose prototype is `Object.prototype` or `null`: the usual data, tagged `Object` without asking. */
function isPlain(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
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
  return copyData(value, name, code, true);
}

/**
 * The entries of the caller argument `value` named `name` when it is an array, each read once into
 * a new dense array (a hole is not an entry, as in {@link copyCallerData}), the entries themselves
 * as they are (not copied): for a list whose entries a function reads field by field
 * (`readCallerFields`). `undefined` when `value` is not an array.
 * @throws SessionReferenceError `code` naming the index whose read throws.
 */
export function readCallerArray(value: unknown, name: string, code: ErrorCodeInput = 'INVALID_ARGUMENT'): unknown[] | undefined {
  return attempt(() => Array.isArray(value), [name], code) ? (copyData(value, name, code, false) as unknown[]) : undefined;
}

/**
 * The fields `keys` of the caller argument `value` named `name`, each read once with an ordinary
 * property read (inherited getters answer too), values as they are (not copied): for arguments
 * that are not data — an agent, an options bag holding a signal — of which a function uses only
 * a few fields. A value that is not an object has none (`undefined` each).
 * @throws SessionReferenceError `code` naming the field whose read throws.
 */
export function readCallerFields<K extends string>(value: unknown, keys: readonly K[], name: string, code: ErrorCodeInput = 'INVALID_ARGUMENT'): Record<K, unknown> {
  const fields = {} as Record<K, unknown>;
  if (typeof value === 'object' || typeof value === 'function') {
    for (const key of keys) fields[key] = attempt(() => (value as Record<K, unknown> | null)?.[key], [name], code, key);
  }
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
  const keys = attempt(() => Object.keys(value), [name], code);
  return Object.fromEntries(keys.map((key) => [key, attempt(() => (value as Record<string, unknown>)[key], [name], code, key)]));
}

/**
 * `inspect()`, a look at the caller argument named `name` that is not data to copy — a source whose
 * type is told by its fields (a stream, an async iterable, bytes), an object whose methods are
 * called: what it throws (a revoked proxy, a throwing trap or getter) becomes `code` (default
 * `SESSION_REFERENCE_INVALID_ARGUMENT`) naming `name`, the cause kept; a `SessionReferenceError`
 * passes as it is.
 */
export function inspectCallerValue<T>(inspect: () => T, name: string, code: ErrorCodeInput = 'INVALID_ARGUMENT'): T {
  return attempt(inspect, [name], code);
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
