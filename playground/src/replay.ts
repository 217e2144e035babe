/**
 * The replay view: a sent message as a chat UI shows it — the person's readable text with a chip
 * where each mention stood (the description's `segments`, placed from `envelope.mentions`, SPEC
 * §9.4, §15.4, never by searching the text), then one compact source card per cited session. Built only from
 * `describeReferencedMessage` (SPEC §15.4), for a message this module composed or a dsh recall
 * message (SPEC §14.3).
 */
import { h } from 'preact';
import htm from 'htm';
import { describeReferencedMessage, type MentionSegment, type ReferencedMessageDescription } from '../../src/editor/index.js';
import type { ContentBlock } from '../../src/index.js';

const html = htm.bind(h);

const numberFormat = new Intl.NumberFormat('en-US');
const fmt = (value: number) => numberFormat.format(value);

/** One block of `display` drawn from its segments (SPEC §15.4): chips where the mentions stood. */
function DisplayBlock({ block, segments }: { block: ContentBlock; segments: MentionSegment[] | undefined }) {
  if (block.type !== 'text' || segments === undefined) return html`<span class="replay-other">[${block.type} block]</span>`;
  return html`<span class="replay-text">${segments.map((segment) =>
    segment.kind === 'text'
      ? segment.text
      : html`<span class="chip chip-ok" data-testid="replay-chip" data-session-id=${segment.token.sessionId} title=${segment.token.sessionId}>@${segment.token.label}</span>`,
  )}</span>`;
}

type ReferenceRow = ReferencedMessageDescription['references'][number];

function SourceCard({ reference }: { reference: ReferenceRow }) {
  const omitted = reference.omittedMessages > 0 || reference.omittedBytes > 0;
  return html`<li class="source-card" data-testid="source-card" data-session-id=${reference.sessionId}>
    <div class="source-head">
      <span class="source-icon" aria-hidden="true">↩</span>
      <strong data-testid="source-label">${reference.label}</strong>
      ${reference.compacted && html`<span class="badge badge-compacted" data-testid="source-compacted">compacted</span>`}
      ${reference.truncated && html`<span class="badge badge-truncated" data-testid="source-truncated">truncated</span>`}
    </div>
    <div class="source-meta">
      <span title=${reference.sessionId}><code>${reference.sessionId}</code></span>
      <span>through seq <strong data-testid="source-seq">${reference.capturedThroughSeq ?? '–'}</strong></span>
      <span><strong data-testid="source-kept">${fmt(reference.retainedMessages)}</strong> of ${fmt(reference.originalMessages)} messages kept</span>
      ${omitted &&
      html`<span><strong data-testid="source-omitted">${fmt(reference.omittedMessages)}</strong> omitted, <strong data-testid="source-omitted-bytes">${fmt(reference.omittedBytes)}</strong> B cut</span>`}
    </div>
  </li>`;
}

/** The replay of `message`, or why there is none. */
export function Replay({ message, testid = 'replay' }: { message: unknown; testid?: string }) {
  const description = describeReferencedMessage(message);
  if (!description) {
    return html`<div class="replay" data-testid=${testid} data-kind="none">
      <p class="muted">Not a message this module composed (no envelope) nor a dsh recall message: a chat UI shows it as plain text.</p>
    </div>`;
  }
  const { display, mentions, segments, references } = description;
  return html`<div class="replay" data-testid=${testid} data-kind=${display ? 'composed' : 'recall'}>
    ${display
      ? html`<div class="bubble" data-testid="replay-display">
          ${display.map((block, index) => html`<${DisplayBlock} block=${block} segments=${segments?.[index]} />`)}
        </div>
        ${!mentions && html`<p class="muted small">This envelope has no <code>mentions</code>: the chips cannot be placed.</p>`}`
      : html`<p class="muted small" data-testid="replay-recall-note">A dsh recall message: the person's prompt is the message just before it; only its sources are shown.</p>`}
    <ul class="source-cards">
      ${references.map((reference) => html`<${SourceCard} key=${reference.sessionId} reference=${reference} />`)}
    </ul>
  </div>`;
}
