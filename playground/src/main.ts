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
  formatSessionReferenceMention,
  type SessionReferenceMetadataEntry,
  type TargetAgent,
} from '../../src/index.js';
import { Composer } from './composer.js';
import { compute, configFromFields, createService, utf8Length, type ConfigFields, type Outcome } from './engine.js';
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
  const [insertRequest, setInsertRequest] = useState<{ text: string; nonce: number } | undefined>(undefined);

  const loadDefaults = useCallback(async () => {
    setLoadState('loading');
    const loaded = await loadSamples();
    setEntries(loaded);
    const real = loaded.find((entry) => entry.log?.header.id === REAL_LOG_ID)?.log?.header.cwd;
    setDraftCwd((cwd) => cwd || (typeof real === 'string' ? real : ''));
    setLoadState('ready');
  }, []);
  useEffect(() => void loadDefaults(), [loadDefaults]);

  const store = useMemo(() => buildStore(entries), [entries]);
  const config = useMemo(() => configFromFields(fields), [fields]);
  const { service, error: serviceError } = useMemo(() => createService(store.query, config), [store, config]);

  const validSessions = entries.filter((entry) => entry.log && !store.problems.has(entry.key));
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
      setOutcome({ scan: { text, tokens: [] }, error: serviceError, ms: 0 });
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

  async function addFiles(files: File[]) {
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
  const scanTokens = outcome?.scan.tokens ?? [];
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
                  const mention = formatSessionReferenceMention({ sessionId: log.header.id, label: cleanTitleLabel(titleOf(log) ?? '') || log.header.id });
                  setInsertRequest({ text: mention, nonce: Date.now() });
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
        <${Pane}
          title="Serialized <referenced-sessions> block"
          aside=${html`<span class="muted">${outcome?.block !== undefined ? `${fmt(utf8Length(outcome.block))} B` : ''}</span>`}
        >
          <pre class="output" data-testid="block">${outcome?.block ?? ''}</pre>
        <//>
        <${Pane}
          title="Composed message (what the model receives)"
          aside=${html`<span class="muted">${outcome?.composedText !== undefined ? `${fmt(utf8Length(outcome.composedText))} B` : ''}</span>
            <label class="toggle"><input type="checkbox" checked=${showJson} onChange=${() => setShowJson(!showJson)} /> as JSON</label>
            <${CopyButton} testid="copy" text=${outcome?.composedText} />`}
        >
          <pre class="output" data-testid="composed">${showJson ? (outcome?.composed ? JSON.stringify(outcome.composed, null, 2) : '') : (outcome?.composedText ?? '')}</pre>
        <//>
        <${Pane} title="HookContext metadata" aside=${html`<span class="muted">context.metadata</span>`}>
          <pre class="output" data-testid="metadata">${outcome?.metadata ? JSON.stringify(outcome.metadata, null, 2) : ''}</pre>
        <//>
    `,
    [outcome, busy, showJson],
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
          <${Composer} text=${text} onText=${setText} service=${service} serviceError=${serviceError} agent=${agent} insertRequest=${insertRequest} />
          <div class="mentions" data-testid="mentions">
            ${scanTokens.length === 0
              ? html`<span class="muted">No mentions yet. Type <kbd>@</kbd> to cite a session.</span>`
              : scanTokens.map((token) =>
                  token.error
                    ? html`<span class="chip chip-bad" title=${token.error.message}>✗ ${text.slice(token.start, token.end).slice(0, 60)} <code>${token.error.code}</code></span>`
                    : html`<span class="chip chip-ok" title=${token.sessionId}>@${token.label} <span class="muted">${token.kind}</span></span>`,
                )}
          </div>
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
