/**
 * The playground's search box (SPEC §16.6): sessions found by what was said in them, each hit with
 * its snippets (matched words in `<mark>`) and a Cite button. The index is kept in IndexedDB
 * between visits (SPEC §16.4).
 */
import { h } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import type { SessionReferenceMentionInput, SessionReferences, SessionSearchHit, SessionSearchSnippet, TargetAgent } from '../../src/index.js';
import { toErrorInfo, type ErrorInfo } from './sessions.js';

const html = htm.bind(h);

const DATABASE = 'dsh-session-reference-playground';
const STORE = 'search-index';
const KEY = 'index';
/** Hits shown at most. */
const HIT_LIMIT = 10;
/** Quiet time after a keystroke before searching, in milliseconds. */
const TYPING_PAUSE_MS = 150;

/** The playground's IndexedDB database (its one object store made on first use). */
function openDatabase(): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DATABASE, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

/** Runs one request of a transaction on the index store and resolves with its result. */
async function withStore<T>(mode: IDBTransactionMode, run: (store: IDBObjectStore) => IDBRequest<T>): Promise<T> {
  const database = await openDatabase();
  try {
    return await new Promise<T>((resolve, reject) => {
      const transaction = database.transaction(STORE, mode);
      const request = run(transaction.objectStore(STORE));
      transaction.oncomplete = () => resolve(request.result);
      transaction.onerror = () => reject(transaction.error);
      transaction.onabort = () => reject(transaction.error);
    });
  } finally {
    database.close();
  }
}

/**
 * The index saved by an earlier visit, or `undefined` when there is none or it cannot be read
 * (no IndexedDB, a private window, a value that is not bytes): the first search then builds it.
 * Damaged or foreign-version bytes are the library's to refuse (it rebuilds, SPEC §16.4).
 */
export async function loadSavedSearchIndex(): Promise<Uint8Array | undefined> {
  try {
    const value = await withStore<unknown>('readonly', (store) => store.get(KEY));
    return value instanceof Uint8Array ? value : undefined;
  } catch {
    return undefined;
  }
}

/** Saves the index for the next visit; a failed write is only logged (the next visit rebuilds). */
export async function saveSearchIndex(bytes: Uint8Array): Promise<void> {
  try {
    await withStore('readwrite', (store) => store.put(bytes, KEY));
  } catch (error) {
    console.warn('search index not saved in IndexedDB:', error);
  }
}

/**
 * The snippet's text as DOM nodes: text nodes, and a `<mark>` per highlight range (SPEC §16.2).
 * Snippets are untrusted text: they become text nodes only, never markup.
 */
export function snippetNodes(snippet: SessionSearchSnippet): Node[] {
  const nodes: Node[] = [];
  let at = 0;
  for (const [start, end] of snippet.highlights) {
    if (start < at || end <= start || end > snippet.text.length) continue;
    if (start > at) nodes.push(document.createTextNode(snippet.text.slice(at, start)));
    const mark = document.createElement('mark');
    mark.textContent = snippet.text.slice(start, end);
    nodes.push(mark);
    at = end;
  }
  if (at < snippet.text.length) nodes.push(document.createTextNode(snippet.text.slice(at)));
  return nodes;
}

function Snippet({ snippet }: { snippet: SessionSearchSnippet }) {
  const text = useRef<HTMLSpanElement>(null);
  useEffect(() => text.current?.replaceChildren(...snippetNodes(snippet)), [snippet]);
  return html`<p class="snippet" data-testid="snippet" data-role=${snippet.role}>
    <span class="badge">${snippet.role}</span> <span ref=${text}></span>
  </p>`;
}

/** What the search box shows: nothing typed, the hits of one query, or its error. */
type Result = { query: string; hits: SessionSearchHit[] } | { query: string; error: ErrorInfo };

/**
 * The search pane. Each query runs after a pause in typing, aborting the one before; after a
 * search the index is exported and handed to `onIndex` (the page keeps it for the next service and
 * in IndexedDB).
 */
export function SearchBox(props: {
  service: SessionReferences | undefined;
  agent: TargetAgent;
  onCite: (mention: SessionReferenceMentionInput) => void;
  onIndex: (bytes: Uint8Array) => void;
}) {
  const { service, agent } = props;
  const [query, setQuery] = useState('');
  const [result, setResult] = useState<Result | undefined>(undefined);
  const latest = useRef(props);
  latest.current = props;

  useEffect(() => {
    if (!service || query.trim() === '') {
      setResult(undefined);
      return;
    }
    const controller = new AbortController();
    const timer = setTimeout(async () => {
      try {
        const hits = await service.searchSessions(agent, query, { limit: HIT_LIMIT, signal: controller.signal });
        if (controller.signal.aborted) return;
        setResult({ query, hits });
        latest.current.onIndex(await service.exportSearchIndex());
      } catch (error) {
        if (!controller.signal.aborted) setResult({ query, error: toErrorInfo(error) });
      }
    }, TYPING_PAUSE_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [service, agent, query]);

  const state = result === undefined ? 'idle' : result.query === query ? 'ready' : 'stale';
  return html`<div class="search" data-testid="search" data-state=${state} data-query=${result?.query ?? ''}>
    <input
      type="search"
      data-testid="search-input"
      placeholder="Words said in a session (every word, by prefix; one typo allowed in long words)"
      value=${query}
      onInput=${(event: Event) => setQuery((event.currentTarget as HTMLInputElement).value)}
    />
    ${result && 'error' in result &&
    html`<div class="error" role="alert" data-testid="search-error" data-code=${result.error.code}>
      <code class="code">${result.error.code}</code><span class="message">${result.error.message}</span>
    </div>`}
    ${result && 'hits' in result &&
    (result.hits.length === 0
      ? html`<p class="muted" data-testid="search-empty">No session says that.</p>`
      : html`<ul class="search-hits">
          ${result.hits.map(
            (hit) => html`<li class="search-hit" data-testid="search-hit" data-session-id=${hit.sessionId} key=${hit.sessionId}>
              <div class="search-hit-head">
                <strong>${hit.label}</strong>
                <span class="muted">${hit.cwd ?? '(no cwd)'} · score ${hit.score.toFixed(2)}</span>
                <button class="small" data-testid="search-cite" title="Insert a mention of this session at the caret" onClick=${() => props.onCite({ sessionId: hit.sessionId, label: hit.label })}>Cite</button>
              </div>
              ${hit.snippets.map((snippet) => html`<${Snippet} snippet=${snippet} />`)}
            </li>`,
          )}
        </ul>`)}
  </div>`;
}
