/**
 * Token counts for the page, computed in a worker (tokens.worker.ts) that is started only after
 * the first paint: the tokenizer is megabytes of vocabulary, and the page must be usable before it
 * arrives. Bytes stay the budget unit; tokens are shown beside them.
 */
import { useEffect, useRef, useState } from 'preact/hooks';

export type TokenizerState = 'waiting' | 'loading' | 'ready' | 'failed';

interface Reply {
  id?: number;
  ready?: boolean;
  counts?: number[];
  error?: string;
}

let worker: Worker | undefined;
let state: TokenizerState = 'waiting';
let failure: string | undefined;
const listeners = new Set<() => void>();
const pending = new Map<number, (reply: Reply) => void>();
let nextId = 0;

function setState(next: TokenizerState, message?: string) {
  state = next;
  failure = message;
  for (const listener of listeners) listener();
}

/** Starts the worker (once). Call it after the first paint. */
export function startTokenizer(): void {
  if (worker) return;
  setState('loading');
  worker = new Worker(new URL('./tokens.worker.ts', import.meta.url), { type: 'module' });
  worker.onmessage = (event: MessageEvent<Reply>) => {
    const reply = event.data;
    if (reply.ready) setState('ready');
    if (reply.id === undefined) return;
    pending.get(reply.id)?.(reply);
    pending.delete(reply.id);
  };
  worker.onerror = (event) => setState('failed', event.message || 'the tokenizer worker failed to load');
}

function count(texts: string[]): Promise<number[]> {
  return new Promise((resolve, reject) => {
    if (!worker) return reject(new Error('the tokenizer has not started'));
    const id = ++nextId;
    pending.set(id, (reply) => (reply.counts ? resolve(reply.counts) : reject(new Error(reply.error))));
    worker.postMessage({ id, texts });
  });
}

/** The tokenizer's state, re-rendering the caller when it changes. */
export function useTokenizerState(): { state: TokenizerState; failure?: string } {
  const [, redraw] = useState(0);
  useEffect(() => {
    const listener = () => redraw((n) => n + 1);
    listeners.add(listener);
    return () => void listeners.delete(listener);
  }, []);
  return failure === undefined ? { state } : { state, failure };
}

/**
 * Token counts of `texts` (one per text), or `undefined` while they are computed. The newest
 * texts win: an answer for older texts is dropped.
 */
export function useTokenCounts(texts: readonly string[] | undefined): number[] | undefined {
  const { state: tokenizer } = useTokenizerState();
  const [result, setResult] = useState<{ key: string; counts: number[] } | undefined>(undefined);
  const latest = useRef('');
  const key = texts ? JSON.stringify(texts) : '';
  useEffect(() => {
    latest.current = key;
    if (!texts || tokenizer !== 'ready') return;
    count([...texts]).then(
      (counts) => latest.current === key && setResult({ key, counts }),
      () => undefined,
    );
  }, [key, tokenizer]);
  return result && result.key === key ? result.counts : undefined;
}
