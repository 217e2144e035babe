/**
 * The WebAssembly row scan's bytes (src/store/json-scan-wasm.ts) are what scripts/make-json-scan-wasm.mjs
 * assembles from its source, src/store/json-scan.wat, with wabt: reassembling gives the same file,
 * byte for byte. (That the module scans as src/store/json-scan.ts does: test/json-scan-wasm.test.ts.)
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a script without type declarations
import { moduleBytes, output } from '../scripts/make-json-scan-wasm.mjs';
import { JSON_SCAN_WASM_BASE64URL } from '../src/store/json-scan-wasm.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

describe('the row scan module, assembled from src/store/json-scan.wat (scripts/make-json-scan-wasm.mjs)', () => {
  it('src/store/json-scan-wasm.ts is what the script writes, byte for byte', async () => {
    expect(readFileSync(join(ROOT, 'src/store/json-scan-wasm.ts'), 'utf8')).toBe(await (output as () => Promise<string>)());
  });

  it('the module imports nothing and exports its memory, newline and scan', async () => {
    const bytes = await (moduleBytes as () => Promise<Buffer>)();
    expect(bytes.toString('base64url')).toBe(JSON_SCAN_WASM_BASE64URL);
    const module = new WebAssembly.Module(bytes);
    expect(WebAssembly.Module.imports(module)).toEqual([]);
    expect(WebAssembly.Module.exports(module)).toEqual([
      { name: 'memory', kind: 'memory' },
      { name: 'newline', kind: 'function' },
      { name: 'scan', kind: 'function' },
    ]);
  });
});
