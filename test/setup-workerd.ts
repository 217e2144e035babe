/**
 * Setup of the workerd test project: workerd refuses to compile WebAssembly from bytes, so, as a
 * Worker does (examples/edge-worker), the suite imports libzstd's module as a compiled module and
 * gives it to the library (SPEC §11.2: libzstd in workerd through a module import).
 */
import libzstd from '../src/store/libzstd.wasm';
import { provideZstdWasm } from '../src/store/index.js';

provideZstdWasm(libzstd);
