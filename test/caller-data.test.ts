/**
 * Caller data read once (SPEC §10.3, §10.4), through every public entry: each argument is read
 * exactly once, before the call first awaits, into a private plain copy. Framework state — the
 * real libraries' proxies: Svelte 5 `$state` (compiled by the Svelte compiler), Vue
 * `reactive`/`ref`, MobX `observable`, Immer drafts, Solid stores — reads as the plain data it
 * stands for; a draft revoked after the call returned its promise is fine; a getter that answers
 * differently on a second read cannot change the result; a throwing getter or revoked proxy is
 * INVALID_ARGUMENT naming the path; a sparse array is the entries it holds. Shared suite: runs in
 * every runtime.
 */
import fc from 'fast-check';
import { produce } from 'immer';
import { observable } from 'mobx';
import { describe, expect, it } from 'vitest';
import { reactive, ref } from 'vue';
import {
  composePromptMessage,
  createSessionReferences,
  formatSessionReferenceMention,
  isSessionReferenceError,
  parseSessionReferenceText,
  scanSessionReferenceText,
  SessionReferenceError,
  type ContentBlock,
  type HookContext,
  type UserMessage,
} from '../src/index.js';
import { describeReferencedMessage, insertMention } from '../src/editor/index.js';
import { describeValue } from '../src/errors.js';
import { createMemorySessionQuery, createObjectStoreSessionQuery, parseSessionLog, parseSessionLogHeader, readSessionLog, type SessionLog } from '../src/store/index.js';
// Solid's client build, the store apps run in browsers: the package's node, deno and worker
// export conditions give its server build, whose stores are the plain objects themselves.
import { createStore } from '../node_modules/solid-js/store/dist/store.js';
import { svelteState } from './frameworks/state.svelte.js';
import { revokedProxy, throwingGetter } from './hardening.js';
import { assistantMessage, fakeQuery, userMessage, type FakeSession } from './sessions.js';

const AGENT = { id: 'target', cwd: '/repo' };
const ALPHA: FakeSession = { header: { id: 'alpha', createdAt: 2, cwd: '/repo' }, events: [userMessage(1, 'hello'), assistantMessage(2, 'hi')], title: 'Alpha work' };
const BETA: FakeSession = { header: { id: 'beta', createdAt: 1 }, events: [userMessage(1, 'beta')] };
const refs = () => createSessionReferences({ sessionQuery: fakeQuery([ALPHA, BETA]) });

const MENTION_A = formatSessionReferenceMention({ sessionId: 'alpha', label: 'A' });
const MENTION_B = formatSessionReferenceMention({ sessionId: 'beta' });
/** A fresh user message citing both sessions, with a non-text block between its text blocks. */
const message = (): UserMessage => ({
  id: 'm1',
  role: 'user',
  content: [{ type: 'text', text: `see ${MENTION_A}` }, { type: 'image', attachment: { id: 'img', mime: 'image/png' } } as never, { type: 'text', text: `and ${MENTION_B}` }],
  source: { kind: 'user' },
});
const agent = () => ({ ...AGENT });
const log = (session: FakeSession): SessionLog => ({ header: { ...session.header }, events: structuredClone(session.events) });
const LOG_TEXT = [JSON.stringify({ type: 'session', version: 0, id: 'alpha', createdAt: 2 }), ...ALPHA.events.map((event) => JSON.stringify(event)), ''].join('\n');

/** Wraps plain data the way an app's framework holds it: a deep reactive proxy (or observable copy). */
type Wrap = <T extends object>(value: T) => T;
const FRAMEWORKS: Array<[string, Wrap]> = [
  ['Svelte 5 $state', (value) => svelteState(value)],
  ['Vue reactive', (value) => reactive(value) as never],
  ['Vue ref().value', (value) => ref(value).value as never],
  ['MobX observable', (value) => observable(value)],
  ['Solid createStore', (value) => (createStore as (value: object) => [object])(value)[0] as never],
];

describe('framework state reads as the plain data it stands for, in every entry (SPEC §10.4)', () => {
  it.each(FRAMEWORKS)('%s: the wrapper really is a proxy structuredClone refuses (the test means something)', (_, wrap) => {
    // MobX gives an observable object whose properties are accessors: also not cloneable as data.
    expect(() => structuredClone(wrap(message()))).toThrow();
  });

  it.each(FRAMEWORKS)('%s: the root entry', async (_, wrap) => {
    const service = refs();
    const plain = await service.referenceUserMessage(agent(), message());
    expect(await service.referenceUserMessage(wrap(agent()), wrap(message()))).toEqual(plain);
    const references = () => [{ sessionId: 'alpha', label: 'A' }, { sessionId: 'beta' }];
    const prepared = await service.prepare(agent(), message().content, references());
    expect(await service.prepare(wrap(agent()), wrap(message().content), wrap(references()))).toEqual(prepared);
    const mentions = () => plain.envelope!.mentions!.map((m) => ({ ...m }));
    const readable = () => ({ ...message(), content: structuredClone(plain.envelope!.display) });
    const context = () => structuredClone(prepared.context!);
    expect(composePromptMessage(wrap(readable()), wrap(context()), wrap(mentions()))).toEqual(composePromptMessage(readable(), context(), mentions()));
    expect(await service.listCandidates(wrap(agent()), 'a')).toEqual(await service.listCandidates(agent(), 'a'));
    const configured = createSessionReferences({ sessionQuery: fakeQuery([ALPHA]), config: wrap({ maxReferences: 1, candidateLimit: 7 }) });
    expect(configured.config).toMatchObject({ maxReferences: 1, candidateLimit: 7 });
    expect(formatSessionReferenceMention(wrap({ sessionId: 'alpha', label: 'A' }))).toBe(MENTION_A);
  });

  it.each(FRAMEWORKS)('%s: ./store', async (_, wrap) => {
    const plain = createMemorySessionQuery([log(ALPHA), log(BETA)]);
    const wrapped = createMemorySessionQuery(wrap([log(ALPHA), log(BETA)]));
    // Headers alike; each store's identities are its own (SPEC §16.4).
    const headers = (records: Array<{ header: unknown }>) => records.map((record) => record.header);
    expect(headers(await wrapped.listSessions())).toEqual(headers(await plain.listSessions()));
    expect(await wrapped.readSurface('alpha')).toEqual(await plain.readSurface('alpha'));
    expect(await wrapped.readTitleSnapshots(wrap(['beta', 'alpha']))).toEqual(await plain.readTitleSnapshots(['beta', 'alpha']));
    expect(await readSessionLog(LOG_TEXT, wrap({ maxLogBytes: 1 << 20, verifyChecksums: true }))).toEqual(parseSessionLog(LOG_TEXT));
  });

  it.each(FRAMEWORKS)('%s: ./editor', async (_, wrap) => {
    const composed = await refs().referenceUserMessage(agent(), message());
    const described = describeReferencedMessage(composed);
    expect(described?.references).toHaveLength(2);
    expect(describeReferencedMessage(wrap(structuredClone(composed)))).toEqual(described);
    const text = 'ask @al';
    expect(insertMention(text, wrap({ start: 4, end: 7 }), wrap({ sessionId: 'alpha', label: 'A' }))).toEqual(insertMention(text, { start: 4, end: 7 }, MENTION_A));
  });

  it('Immer drafts, also when the draft is revoked once the call has returned its promise', async () => {
    const service = refs();
    const base = { agent: agent(), message: message(), logs: [log(ALPHA)], range: { start: 4, end: 7 } };
    let draftMessage: unknown;
    let referenced!: Promise<UserMessage>;
    let prepared!: ReturnType<typeof service.prepare>;
    let candidates!: ReturnType<typeof service.listCandidates>;
    let store!: ReturnType<typeof createMemorySessionQuery>;
    let composed!: UserMessage;
    let inserted!: ReturnType<typeof insertMention>;
    produce(base, (draft) => {
      draftMessage = draft.message;
      referenced = service.referenceUserMessage(draft.agent, draft.message as UserMessage);
      prepared = service.prepare(draft.agent, draft.message.content as ContentBlock[], [{ sessionId: 'alpha' }]);
      candidates = service.listCandidates(draft.agent);
      store = createMemorySessionQuery(draft.logs as SessionLog[]);
      composed = composePromptMessage(draft.message as UserMessage);
      inserted = insertMention('ask @al', draft.range, MENTION_A);
    });
    // produce has returned: every draft is revoked now.
    expect(() => (draftMessage as UserMessage).role).toThrow(TypeError);
    expect(await referenced).toEqual(await service.referenceUserMessage(agent(), message()));
    expect(await prepared).toEqual(await service.prepare(agent(), message().content, [{ sessionId: 'alpha' }]));
    expect(await candidates).toEqual(await service.listCandidates(agent()));
    expect(await store.readSurface('alpha')).toEqual(await createMemorySessionQuery([log(ALPHA)]).readSurface('alpha'));
    expect(composed).toEqual(message());
    expect(inserted).toEqual(insertMention('ask @al', { start: 4, end: 7 }, MENTION_A));
  });
});

/**
 * `value` behind proxies that count every read of every property and lie from the second read
 * on (a role reads `'system'`, anything else a different string): a result that used a second
 * read would differ from the plain one.
 */
function twoFaced<T>(value: T, reads: number[]): T {
  if (typeof value !== 'object' || value === null) return value;
  const counts = new Map<PropertyKey, number>();
  return new Proxy(value, {
    get(target, key, receiver) {
      if (typeof key === 'symbol') return Reflect.get(target, key, receiver);
      const count = (counts.get(key) ?? 0) + 1;
      counts.set(key, count);
      reads.push(count);
      if (count > 1) return key === 'role' ? 'system' : 'a second read';
      return twoFaced(Reflect.get(target, key, receiver), reads);
    },
  });
}

/** Text blocks of mentions, plain text and fragments, with other blocks between them. */
const contentArbitrary = fc.array(
  fc.oneof(
    fc.array(fc.constantFrom(MENTION_A, MENTION_B, 'dsh-session:ImFscGhhIg', ' ', 'words', '@', '\n', '🎉'), { maxLength: 6 }).map((parts) => ({ type: 'text', text: parts.join(' ') })),
    fc.constantFrom<object>({ type: 'image', attachment: { id: 'x' } }, { type: 'reasoning', text: 'hidden' }, { type: 'tool-result', content: [{ type: 'text', text: MENTION_A }] }),
  ),
  { minLength: 1, maxLength: 6 },
);
const messageArbitrary = contentArbitrary.map((content): UserMessage => ({ id: 'm', role: 'user', content: content as ContentBlock[], source: { kind: 'user' } }));

describe('each caller value is read once, and only the copy is used (SPEC §10.4)', () => {
  it('property: referenceUserMessage and composePromptMessage read every property at most once and give the plain result', async () => {
    await fc.assert(
      fc.asyncProperty(messageArbitrary, async (input) => {
        const service = refs();
        const plain = await service.referenceUserMessage(agent(), structuredClone(input));
        const reads: number[] = [];
        expect(await service.referenceUserMessage(twoFaced(agent(), reads), twoFaced(structuredClone(input), reads))).toEqual(plain);
        expect(Math.max(0, ...reads)).toBe(1);
        if (plain.envelope === undefined) return;
        const context = structuredClone(plain.envelope!.contexts[0]!) as HookContext;
        const full = { ...context, content: [{ type: 'text', text: plain.content[0]!.type === 'text' ? plain.content[0]!.text : '' }] } as HookContext;
        const display = { ...input, content: plain.envelope!.display };
        expect(composePromptMessage(twoFaced(structuredClone(display), reads), twoFaced(structuredClone(full), reads), twoFaced(structuredClone(plain.envelope!.mentions), reads))).toEqual(
          composePromptMessage(structuredClone(display), structuredClone(full), structuredClone(plain.envelope!.mentions)),
        );
        expect(Math.max(0, ...reads)).toBe(1);
      }),
      { numRuns: 60, seed: 0x10c4 },
    );
  });

  it("a role that reads 'user' and then 'system' is composed as 'user'", () => {
    let reads = 0;
    const input = Object.defineProperty({ id: 'm', content: [{ type: 'text', text: 'hi' }], source: { kind: 'user' } }, 'role', { enumerable: true, get: () => (reads++ === 0 ? 'user' : 'system') });
    expect(composePromptMessage(input as never).role).toBe('user');
    expect(reads).toBe(1);
  });
});

describe('a throwing getter or a revoked proxy is INVALID_ARGUMENT naming the path (SPEC §10.4)', () => {
  /** A message whose content block `index` has a throwing `text` getter, or is a revoked proxy. */
  const faulty = fc.record({ content: contentArbitrary, at: fc.nat(), revoked: fc.boolean() }).map(({ content, at, revoked }) => {
    const index = at % content.length;
    const blocks: unknown[] = structuredClone(content);
    const cause = new TypeError('no text for you');
    blocks[index] = revoked ? revokedProxy() : throwingGetter('text', cause, { type: 'text' });
    return { blocks, path: revoked ? `content[${index}]` : `content[${index}].text`, cause: revoked ? undefined : cause };
  });

  it('property: in every function that takes content or a message', async () => {
    await fc.assert(
      fc.asyncProperty(faulty, async ({ blocks, path, cause }) => {
        const input = { id: 'm', role: 'user', content: blocks, source: { kind: 'user' } };
        const errors = [
          await refs().referenceUserMessage(agent(), input as never).catch((error: unknown) => error),
          await refs().prepare(agent(), blocks as never, []).catch((error: unknown) => error),
          await Promise.resolve().then(() => composePromptMessage(input as never)).catch((error: unknown) => error),
        ];
        const paths = [`message.${path}`, path, `message.${path}`];
        errors.forEach((error, i) => {
          expect(error).toBeInstanceOf(SessionReferenceError);
          expect((error as SessionReferenceError).code).toBe('SESSION_REFERENCE_INVALID_ARGUMENT');
          expect((error as Error).message).toContain(`${paths[i]} cannot be read`);
          if (cause) expect((error as Error).cause).toBe(cause);
        });
        expect(describeReferencedMessage({ envelope: { version: 1, display: blocks, contexts: [] } })).toBeUndefined();
      }),
      { numRuns: 60, seed: 0x9e77 },
    );
  });

  it('a long path is shortened in the message: nesting past the limit, a 10 MB key', () => {
    let deep: unknown = [];
    for (let i = 0; i < 2000; i++) deep = [deep];
    expect(() => composePromptMessage({ ...message(), content: [deep] } as never)).toThrow(/^message\.content(\[0\])+…(\[0\])+ is nested deeper than 1000 levels/);
    const key = 'k '.repeat(5_000_000);
    const error = (() => {
      try {
        composePromptMessage({ ...message(), [key]: revokedProxy() } as never);
      } catch (caught) {
        return caught as Error;
      }
    })();
    expect(error?.message.length).toBeLessThan(600);
    expect(error?.message).toMatch(/^message\["[k ]+…[k ]+"\] cannot be read/);
  });

  it('in the store and editor entries too', async () => {
    const logs = [log(ALPHA), { header: throwingGetter('id', undefined, { createdAt: 1 }), events: [] }];
    expect(() => createMemorySessionQuery(logs as never)).toThrow(/logs\[1\]\.header\.id cannot be read/);
    await expect(createMemorySessionQuery([log(ALPHA)]).readTitleSnapshots([revokedProxy()] as never)).rejects.toThrow(/sessionIds\[0\] cannot be read/);
    await expect(readSessionLog(LOG_TEXT, throwingGetter('maxLogBytes') as never)).rejects.toThrow(/options\.maxLogBytes cannot be read/);
    expect(() => insertMention('x', throwingGetter('end', undefined, { start: 0 }) as never, MENTION_A)).toThrow(/range\.end cannot be read/);
    expect(() => formatSessionReferenceMention(revokedProxy() as never)).toThrow(/reference\.sessionId cannot be read/);
  });
});

describe('a revoked proxy or a throwing-trap proxy as a whole argument is a SessionReferenceError naming it, never a raw TypeError (SPEC §10, §10.4)', () => {
  const throwingTrap = () =>
    new Proxy(
      {},
      Object.fromEntries(['get', 'has', 'ownKeys', 'getPrototypeOf', 'getOwnPropertyDescriptor'].map((trap) => [trap, () => { throw new TypeError(`no ${trap} for you`); }])),
    );
  it.each([
    ['a revoked proxy', revokedProxy],
    ['a proxy whose traps throw', throwingTrap],
  ])('%s', async (_, proxy) => {
    const rejection = async (call: () => unknown) => {
      try {
        await call();
      } catch (error) {
        return error;
      }
      throw new Error('expected a failure');
    };
    const expectNamed = (error: unknown, code: string, name: string) => {
      expect(error).toBeInstanceOf(SessionReferenceError);
      expect(error).toMatchObject({ code });
      expect((error as Error).message).toMatch(new RegExp(`^${name}(\\.\\w+)? cannot be read`));
    };
    expectNamed(await rejection(() => parseSessionLog(proxy() as never)), 'SESSION_REFERENCE_INVALID_ARGUMENT', 'input');
    expectNamed(await rejection(() => parseSessionLogHeader(proxy() as never)), 'SESSION_REFERENCE_INVALID_ARGUMENT', 'input');
    expectNamed(await rejection(() => readSessionLog(proxy() as never)), 'SESSION_REFERENCE_INVALID_ARGUMENT', 'source');
    expectNamed(await rejection(() => createObjectStoreSessionQuery(proxy() as never)), 'SESSION_REFERENCE_INVALID_CONFIG', 'bucket');
    expectNamed(await rejection(() => createObjectStoreSessionQuery({ list: async () => ({ objects: [], truncated: false }), get: async () => null }, proxy() as never)), 'SESSION_REFERENCE_INVALID_CONFIG', 'options');
  });
});

describe('a sparse caller array is the entries it holds, at the cost of those (SPEC §10.3)', () => {
  /** `blocks` placed at `indices` of an array of length 2³²−1 (the largest an array can be). */
  const sparse = (blocks: unknown[], indices: number[]) => {
    const array = new Array(2 ** 32 - 1);
    [...indices].sort((a, b) => a - b).forEach((index, i) => (array[index] = blocks[i]));
    return array;
  };
  const placed = contentArbitrary.chain((content) =>
    fc.uniqueArray(fc.integer({ min: 0, max: 2 ** 32 - 2 }), { minLength: content.length, maxLength: content.length }).map((indices) => ({ content, indices })),
  );

  it('property: composePromptMessage, referenceUserMessage and prepare read it as the dense array of its entries', async () => {
    const service = refs();
    await fc.assert(
      fc.asyncProperty(placed, async ({ content, indices }) => {
        const dense = { id: 'm', role: 'user', content: structuredClone(content), source: { kind: 'user' } } as UserMessage;
        const holey = { ...structuredClone(dense), content: sparse(structuredClone(content), indices) };
        expect(composePromptMessage(holey)).toEqual(dense);
        expect(await service.referenceUserMessage(agent(), holey)).toEqual(await service.referenceUserMessage(agent(), dense));
        expect((await service.prepare(agent(), holey.content, sparse([{ sessionId: 'alpha' }], [indices[0]!]))).content).toEqual(dense.content);
      }),
      { numRuns: 25, seed: 0x5ba5 },
    );
  });
});

describe('error messages describe numbers faithfully (SPEC §10)', () => {
  it('an integer past 2^53 − 1 is described with a note that it may be rounded; -0 as -0', async () => {
    expect(describeValue(9007199254740993)).toBe('9007199254740992 (past 2^53 − 1: may be rounded from the number written)');
    expect(describeValue(-0)).toBe('-0');
    expect(describeValue(12)).toBe('12');
    expect(describeValue(1.5)).toBe('1.5');
    const error = await refs().listCandidates(agent(), '', 9007199254740993).catch((caught: Error) => caught);
    expect((error as Error).message).toContain('9007199254740992 (past 2^53 − 1: may be rounded from the number written)');
  });
});

describe('malformed tokens of a scan carry errors without stacks (SPEC §3.6)', () => {
  it('a paste of many malformed URIs: every token has a SessionReferenceError with no stack; a parse throws one with a stack', () => {
    const fragments = 20_000;
    const { tokens } = scanSessionReferenceText('dsh-session:A '.repeat(fragments));
    expect(tokens).toHaveLength(fragments);
    for (const token of [tokens[0]!, tokens[fragments - 1]!]) {
      expect(token.error).toBeInstanceOf(SessionReferenceError);
      expect(isSessionReferenceError(token.error)).toBe(true);
      expect(token.error!.code).toBe('SESSION_REFERENCE_INVALID_REFERENCE');
      expect(token.error!.message).toBe('not a canonical dsh-session URI, got "dsh-session:A"');
      expect(token.error!.toJSON()).toEqual({ name: 'SessionReferenceError', code: 'SESSION_REFERENCE_INVALID_REFERENCE', message: token.error!.message });
      expect(token.error!.stack).toBeUndefined();
    }
    expect(tokens.every((token) => token.error instanceof SessionReferenceError && token.error.stack === undefined)).toBe(true);
    let thrown: unknown;
    try {
      parseSessionReferenceText('dsh-session:A');
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(SessionReferenceError);
    expect((thrown as Error).message).toBe(tokens[0]!.error!.message);
    expect(typeof (thrown as Error).stack).toBe('string');
  });
});
