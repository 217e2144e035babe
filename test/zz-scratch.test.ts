import { it, expect } from 'vitest';
import { parseSessionLog, readSessionLog } from '../src/store/index.js';
import { concatBytes, decodeBase64 } from './fixtures/base64.js';
import { REAL_LOG_ZSTD_FRAMES } from './fixtures/zstd-fixtures.js';
import realLog from '../samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl?raw';
import { loadLibZstd } from '../src/store/libzstd.js';
it('works', async () => {
  const log = concatBytes(...REAL_LOG_ZSTD_FRAMES.map(decodeBase64));
  expect(parseSessionLog(log)).toEqual(parseSessionLog(realLog));
  expect(await readSessionLog(log)).toEqual(parseSessionLog(realLog));
  expect((await loadLibZstd()).kind).toBe('wasm');
});
