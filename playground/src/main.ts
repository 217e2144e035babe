/**
 * dsh-session-reference playground (SPEC §13): type a request citing other sessions and see, live,
 * exactly what the model receives and how the byte budget shapes it.
 */
import { Component, h, render, type ComponentChildren } from 'preact';
import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import htm from 'htm';
import {
  cleanTitleLabel,
  DEFAULT_SESSION_REFERENCE_CONFIG,
  REFERENCE_WARNING,
  type SessionReferenceMentionInput,
  type SessionReferenceMetadataEntry,
  type TargetAgent,
} from '../../src/index.js';
import { Composer } from './composer.js';
import { compute, configFromFields, createService, utf8Length, type ConfigFields, type Outcome } from './engine.js';
import { historyText } from './history.js';
import { Replay } from './replay.js';
import { loadSavedSearchIndex, saveSearchIndex, SearchBox } from './search.js';
import { startTokenizer, useTokenCounts, useTokenizerState } from './tokens.js';
import {
  buildStore,
  entriesFromFiles,
  loadSamples,
  mergeEntries,
  newSessionEntry,
  REAL_LOG_ID,
  reparse,
  titleOf,
  toErrorInfo,
  type ErrorInfo,
  type SessionEntry,
} from './sessions.js';
import './style.css';

const html = htm.bind(h);

const DRAFT = '__draft__';
const DRAFT_ID = 'playground-draft-session';
const INITIAL_TEXT = 'Pick up where we left off: ';

const numberFormat = new Intl.NumberFormat('en-US');
const fmt = (value: number) => numberFormat.format(value);

function ErrorLine({ error, testid = 'error' }: { error: ErrorInfo; testid?: string }) {
  return html`<div class="error" role="alert" data-testid=${testid} data-code=${error.code}>
    <code class="code">${error.code}</code><span class="message">${error.message}</span>
  </div>`;
}

/** Never a blank page: a render failure shows its code and message, with a way back. */
class ErrorBoundary extends Component<{ children?: ComponentChildren }, { error?: ErrorInfo }> {
  override state: { error?: ErrorInfo } = {};
  static override getDerivedStateFromError(error: unknown) {
    return { error: toErrorInfo(error) };
  }
  override render() {
    if (this.state.error) {
      return html`<main class="page">
        <h1>dsh-session-reference playground</h1>
        <${ErrorLine} error=${this.state.error} />
        <button onClick=${() => this.setState({ error: undefined })}>Try again</button>
      </main>`;
    }
    return this.props.children;
  }
}

function Bar({ used, budget }: { used: number; budget: number }) {
  const ratio = budget > 0 ? Math.min(1, used / budget) : 0;
  const level = ratio > 0.98 ? 'full' : ratio > 0.8 ? 'high' : 'ok';
  return html`<div class="bar" role="meter" aria-valuemin="0" aria-valuemax=${budget} aria-valuenow=${used} title=${`${fmt(used)} of ${fmt(budget)} bytes`}>
    <div class=${`bar-fill bar-${level}`} style=${{ width: `${(ratio * 100).toFixed(2)}%` }}></div>
  </div>`;
}

function ReferenceCard({ entry }: { entry: SessionReferenceMetadataEntry }) {
  const pct = entry.budgetBytes > 0 ? (100 * entry.serializedBytes) / entry.budgetBytes : 0;
  return html`<li class="reference" data-testid="reference" data-session-id=${entry.sessionId}>
    <div class="reference-head">
      <strong>${entry.label}</strong>
      ${entry.truncated
        ? html`<span class="badge badge-truncated" data-testid="truncated">truncated</span>`
        : html`<span class="badge badge-whole">whole</span>`}
      ${entry.compacted && html`<span class="badge badge-compacted">compacted</span>`}
    </div>
    <code class="muted">${entry.sessionId}</code>
    <${Bar} used=${entry.serializedBytes} budget=${entry.budgetBytes} />
    <div class="bar-caption"><strong>${fmt(entry.serializedBytes)}</strong> of ${fmt(entry.budgetBytes)} bytes (${pct.toFixed(1)}%)</div>
    <dl class="stats">
      <dt>messages kept</dt><dd data-testid="retained">${fmt(entry.retainedMessages)} of ${fmt(entry.originalMessages)}</dd>
      <dt>messages omitted</dt><dd data-testid="omitted-messages">${fmt(entry.omittedMessages)}</dd>
      <dt>bytes omitted</dt><dd data-testid="omitted-bytes">${fmt(entry.omittedBytes)}</dd>
      <dt>captured through seq</dt><dd>${entry.capturedThroughSeq ?? 'null'}</dd>
    </dl>
  </li>`;
}

function CopyButton({ text, testid }: { text: string | undefined; testid: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  async function copy() {
    if (text === undefined) return;
    try {
      if (navigator.clipboard && window.isSecureContext) await navigator.clipboard.writeText(text);
      else legacyCopy(text);
      setState('copied');
    } catch {
      try {
        legacyCopy(text);
        setState('copied');
      } catch {
        setState('failed');
      }
    }
    setTimeout(() => setState('idle'), 1500);
  }
  return html`<button class="small" data-testid=${testid} disabled=${text === undefined} onClick=${copy}>
    ${state === 'copied' ? 'Copied ✓' : state === 'failed' ? 'Copy failed' : 'Copy'}
  </button>`;
}

function legacyCopy(text: string) {
  const area = document.createElement('textarea');
  area.value = text;
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  const ok = document.execCommand('copy');
  area.remove();
  if (!ok) throw new Error('copy refused');
}

function Pane(props: { title: string; aside?: unknown; children?: ComponentChildren; class?: string }) {
  return html`<section class=${`pane ${props.class ?? ''}`}>
    <header class="pane-head"><h2>${props.title}</h2><div class="pane-aside">${props.aside}</div></header>
    ${props.children}
  </section>`;
}

function SessionRow(props: {
  entry: SessionEntry;
  problem: ErrorInfo | undefined;
  isTarget: boolean;
  onEdit: (text: string) => void;
  onRemove: () => void;
  onCite: () => void;
  onTarget: () => void;
}) {
  const { entry, problem } = props;
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState(entry.text);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => setDraft(entry.text), [entry.text]);
  const header = entry.log?.header;
  const title = entry.log ? titleOf(entry.log) : undefined;
  function edit(text: string) {
    setDraft(text);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => props.onEdit(text), 200);
  }
  return html`<li class=${`session ${problem ? 'session-bad' : ''}`} data-testid="session" data-session-id=${header?.id}>
    <div class="session-main">
      <div class="session-title">
        <strong>${title ?? header?.id ?? '(unparsed log)'}</strong>
        ${header?.id === REAL_LOG_ID && html`<span class="badge badge-real">real dsh log</span>`}
        ${entry.compressed && html`<span class="badge">zstd</span>`}
        ${entry.origin === 'file' && html`<span class="badge badge-file">dropped</span>`}
        ${props.isTarget && html`<span class="badge badge-target">target</span>`}
      </div>
      <div class="session-meta">
        ${header && html`<code>${header.id}</code>`}
        ${header && html`<span class="cwd">${typeof header.cwd === 'string' && header.cwd !== '' ? header.cwd : '(no cwd)'}</span>`}
        ${entry.log && html`<span>${fmt(entry.log.events.length)} events</span>`}
        <span class="muted">${entry.path}${entry.byteLength ? ` · ${fmt(entry.byteLength)} B` : ''}</span>
      </div>
      ${problem && html`<${ErrorLine} error=${problem} testid="session-error" />`}
    </div>
    <div class="session-actions">
      <button class="small" disabled=${!header || !!problem || props.isTarget} onClick=${props.onCite} title="Insert a mention of this session at the caret">Cite</button>
      <button class="small" disabled=${!header || !!problem} onClick=${props.onTarget} title="Prepare the message as if sent from this session">Target</button>
      <button class="small" aria-expanded=${open} onClick=${() => setOpen(!open)}>${open ? 'Close editor' : 'Edit'}</button>
      <button class="small danger" onClick=${props.onRemove} title="Remove from the store">✕</button>
    </div>
    ${open &&
    html`<div class="session-editor">
      <p class="muted">JSON Lines: the header line, then one event per line. Re-parsed as you type${entry.compressed ? ' (decoded from zstd frames)' : ''}.</p>
      <textarea data-testid="session-editor" spellcheck=${false} value=${draft} onInput=${(event: Event) => edit((event.currentTarget as HTMLTextAreaElement).value)}></textarea>
    </div>`}
  </li>`;
}

/** The replay of a pasted message, or the JSON error. */
function PastedReplay({ json }: { json: string }) {
  let message: unknown;
  try {
    message = JSON.parse(json);
  } catch (error) {
    return html`<${ErrorLine} error=${{ code: 'INVALID_JSON', message: toErrorInfo(error).message }} testid="replay-input-error" />`;
  }
  return html`<${Replay} message=${message} testid="replay-external" />`;
}

function TokenCell({ count, testid }: { count: number | undefined; testid: string }) {
  return html`<td class="num" data-testid=${testid} data-count=${count ?? ''}>${count === undefined ? '…' : fmt(count)}</td>`;
}

/**
 * Token counts (DeepSeek V3 tokenizer, loaded after the first paint) beside the bytes, and the
 * KV-cache view: the composed message is appended after the target's history and changes nothing
 * before it, so the history is the cacheable prefix and the message the only new suffix.
 */
function TokenPane({ outcome, history, hasTarget }: { outcome: Outcome | undefined; history: string; hasTarget: boolean }) {
  const { state, failure } = useTokenizerState();
  const referenceTexts = outcome?.referenceTexts ?? [];
  const composed = outcome?.composedText;
  const counts = useTokenCounts(composed === undefined ? undefined : [REFERENCE_WARNING, composed, history, ...referenceTexts]);
  const [warning, message, prefix, ...perReference] = counts ?? [];
  const references = outcome?.metadata?.references ?? [];
  const total = (prefix ?? 0) + (message ?? 0);
  const share = (part: number | undefined) => (counts && total > 0 ? `${((100 * (part ?? 0)) / total).toFixed(2)}%` : '0%');
  return html`<${Pane}
    title="Tokens"
    aside=${html`<span class="muted" data-testid="tokenizer-state" data-state=${state}>${
      state === 'ready' ? 'DeepSeek V3 tokenizer' : state === 'failed' ? `tokenizer failed: ${failure}` : 'loading the DeepSeek V3 tokenizer…'
    }</span>`}
  >
    <p class="muted small">Bytes are the budget unit (<code>maxReferenceBytes</code>); tokens are what the model is billed and cached by. Counted without special tokens or chat template.</p>
    ${composed === undefined
      ? html`<p class="muted">Nothing composed.</p>`
      : html`<table class="tokens" data-testid="tokens">
          <thead><tr><th>part</th><th class="num">bytes</th><th class="num">tokens</th></tr></thead>
          <tbody>
            ${outcome?.block !== undefined &&
            html`<tr><td>warning (<code>REFERENCE_WARNING</code>)</td><td class="num">${fmt(utf8Length(REFERENCE_WARNING))}</td><${TokenCell} count=${warning} testid="tokens-warning" /></tr>`}
            ${referenceTexts.map(
              (text, index) =>
                html`<tr data-testid="tokens-reference-row" data-session-id=${references[index]?.sessionId}>
                  <td>reference <strong>${references[index]?.label}</strong></td>
                  <td class="num">${fmt(utf8Length(text))}</td>
                  <${TokenCell} count=${perReference[index]} testid="tokens-reference" />
                </tr>`,
            )}
            <tr class="total"><td>whole composed message</td><td class="num">${fmt(utf8Length(composed))}</td><${TokenCell} count=${message} testid="tokens-message" /></tr>
          </tbody>
        </table>
        <h3 class="subhead">KV cache</h3>
        <div class="kv" data-testid="kv">
          <div class="kv-bar" role="img" aria-label="cacheable prefix and new suffix">
            <div class="kv-prefix" style=${{ width: share(prefix) }}></div>
            <div class="kv-suffix" style=${{ width: share(message) }}></div>
          </div>
          <dl class="stats">
            <dt>cacheable prefix: the target's history ${hasTarget ? '' : '(a new session: empty)'}</dt>
            <dd data-testid="kv-prefix" data-count=${prefix ?? ''}>${prefix === undefined ? '…' : `${fmt(prefix)} tokens`}</dd>
            <dt>new suffix: the composed message</dt>
            <dd data-testid="kv-suffix" data-count=${message ?? ''}>${message === undefined ? '…' : `${fmt(message)} tokens`}</dd>
          </dl>
          <p class="muted small">The composed message is appended after the target session's history and changes nothing before it: a host's prompt cache keeps the whole prefix, and only the suffix is new.</p>
        </div>`}
  <//>`;
}

function App() {
  const [entries, setEntries] = useState<SessionEntry[]>([]);
  const [loadState, setLoadState] = useState<'loading' | 'ready'>('loading');
  const [notice, setNotice] = useState<string | undefined>(undefined);
  const [text, setText] = useState(INITIAL_TEXT);
  const [fields, setFields] = useState<ConfigFields>({
    maxReferences: String(DEFAULT_SESSION_REFERENCE_CONFIG.maxReferences),
    maxReferenceBytes: String(DEFAULT_SESSION_REFERENCE_CONFIG.maxReferenceBytes),
    candidateLimit: String(DEFAULT_SESSION_REFERENCE_CONFIG.candidateLimit),
    // On here, unlike the library default: people type title words after `@` (SPEC §6.7).
    matchTitles: true,
  });
  const [target, setTarget] = useState<string>(DRAFT);
  const [draftCwd, setDraftCwd] = useState('');
  const [outcome, setOutcome] = useState<Outcome | undefined>(undefined);
  const [busy, setBusy] = useState(false);
  const [dragging, setDragging] = useState(false);
  const [showJson, setShowJson] = useState(false);
  const [replayInput, setReplayInput] = useState('');
  const [insertRequest, setInsertRequest] = useState<{ mention: SessionReferenceMentionInput; nonce: number } | undefined>(undefined);

  /**
   * The newest search index (SPEC §16.4): the one saved in IndexedDB by an earlier visit, then each
   * one exported after a search. A service made after a store or config change starts from it.
   */
  const searchIndex = useRef<Uint8Array | undefined>(undefined);
  const keepSearchIndex = useCallback((bytes: Uint8Array) => {
    searchIndex.current = bytes;
    void saveSearchIndex(bytes);
  }, []);

  const loadDefaults = useCallback(async () => {
    setLoadState('loading');
    const [loaded, saved] = await Promise.all([loadSamples(), searchIndex.current ? undefined : loadSavedSearchIndex()]);
    searchIndex.current ??= saved;
    setEntries(loaded);
    const real = loaded.find((entry) => entry.log?.header.id === REAL_LOG_ID)?.log?.header.cwd;
    setDraftCwd((cwd) => cwd || (typeof real === 'string' ? real : ''));
    setLoadState('ready');
  }, []);
  useEffect(() => void loadDefaults(), [loadDefaults]);
  // The tokenizer is large: it starts loading (in a worker) only once the page has painted.
  useEffect(() => {
    const frame = requestAnimationFrame(() => setTimeout(startTokenizer, 0));
    return () => cancelAnimationFrame(frame);
  }, []);

  const store = useMemo(() => buildStore(entries), [entries]);
  const config = useMemo(() => configFromFields(fields), [fields]);
  const { service, error: serviceError } = useMemo(() => createService(store.query, { ...config, searchIndex: searchIndex.current }), [store, config]);

  const validSessions = entries.filter((entry) => entry.log && !store.problems.has(entry.key));
  const knownIds = useMemo(() => new Set(validSessions.map((entry) => entry.log!.header.id)), [store]);
  const targetEntry = validSessions.find((entry) => entry.log!.header.id === target);
  useEffect(() => {
    if (target !== DRAFT && !targetEntry && loadState === 'ready') setTarget(DRAFT);
  }, [target, targetEntry, loadState]);
  const targetCwd = targetEntry ? targetEntry.log!.header.cwd : draftCwd;
  const agent = useMemo<TargetAgent>(
    () => ({ id: targetEntry ? targetEntry.log!.header.id : DRAFT_ID, cwd: typeof targetCwd === 'string' ? targetCwd : undefined }),
    [targetEntry?.log?.header.id, targetCwd],
  );

  // Live panes: recomputed on every change, the newest run wins and older ones are aborted.
  useEffect(() => {
    if (loadState !== 'ready') return;
    if (!service) {
      setOutcome({ error: serviceError, ms: 0 });
      return;
    }
    const controller = new AbortController();
    const slow = setTimeout(() => setBusy(true), 120);
    compute(service, agent, text, controller.signal).then((result) => {
      if (controller.signal.aborted) return;
      clearTimeout(slow);
      setBusy(false);
      setOutcome(result);
    });
    return () => {
      clearTimeout(slow);
      controller.abort();
    };
  }, [service, serviceError, agent, text, loadState]);

  async function addFiles(all: File[]) {
    // A `.json` file is a message to replay; anything else is a session log.
    const message = all.find((file) => file.name.endsWith('.json'));
    if (message) setReplayInput(await message.text());
    const files = all.filter((file) => file !== message);
    if (files.length === 0) return;
    const added = await entriesFromFiles(files);
    setEntries((current) => mergeEntries(current, added));
    const names = added.map((entry) => `${entry.path}${entry.error ? ` (${entry.error.code})` : entry.log ? ` → ${entry.log.header.id}` : ''}`);
    setNotice(`Added ${names.join(', ')}`);
  }

  // Drop files anywhere on the page.
  useEffect(() => {
    let depth = 0;
    const hasFiles = (event: DragEvent) => Array.from(event.dataTransfer?.types ?? []).includes('Files');
    const onEnter = (event: DragEvent) => {
      if (!hasFiles(event)) return;
      depth += 1;
      setDragging(true);
    };
    const onLeave = () => {
      depth = Math.max(0, depth - 1);
      if (depth === 0) setDragging(false);
    };
    const onOver = (event: DragEvent) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      if (event.dataTransfer) event.dataTransfer.dropEffect = 'copy';
    };
    const onDrop = (event: DragEvent) => {
      const files = Array.from(event.dataTransfer?.files ?? []);
      if (files.length === 0) return;
      event.preventDefault();
      depth = 0;
      setDragging(false);
      void addFiles(files);
    };
    window.addEventListener('dragenter', onEnter);
    window.addEventListener('dragleave', onLeave);
    window.addEventListener('dragover', onOver);
    window.addEventListener('drop', onDrop);
    return () => {
      window.removeEventListener('dragenter', onEnter);
      window.removeEventListener('dragleave', onLeave);
      window.removeEventListener('dragover', onOver);
      window.removeEventListener('drop', onDrop);
    };
  }, []);

  const setField = (key: Exclude<keyof ConfigFields, 'matchTitles'>) => (event: Event) => {
    const value = (event.currentTarget as HTMLInputElement).value;
    setFields((current) => ({ ...current, [key]: value }));
  };

  const references = outcome?.metadata?.references ?? [];
  const history = useMemo(() => (targetEntry?.log ? historyText(targetEntry.log) : ''), [targetEntry?.log]);
  const budget = Number(fields.maxReferenceBytes);

  // The store and the output panes only re-render when what they show changes, not on every keystroke.
  const storePane = useMemo(
    () => html`
        <${Pane}
          title="3 · Session store"
          class="store"
          aside=${html`<span class="muted">fake sessionQuery = createMemorySessionQuery(logs)</span>`}
        >
          <div class=${`dropzone ${dragging ? 'dropzone-active' : ''}`} data-testid="dropzone">
            <span>Drop dsh session files here (<code>session.jsonl</code>, <code>session.v3.jsonl</code>, <code>session.jsonl.zstd</code>) or</span>
            <label class="button small">
              pick files…
              <input type="file" multiple data-testid="file-input" accept=".jsonl,.zstd,application/zstd,application/jsonl" onChange=${(event: Event) => {
                const input = event.currentTarget as HTMLInputElement;
                void addFiles(Array.from(input.files ?? [])).finally(() => (input.value = ''));
              }} />
            </label>
          </div>
          <div class="row store-actions">
            <button class="small" onClick=${() => setEntries((current) => [...current, newSessionEntry(typeof targetCwd === 'string' ? targetCwd : '')])}>New session</button>
            <button class="small" onClick=${() => {
              setNotice(undefined);
              void loadDefaults();
            }}>Reset to samples</button>
            <button class="small danger" data-testid="clear-sessions" onClick=${() => {
              setEntries([]);
              setNotice('The store is empty: drop or pick session files.');
            }}>Remove all</button>
          </div>
          ${notice && html`<p class="notice" data-testid="notice">${notice}</p>`}
          ${store.error && html`<${ErrorLine} error=${store.error} testid="store-error" />`}
          <ul class="sessions">
            ${entries.map(
              (entry) => html`<${SessionRow}
                key=${entry.key}
                entry=${entry}
                problem=${store.problems.get(entry.key)}
                isTarget=${!!entry.log && entry.log.header.id === agent.id}
                onEdit=${(value: string) => setEntries((current) => current.map((other) => (other.key === entry.key ? reparse(other, value) : other)))}
                onRemove=${() => setEntries((current) => current.filter((other) => other.key !== entry.key))}
                onTarget=${() => entry.log && setTarget(entry.log.header.id)}
                onCite=${() => {
                  const log = entry.log;
                  if (!log) return;
                  setInsertRequest({ mention: { sessionId: log.header.id, label: cleanTitleLabel(titleOf(log) ?? '') || log.header.id }, nonce: Date.now() });
                }}
              />`,
            )}
          </ul>
        <//>
    `,
    [entries, store, agent.id, targetCwd, dragging, notice],
  );
  const outputs = useMemo(
    () => html`
        ${outcome?.error && html`<${ErrorLine} error=${outcome.error} />`}
        <${Pane}
          title="References"
          aside=${html`<span class="muted">${busy ? 'updating…' : outcome ? `${outcome.ms.toFixed(1)} ms` : ''}</span>`}
        >
          ${references.length === 0
            ? html`<p class="muted">${outcome?.error ? 'Nothing prepared: see the error.' : 'No session cited: the message goes to the model unchanged.'}</p>`
            : html`<ul class="references">${references.map((entry) => html`<${ReferenceCard} key=${entry.sessionId} entry=${entry} />`)}</ul>`}
        <//>
        <div class="side-by-side">
          <${Pane}
            title="Model view"
            aside=${html`<span class="muted">${outcome?.composedText !== undefined ? `${fmt(utf8Length(outcome.composedText))} B` : ''}</span>
              <label class="toggle"><input type="checkbox" checked=${showJson} onChange=${() => setShowJson(!showJson)} /> as JSON</label>
              <${CopyButton} testid="copy" text=${outcome?.composedText} />`}
          >
            <p class="muted small">The composed message: exactly what the model receives.</p>
            <pre class="output" data-testid="composed">${showJson ? (outcome?.composed ? JSON.stringify(outcome.composed, null, 2) : '') : (outcome?.composedText ?? '')}</pre>
          <//>
          <${Pane} title="Replay view" aside=${html`<span class="muted">describeReferencedMessage</span>`}>
            <p class="muted small">The same message as a chat UI shows it once sent: the person's text, then its sources.</p>
            ${outcome?.composed ? html`<${Replay} message=${outcome.composed} />` : html`<p class="muted">Nothing composed.</p>`}
          <//>
        </div>
        <${TokenPane} outcome=${outcome} history=${history} hasTarget=${!!targetEntry} />
        <${Pane}
          title="Serialized <referenced-sessions> block"
          aside=${html`<span class="muted">${outcome?.block !== undefined ? `${fmt(utf8Length(outcome.block))} B` : ''}</span>`}
        >
          <pre class="output" data-testid="block">${outcome?.block ?? ''}</pre>
        <//>
        <${Pane} title="HookContext metadata" aside=${html`<span class="muted">context.metadata</span>`}>
          <pre class="output" data-testid="metadata">${outcome?.metadata ? JSON.stringify(outcome.metadata, null, 2) : ''}</pre>
        <//>
    `,
    [outcome, busy, showJson, history, !!targetEntry],
  );

  return html`<main class="page">
    <header class="top">
      <div>
        <h1>dsh-session-reference <span class="muted">playground</span></h1>
        <p class="lede">
          Cite other dsh sessions in a request and see <strong>exactly</strong> what the model receives:
          type <kbd>@</kbd> in the composer to pick a session, then tune the budgets and watch the <code>${'<referenced-sessions>'}</code> block change.
          Drop real <code>session.jsonl.zstd</code> or <code>session.v3.jsonl</code> files anywhere on the page to cite them.
          Everything runs in this page: nothing is sent anywhere.
        </p>
      </div>
      <div class="status" data-testid="status" data-state=${loadState}>
        ${loadState === 'loading' ? 'loading sample sessions…' : `${validSessions.length} sessions in the store`}
      </div>
    </header>

    <div class="columns">
      <div class="column">
        <${Pane} title="1 · Compose" aside=${html`<span class="muted">${fmt(utf8Length(text))} B typed</span>`}>
          <div class="row">
            <label class="field grow">
              <span>Target session <span class="muted">(the session you are typing in: it is never a candidate; its cwd ranks candidates)</span></span>
              <select data-testid="target" value=${targetEntry ? target : DRAFT} onChange=${(event: Event) => setTarget((event.currentTarget as HTMLSelectElement).value)}>
                <option value=${DRAFT}>New session (not in the store)</option>
                ${validSessions.map((entry) => {
                  const header = entry.log!.header;
                  const title = titleOf(entry.log!);
                  return html`<option value=${header.id}>${title ? `${title} — ` : ''}${header.id}</option>`;
                })}
              </select>
            </label>
            <label class="field grow">
              <span>Target cwd</span>
              <input
                data-testid="target-cwd"
                value=${typeof targetCwd === 'string' ? targetCwd : ''}
                disabled=${!!targetEntry}
                placeholder="(none)"
                onInput=${(event: Event) => setDraftCwd((event.currentTarget as HTMLInputElement).value)}
              />
            </label>
          </div>
          <${Composer} text=${text} onText=${setText} service=${service} serviceError=${serviceError} agent=${agent} knownIds=${knownIds} insertRequest=${insertRequest} />
        <//>

        <${Pane} title="Search sessions" aside=${html`<span class="muted">searchSessions(agent, query)</span>`}>
          <p class="muted small">Find a session by what its people and assistant said; Cite inserts its mention at the caret. The index is kept in this browser (IndexedDB).</p>
          <${SearchBox}
            service=${service}
            agent=${agent}
            onIndex=${keepSearchIndex}
            onCite=${(mention: SessionReferenceMentionInput) => setInsertRequest({ mention, nonce: Date.now() })}
          />
        <//>

        <${Pane} title="2 · Budgets" aside=${html`<span class="muted">createSessionReferences({ config })</span>`}>
          <div class="row">
            <label class="field">
              <span>maxReferences <span class="muted">(1–3)</span></span>
              <input type="number" min="1" max="3" step="1" data-testid="max-references" value=${fields.maxReferences} onInput=${setField('maxReferences')} />
            </label>
            <label class="field">
              <span>maxReferenceBytes</span>
              <input type="number" min="1" step="256" data-testid="max-reference-bytes" value=${fields.maxReferenceBytes} onInput=${setField('maxReferenceBytes')} />
            </label>
            <label class="field">
              <span>candidateLimit</span>
              <input type="number" min="1" step="1" data-testid="candidate-limit" value=${fields.candidateLimit} onInput=${setField('candidateLimit')} />
            </label>
            <label class="field" title="A non-empty @ query also matches session titles (SPEC §6.7)">
              <span>matchTitles</span>
              <input
                type="checkbox"
                data-testid="match-titles"
                checked=${fields.matchTitles}
                onChange=${(event: Event) => {
                  const checked = (event.currentTarget as HTMLInputElement).checked;
                  setFields((current) => ({ ...current, matchTitles: checked }));
                }}
              />
            </label>
          </div>
          <label class="field">
            <span>maxReferenceBytes slider <span class="muted">(256 B … 128 KiB, logarithmic)</span></span>
            <input
              type="range"
              min="8"
              max="17"
              step="0.05"
              data-testid="max-reference-bytes-slider"
              value=${Number.isFinite(budget) && budget > 0 ? Math.log2(budget) : 16}
              onInput=${(event: Event) => {
                const exponent = Number((event.currentTarget as HTMLInputElement).value);
                setFields((current) => ({ ...current, maxReferenceBytes: String(Math.round(2 ** exponent)) }));
              }}
            />
          </label>
          <p class="muted small">Empty fields use the library defaults. Invalid values show the library's own error.</p>
        <//>

        ${storePane}
      </div>

      <div class="column">
        ${outputs}
        <${Pane} title="Replay another message" class="replay-other-pane" aside=${html`<span class="muted">a composed message or a dsh recall message, as JSON</span>`}>
          <p class="muted small">Paste a message here (or drop a <code>.json</code> file anywhere on the page) to see it as a chat UI would.</p>
          <textarea data-testid="replay-input" class="replay-input" rows="4" spellcheck=${false} placeholder='{"role":"user","content":[…],"envelope":{…}}' value=${replayInput} onInput=${(event: Event) => setReplayInput((event.currentTarget as HTMLTextAreaElement).value)}></textarea>
          ${replayInput.trim() !== '' && html`<${PastedReplay} json=${replayInput} />`}
        <//>
      </div>
    </div>
    ${dragging && html`<div class="drop-overlay">Drop dsh session files to add them to the store</div>`}
  </main>`;
}

function mount() {
  const root = document.getElementById('app')!;
  root.textContent = '';
  render(html`<${ErrorBoundary}><${App} /><//>`, root);
}

// Errors outside rendering (e.g. in an event handler) are shown, never swallowed into a blank page.
function showUnexpected(error: unknown) {
  let banner = document.getElementById('unexpected-error');
  if (!banner) {
    banner = document.createElement('div');
    banner.id = 'unexpected-error';
    banner.className = 'error floating';
    banner.setAttribute('role', 'alert');
    document.body.appendChild(banner);
  }
  const info = toErrorInfo(error);
  banner.textContent = `${info.code}: ${info.message}`;
}
window.addEventListener('error', (event) => showUnexpected(event.error ?? event.message));
window.addEventListener('unhandledrejection', (event) => showUnexpected(event.reason));

mount();
