/**
 * The checked-in WebAssembly stripe loop (src/store/xxhash64-wasm.ts) is src/store/xxhash64.wat
 * compiled: the readable source and the bytes that run cannot drift apart.
 */
import { readFileSync } from 'node:fs';
import { expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without declarations
import { generatedSource } from '../scripts/make-xxh64-wasm.mjs';

it('src/store/xxhash64-wasm.ts is src/store/xxhash64.wat compiled by wabt', async () => {
  expect(readFileSync(new URL('../src/store/xxhash64-wasm.ts', import.meta.url), 'utf8')).toBe(await generatedSource());
});
