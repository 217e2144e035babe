/**
 * Setup of the workerd test project: workerd refuses to compile WebAssembly from bytes, so, as a
 * Worker does (examples/edge-worker), the suite imports libzstd's module and SQLite's module (the
 * engine of search) as compiled modules and gives them to the library (SPEC §11.2, §16.5).
 */
import sqlite3 from '@sqlite.org/sqlite-wasm/sqlite3.wasm';
import libzstd from '../src/store/libzstd.wasm';
import { provideSqliteWasm } from '../src/index.js';
import { provideZstdWasm } from '../src/store/index.js';

provideZstdWasm(libzstd);
provideSqliteWasm(sqlite3);
