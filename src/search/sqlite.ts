/**
 * SQLite, the engine of search (SPEC §16.5): the official WebAssembly build
 * (`@sqlite.org/sqlite-wasm`), one instance per realm, loaded on the first search.
 *
 * Its module comes the one way every WebAssembly module of this library comes (`src/wasm.ts`):
 * the compiled module an app gave `provideSqliteWasm` (workerd, which compiles no WebAssembly
 * from bytes), else the module compiled from the bytes the chunk carries (`sqlite-wasm.ts`,
 * loaded only then). Either way sqlite's own loader is handed the module through its
 * `instantiateWasm` hook, so it never looks for its `.wasm` file: nothing to locate or fetch,
 * whatever bundler or install put the library where it is.
 * @module
 */
import sqlite3InitModule, { type Sqlite3Static } from '@sqlite.org/sqlite-wasm';
import { root } from './root.js';

export type { BindingSpec, Database, PreparedStatement, SqlValue, Sqlite3Static } from '@sqlite.org/sqlite-wasm';

/** Emscripten's module options that this loader passes (sqlite's typings declare none). */
interface InitOptions {
  instantiateWasm(imports: WebAssembly.Imports, receive: (instance: WebAssembly.Instance, compiled: WebAssembly.Module) => void): object;
  print(text: string): void;
  printErr(text: string): void;
}

const init = sqlite3InitModule as unknown as (options: InitOptions) => Promise<Sqlite3Static>;

let loading: Promise<Sqlite3Static> | undefined;

/**
 * SQLite, instantiated once per realm (later calls share the first; a failed load is tried again
 * by the next call).
 * @throws SessionReferenceError `SESSION_REFERENCE_INVALID_CONFIG` where WebAssembly cannot run: a
 * page whose Content-Security-Policy lacks `'wasm-unsafe-eval'`, workerd without
 * `provideSqliteWasm`, a realm without `WebAssembly`. It is the app's setup that must change (its
 * CSP, or providing the module), neither the caller's arguments nor the host's data, so neither
 * `INVALID_ARGUMENT` nor `READ_FAILED` fits; search has no engine without WebAssembly.
 */
export function loadSqlite(): Promise<Sqlite3Static> {
  loading ??= instantiate().catch((error: unknown) => {
    loading = undefined;
    throw error;
  });
  return loading;
}

async function instantiate(): Promise<Sqlite3Static> {
  let compiled: WebAssembly.Module;
  try {
    compiled = await root.compileWasm(root.sqliteWasm.provided, async () => (await import('./sqlite-wasm.js')).SQLITE_WASM_BASE64URL);
  } catch (error) {
    throw unavailable(error);
  }
  quietBootstrap();
  // sqlite's loader waits for `receive`: a failed instantiation rejects here instead, never hangs.
  return new Promise<Sqlite3Static>((resolve, reject) => {
    const fault = (error: unknown) => reject(unavailable(error));
    init({
      instantiateWasm(imports, receive) {
        const compiles = compilesAtRunTime();
        WebAssembly.instantiate(compiled, imports).then((instance) => receive(compiles ? instance : withoutJsCallbacks(instance), compiled), fault);
        return {};
      },
      // sqlite prints nothing a caller of this library could act on.
      print: () => {},
      printErr: () => {},
    }).then(resolve, fault);
  });
}

/**
 * Keeps sqlite's loader from warning on the console about what it cannot install here and this
 * library never uses (its OPFS file systems, outside a browser worker): sqlite's documented
 * bootstrap configuration, `globalThis.sqlite3ApiConfig`, which the loader reads once and deletes.
 * Left alone when the app set one of its own.
 */
function quietBootstrap(): void {
  const scope = globalThis as { sqlite3ApiConfig?: object };
  const quiet = () => {};
  scope.sqlite3ApiConfig ??= { debug: quiet, log: quiet, warn: quiet };
}

/** True where WebAssembly may be compiled at run time (not workerd): an empty module compiles. */
function compilesAtRunTime(): boolean {
  try {
    root.compileWasmSync(undefined, 'AGFzbQEAAAA');
    return true;
  } catch {
    return false;
  }
}

/**
 * `instance` with a function table that takes a JavaScript function as an empty entry, for
 * realms that compile no WebAssembly at run time (workerd). sqlite's loader puts a JavaScript
 * callback in the table by compiling a small module that wraps it; the one callback it installs
 * on load (the SQL trace of a database opened with flag `t`, which this library never opens) then
 * fails the whole load. With an empty entry instead, loading succeeds; no statement this library
 * runs calls back into JavaScript (test/search.test.ts runs every one of them in workerd).
 */
function withoutJsCallbacks(instance: WebAssembly.Instance): WebAssembly.Instance {
  const table = instance.exports.__indirect_function_table as WebAssembly.Table;
  const set = (index: number, value: unknown) => {
    try {
      table.set(index, value as never);
    } catch (error) {
      if (!(error instanceof TypeError)) throw error;
      table.set(index, null);
    }
  };
  const wrapped = new Proxy(table, {
    get(target, key) {
      if (key === 'set') return set;
      const value: unknown = Reflect.get(target, key);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { exports: { ...instance.exports, __indirect_function_table: wrapped } } as WebAssembly.Instance;
}

function unavailable(error: unknown) {
  const cause = error instanceof Error ? error.message : String(error);
  return root.fail(
    'INVALID_CONFIG',
    `search needs WebAssembly (SQLite's module) and it cannot run here: ${cause.slice(0, 200)}. ` +
      `A page's Content-Security-Policy must allow 'wasm-unsafe-eval'; in Cloudflare workerd call provideSqliteWasm() with the module of dsh-session-reference/sqlite3.wasm`,
    error,
  );
}
