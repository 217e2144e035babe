/**
 * Seeded, deterministic input generators for `npm run bench` (and the structural test in
 * test/bench-structure.test.ts). Web APIs only: the same generators run in every test runtime.
 *
 * Every generator takes a seed; the same seed always gives the same input.
 */
import { encodeSessionReferenceUri, formatSessionReferenceMention } from '../src/index.js';
import type { SessionEvent, SessionHeader, SessionQuery, SessionSurface } from '../src/types.js';

/** 1 MiB in UTF-16 code units (every parsing input is ASCII, so also in UTF-8 bytes). */
export const MIB = 1 << 20;

// ---------------------------------------------------------------------------------------------
// Seeded PRNG

/** mulberry32: a small, fast, seeded 32-bit PRNG. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

function int(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

// ---------------------------------------------------------------------------------------------
// Prose

const WORDS = (
  'the a of to and in is it that for on with as was be by this are or from at an not but have ' +
  'schema migration table index query session agent prompt context model token budget review ' +
  'function module test build deploy branch commit merge request change update fix bug error ' +
  'value type string number array object field column row file folder path config option flag ' +
  'we should could would will can may must need want try make use add remove keep drop check ' +
  'because when where which while after before then than also only just still already again'
).split(' ');

/** Markdown-ish bits ordinary prompts contain: handles, emails, links, code spans, brackets. */
const DECOR = [
  '@alice',
  'bob@example.com',
  '[the docs](https://example.com/docs/x)',
  '`npm test`',
  '(see above)',
  '[1]',
  'e.g.',
  'session-42',
  'dsh sessions',
  'C:\\repo\\src',
];

/** ASCII prose (words, punctuation, paragraphs, some markdown) of exactly `length` characters. */
export function prose(seed: number, length: number): string {
  const random = rng(seed);
  const parts: string[] = [];
  let size = 0;
  let sentence = 0;
  while (size < length) {
    let word = random() < 0.04 ? pick(random, DECOR) : pick(random, WORDS);
    if (sentence === 0) word = word[0]!.toUpperCase() + word.slice(1);
    sentence++;
    let sep = ' ';
    if (sentence > int(random, 6, 18)) {
      sep = random() < 0.15 ? '.\n\n' : random() < 0.5 ? '. ' : ', ';
      if (sep !== ', ') sentence = 0;
    }
    parts.push(word, sep);
    size += word.length + sep.length;
  }
  return parts.join('').slice(0, length);
}

// ---------------------------------------------------------------------------------------------
// Mentions

/** A deterministic session id (ASCII; every 7th has non-ASCII characters). */
export function sessionId(random: () => number, i: number): string {
  const hex = Math.floor(random() * 0xffffffff).toString(16).padStart(8, '0');
  return i % 7 === 3 ? `sessión-${hex}-日志` : `session-${hex}-${i}`;
}

/** `count` canonical mentions with labels like `Schema review 12`. */
export function mentions(seed: number, count: number): string[] {
  const random = rng(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const id = sessionId(random, i);
    const label = random() < 0.3 ? undefined : `${pick(random, WORDS)} ${pick(random, WORDS)} [${i}]`;
    out.push(formatSessionReferenceMention({ sessionId: id, label }));
  }
  return out;
}

/** `count` canonical bare URIs. */
export function bareUris(seed: number, count: number): string[] {
  const random = rng(seed);
  const out: string[] = [];
  for (let i = 0; i < count; i++) out.push(encodeSessionReferenceUri(sessionId(random, i)));
  return out;
}

/**
 * Ordinary prose of exactly `length` characters with `inserts` (mentions or bare URIs) spread
 * evenly through it, each between spaces.
 */
export function proseWith(seed: number, length: number, inserts: readonly string[]): string {
  const insertLength = inserts.reduce((sum, s) => sum + s.length + 2, 0);
  const fill = prose(seed, Math.max(0, length - insertLength));
  if (inserts.length === 0) return fill;
  const parts: string[] = [];
  const step = fill.length / inserts.length;
  let at = 0;
  inserts.forEach((insert, k) => {
    const next = Math.floor(step * (k + 0.5));
    parts.push(fill.slice(at, next), ' ', insert, ' ');
    at = next;
  });
  parts.push(fill.slice(at));
  return parts.join('');
}

function repeatTo(unit: string, length: number): string {
  return unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
}

function fromUnits(length: number, next: () => string): string {
  const parts: string[] = [];
  let size = 0;
  while (size < length) {
    const unit = next();
    parts.push(unit);
    size += unit.length;
  }
  return parts.join('').slice(0, length);
}

/** One parsing family: an input of about `length` characters and how many valid mentions it holds. */
export interface ParseInput {
  text: string;
  /** Valid mentions and bare URIs in `text` (what `parseSessionReferenceText` returns). */
  valid: number;
}

/** The adversarial parsing families of SPEC §3.4, each of exactly `length` characters. */
export const PARSE_FAMILIES: Record<string, { describe: string; make: (seed: number, length: number) => ParseInput }> = {
  'unterminated @[': {
    describe: '`@[` repeated',
    make: (_seed, length) => ({ text: repeatTo('@[', length), valid: 0 }),
  },
  '@[a](dsh-session: repeated': {
    describe: '`@[a](dsh-session:` repeated (no closing `)`)',
    make: (_seed, length) => ({ text: repeatTo('@[a](dsh-session:', length), valid: 0 }),
  },
  'backslash runs in labels': {
    describe: '`@[` + 256..4096 backslashes + `]`, repeated (odd runs escape the `]`)',
    make: (seed, length) => {
      const random = rng(seed);
      return { text: fromUnits(length, () => `@[${'\\'.repeat(int(random, 256, 4096))}]`), valid: 0 };
    },
  },
  'dsh-session: without payload': {
    describe: '`dsh-session: `, `(dsh-session:)`, `dsh-session:...`, `xdsh-session:` repeated',
    make: (seed, length) => {
      const random = rng(seed);
      const units = ['dsh-session: ', '(dsh-session:)', 'dsh-session:... ', 'xdsh-session: ', 'dsh-session:\n'];
      return { text: fromUnits(length, () => pick(random, units)), valid: 0 };
    },
  },
  'dsh-session: with payload': {
    describe: 'bare canonical URIs repeated (1 in 4 glued to a letter, so not a match)',
    make: (seed, length) => {
      const uris = bareUris(seed, 512);
      const random = rng(seed + 1);
      let valid = 0;
      const parts: string[] = [];
      let size = 0;
      for (;;) {
        const glued = random() < 0.25;
        const unit = `${glued ? 'x' : ''}${pick(random, uris)} `;
        if (size + unit.length > length) break;
        parts.push(unit);
        size += unit.length;
        if (!glued) valid++;
      }
      parts.push(' '.repeat(length - size));
      return { text: parts.join(''), valid };
    },
  },
  'one 1 MiB label': {
    describe: 'one valid mention whose label is the whole input (prose with escaped brackets)',
    make: (seed, length) => {
      const uri = bareUris(seed, 1)[0]!;
      const closing = `](${uri})`;
      const label = prose(seed, length - 2 - closing.length).replace(/[\\[\]]/g, '\\$&').slice(0, length - 2 - closing.length);
      // The slice may have cut an escape pair in half: end on a non-backslash.
      const safe = label.endsWith('\\') ? label.slice(0, -1) + 'x' : label;
      return { text: `@[${safe}${closing}`, valid: 1 };
    },
  },
  'many valid mentions': {
    describe: 'canonical mentions separated by one space',
    make: (seed, length) => {
      const all = mentions(seed, 1024);
      const random = rng(seed + 1);
      const parts: string[] = [];
      let size = 0;
      let valid = 0;
      for (;;) {
        const unit = `${pick(random, all)} `;
        if (size + unit.length > length) break;
        parts.push(unit);
        size += unit.length;
        valid++;
      }
      parts.push(' '.repeat(length - size));
      return { text: parts.join(''), valid };
    },
  },
};

/**
 * The prose baseline of a family: ordinary prose of `length` characters holding `valid` valid
 * mentions (half explicit mentions, half bare URIs when the family's are bare).
 */
export function proseBaseline(seed: number, length: number, valid: number, bare = false): string {
  return proseWith(seed, length, bare ? bareUris(seed + 7, valid) : mentions(seed + 7, valid));
}

// ---------------------------------------------------------------------------------------------
// Sessions (retention / prepare)

const CJK = '迁移表结构会话上下文模型预算审查函数模块测试构建部署分支提交合并请求';

/** Mostly-ASCII message text of about `bytes` characters; 1 in 8 messages carries CJK text. */
function messageText(random: () => number, seed: number, chars: number): string {
  const text = prose(seed, chars);
  if (random() >= 0.125) return text;
  const cjk = fromUnits(Math.min(200, chars >> 2), () => pick(random, [...CJK]));
  return `${cjk}\n${text.slice(cjk.length + 1)}`;
}

/** Options of {@link sessionEvents}. */
export interface SessionShape {
  /** Approximate total characters of text in the session (all events). */
  textChars: number;
  /** Characters per user message (assistant texts are 2×, tool results 3×). */
  messageChars?: number;
  /** A compact checkpoint every this many turns (0: none), replacing the two turns before it. */
  checkpointEvery?: number;
}

/**
 * A dsh-shaped raw session log: turns of user message, assistant message (reasoning + text +
 * tool call), tool result, final assistant text; `assistant/chunk` stream fragments; periodic
 * compact checkpoints that replace the two turns before them (so most of the text stays on the
 * surface and takes part in retention). About `textChars` characters of text.
 */
export function sessionEvents(seed: number, shape: SessionShape): SessionEvent[] {
  const random = rng(seed);
  const messageChars = shape.messageChars ?? 1200;
  const events: SessionEvent[] = [];
  let seq = 0;
  let chars = 0;
  let turn = 0;
  const turnStarts: number[] = [];
  const time = (s: number) => 1_700_000_000_000 + s * 1000;
  const push = (event: Omit<SessionEvent, 'seq' | 'time'>, textChars: number) => {
    seq++;
    events.push({ ...event, seq, time: time(seq) } as SessionEvent);
    chars += textChars;
    return seq;
  };
  while (chars < shape.textChars) {
    turn++;
    const sub = seed * 1_000_003 + turn * 17;
    const userText = messageText(random, sub + 1, int(random, messageChars >> 1, messageChars * 2));
    turnStarts.push(seq + 1);
    push(
      {
        type: 'user/message',
        data: { id: `u${turn}`, role: 'user', content: [{ type: 'text', text: userText }], source: { kind: 'user' } },
        surfaceOp: 'append',
      },
      userText.length,
    );
    const reasoning = prose(sub + 2, messageChars >> 1);
    const answer = messageText(random, sub + 3, int(random, messageChars, messageChars * 3));
    for (let c = 0; c < 3; c++) {
      push({ type: 'assistant/chunk', data: { turn, step: 1, delta: answer.slice(c * 16, c * 16 + 16) } }, 16);
    }
    push(
      {
        type: 'assistant/message',
        data: {
          turn,
          step: 1,
          message: {
            role: 'assistant',
            content: [
              { type: 'reasoning', text: reasoning },
              { type: 'text', text: answer },
              { type: 'tool-call', id: `call-${turn}`, name: 'read_file', input: { path: `src/file-${turn}.ts` } },
            ],
          },
        },
        surfaceOp: 'append',
      },
      reasoning.length + answer.length,
    );
    const output = prose(sub + 4, messageChars * 3);
    push(
      {
        type: 'tool/result',
        data: { turn, step: 1, message: { source: { kind: 'tool' }, content: [{ type: 'tool-result', content: [{ type: 'text', text: output }] }] } },
        surfaceOp: 'append',
      },
      output.length,
    );
    const final = messageText(random, sub + 5, int(random, messageChars >> 1, messageChars));
    const lastSeq = push(
      {
        type: 'assistant/message',
        data: { turn, step: 2, message: { role: 'assistant', content: [{ type: 'text', text: final }] } },
        surfaceOp: 'append',
      },
      final.length,
    );
    if (shape.checkpointEvery && turn % shape.checkpointEvery === 0) {
      const summary = prose(sub + 6, messageChars);
      const start = turnStarts[Math.max(0, turnStarts.length - 2)]!;
      push(
        {
          type: 'user/message',
          data: { id: `c${turn}`, role: 'user', content: [{ type: 'text', text: summary }], source: { kind: 'plugin', plugin: 'compact' } },
          surfaceOp: { op: 'replace', start, end: lastSeq },
        },
        summary.length,
      );
    }
  }
  return events;
}

/** A session header. */
export function header(id: string, cwd?: string | null): SessionHeader {
  return { id, createdAt: 1_700_000_000_000, ...(cwd === undefined ? {} : { cwd }) };
}

/** An in-memory host answering `readSurface` with one pre-built snapshot (for `prepare`). */
export function snapshotHost(snapshot: SessionSurface): SessionQuery & { reads: number } {
  const host = {
    reads: 0,
    async listSessions() {
      return [{ header: snapshot.session }];
    },
    async readSurface() {
      host.reads++;
      return snapshot;
    },
  };
  return host;
}

/** An in-memory host answering `readSurface(id)` with pre-built snapshots (for `prepare`). */
export function snapshotsHost(snapshots: ReadonlyMap<string, SessionSurface>): SessionQuery & { reads: number } {
  const host = {
    reads: 0,
    async listSessions() {
      return [...snapshots.values()].map((snapshot) => ({ header: snapshot.session }));
    },
    async readSurface(id: string) {
      host.reads++;
      const snapshot = snapshots.get(id);
      if (!snapshot) throw new Error(`no session ${id}`);
      return snapshot;
    },
  };
  return host;
}

/** A surface snapshot over `events`. */
export function surfaceSnapshot(id: string, events: SessionEvent[]): SessionSurface {
  return { session: header(id, '/work/repo'), capturedThroughSeq: events.at(-1)?.seq ?? null, events };
}

/** `count` small conversation items (for the naive re-serializing baseline). */
export function conversationItems(seed: number, count: number, chars = 500) {
  const random = rng(seed);
  const items: { role: 'user' | 'assistant'; text: string; checkpoint?: true }[] = [];
  for (let i = 0; i < count; i++) {
    const role = i % 2 === 0 ? 'user' : 'assistant';
    const text = messageText(random, seed * 31 + i, int(random, chars >> 1, chars * 2));
    items.push(i > 0 && i % 400 === 0 ? { role: 'user', text, checkpoint: true } : { role, text });
  }
  return items;
}

/**
 * A folded dsh surface of `count` messages, user and assistant in turn, each of 0.8–1.2 × `chars`
 * characters (mostly ASCII): only the event types a dsh host's surface holds, so the host's own
 * plugin (which rejects any other type) reads it as well as ours.
 */
export function conversationSurface(id: string, seed: number, count: number, chars = 1000): SessionSurface {
  const random = rng(seed);
  const events: SessionEvent[] = [];
  for (let i = 0; i < count; i++) {
    const content = [{ type: 'text', text: messageText(random, seed * 31 + i, int(random, (chars * 4) / 5, (chars * 6) / 5)) }];
    const seq = i + 1;
    const time = 1_700_000_000_000 + seq * 1000;
    events.push(
      i % 2 === 0
        ? { type: 'user/message', seq, time, surfaceOp: 'append', data: { id: `u${seq}`, role: 'user', content, source: { kind: 'user' } } }
        : { type: 'assistant/message', seq, time, surfaceOp: 'append', data: { turn: seq >> 1, step: 1, message: { role: 'assistant', content } } },
    );
  }
  return surfaceSnapshot(id, events);
}

// ---------------------------------------------------------------------------------------------
// Discovery

const PROJECTS = ['/work/repo', '/work/api', '/home/dev/site', '/srv/app', '/tmp/scratch', '/work/repo-legacy'];

/** `count` session records, newest first, a sixth without cwd; plus a host counting title reads. */
export function sessionRecords(seed: number, count: number): Array<{ header: SessionHeader }> {
  const random = rng(seed);
  const records: Array<{ header: SessionHeader }> = [];
  for (let i = 0; i < count; i++) {
    const r = random();
    const cwd = r < 1 / 6 ? (r < 1 / 12 ? undefined : '') : pick(random, PROJECTS);
    records.push({ header: { id: sessionId(random, i), createdAt: 1_700_000_000_000 - i * 60_000, ...(cwd === undefined ? {} : { cwd }) } });
  }
  return records;
}

/** An in-memory host over `records` that counts the ids whose titles it was asked for. */
export function listingHost(records: Array<{ header: SessionHeader }>): SessionQuery & { titleReads: number; titleCalls: number } {
  const host = {
    titleReads: 0,
    titleCalls: 0,
    async listSessions() {
      return records;
    },
    async readSurface(): Promise<SessionSurface> {
      throw new Error('not used');
    },
    async readTitleSnapshots(ids: string[]) {
      host.titleCalls++;
      host.titleReads += ids.length;
      return ids.map((sessionId, i) => ({ sessionId, status: 'fulfilled' as const, value: { title: { title: `Title ${i}` } } }));
    },
  };
  return host;
}

// ---------------------------------------------------------------------------------------------
// Codec

/** `count` session ids of UTF-8 length up to `maxBytes` (mixed ASCII / non-ASCII / emoji). */
export function codecIds(seed: number, count: number, maxBytes = 256): string[] {
  const random = rng(seed);
  const alphabet = [...'abcdefghijklmnopqrstuvwxyz0123456789-_/.:'];
  const wide = [...'éßüñ日志会话🙂🚀'];
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const target = int(random, 8, maxBytes);
    let id = '';
    let bytes = 0;
    const nonAscii = i % 4 === 0;
    while (bytes < target) {
      const ch = nonAscii && random() < 0.2 ? pick(random, wide) : pick(random, alphabet);
      const size = new TextEncoder().encode(ch).length;
      if (bytes + size > target) break;
      id += ch;
      bytes += size;
    }
    ids.push(id);
  }
  return ids;
}

/**
 * Copies of `items` whose `role` is a counting getter, and the count. Retention reads an item's
 * `role` only when it serializes the item (sizes it exactly, SPEC §8.3); measuring the raw UTF-8
 * length of a dropped item reads only its `text`. So the count is how many items were sized
 * exactly.
 */
export function countingExactSizes<T extends { role: string }>(items: readonly T[]): { items: T[]; sized: () => number } {
  let reads = 0;
  const counted = items.map((item) => {
    const copy = { ...item };
    Object.defineProperty(copy, 'role', {
      enumerable: true,
      get: () => {
        reads++;
        return item.role;
      },
    });
    return copy;
  });
  return { items: counted, sized: () => reads };
}
