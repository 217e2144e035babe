/**
 * Counts DeepSeek V3 tokens off the main thread, so typing never waits for the tokenizer: the
 * page starts this worker after its first paint, and the tokenizer (a large module) loads here.
 * A message `{ id, texts }` is answered `{ id, counts }` (one count per text) or `{ id, error }`.
 */
import { countTokens } from './token-count.js';

self.onmessage = (event: MessageEvent<{ id: number; texts: string[] }>) => {
  const { id, texts } = event.data;
  try {
    postMessage({ id, counts: texts.map(countTokens) });
  } catch (error) {
    postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
};
postMessage({ ready: true });
