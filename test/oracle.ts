/**
 * A literal, slow reading of SPEC §8.3 used as an oracle: it re-serializes the whole reference
 * after every step, exactly as the text describes, sharing no code with src/retention.ts.
 */
import type { ConversationItem } from '../src/index.js';

export interface OracleHead {
  sessionId: string;
  label: string;
  cwd: string | null;
}

export interface OracleResult {
  conversation: ConversationItem[];
  omittedMessages: number;
  omittedBytes: number;
  serializedBytes: number;
}

const encoder = new TextEncoder();
const bytes = (s: string) => encoder.encode(s).length;

export function oracleSerialize(head: OracleHead, conversation: ConversationItem[]): string {
  const items = conversation.map((c) => (c.checkpoint ? { role: c.role, text: c.text, checkpoint: true } : { role: c.role, text: c.text }));
  return JSON.stringify({ sessionId: head.sessionId, label: head.label, cwd: head.cwd, conversation: items }).split('<').join('\\u003c');
}

/** Splits a string into code points, lone surrogates being their own. */
function codePoints(text: string): string[] {
  return Array.from(text);
}

export function oracleCut(text: string, k: number): { text: string; omitted: number } {
  const cps = codePoints(text);
  const total = bytes(text);
  let head = '';
  let headBytes = 0;
  for (const cp of cps) {
    if (headBytes + bytes(cp) > Math.ceil(k / 2)) break;
    head += cp;
    headBytes += bytes(cp);
  }
  let tail = '';
  let tailBytes = 0;
  for (let i = cps.length - 1; i >= 0; i--) {
    if (tailBytes + bytes(cps[i]!) > Math.floor(k / 2)) break;
    tail = cps[i]! + tail;
    tailBytes += bytes(cps[i]!);
  }
  const omitted = total - headBytes - tailBytes;
  return { text: `${head}\n[… ${omitted} UTF-8 bytes omitted …]\n${tail}`, omitted };
}

export function oracleRetain(head: OracleHead, items: ConversationItem[], budget: number): OracleResult | 'BUDGET_EXCEEDED' {
  const size = (conv: ConversationItem[]) => bytes(oracleSerialize(head, conv));
  if (size([]) > budget) return 'BUDGET_EXCEEDED';
  const n = items.length;
  const kept = items.map((item, index) => ({ ...item, index }));
  let omittedMessages = 0;
  let omittedBytes = 0;
  while (size(kept) > budget) {
    const at = kept.findIndex((item) => !item.checkpoint && item.index !== n - 1);
    if (at < 0) break;
    omittedBytes += bytes(kept[at]!.text);
    omittedMessages++;
    kept.splice(at, 1);
  }
  const order = [...kept].sort((a, b) => bytes(b.text) - bytes(a.text) || a.index - b.index);
  for (const item of order) {
    if (size(kept) <= budget) break;
    const original = item.text;
    const raw = bytes(original);
    let chosen: { text: string; omitted: number } | undefined;
    for (let k = raw - 1; k >= 0; k--) {
      const cut = oracleCut(original, k);
      item.text = cut.text;
      if (size(kept) <= budget) {
        chosen = cut;
        break;
      }
    }
    chosen ??= oracleCut(original, 0);
    if (bytes(JSON.stringify(chosen.text).split('<').join('\\u003c')) >= bytes(JSON.stringify(original).split('<').join('\\u003c'))) {
      item.text = original;
      continue;
    }
    item.text = chosen.text;
    omittedBytes += chosen.omitted;
  }
  if (size(kept) > budget) return 'BUDGET_EXCEEDED';
  const conversation = kept.map(({ index: _, ...item }) => item as ConversationItem);
  return { conversation, omittedMessages, omittedBytes, serializedBytes: size(conversation) };
}
