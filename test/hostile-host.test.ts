/**
 * Hostile host data (SPEC §10.1, §10.3): what `listSessions`, `readSurface` and
 * `readTitleSnapshots` answer is generated as a valid tree, then made hostile at one random path
 * — a throwing getter, a revoked proxy, a proxy whose every trap throws, or a malformed value —
 * and every call must end in the documented behaviour: `SESSION_REFERENCE_READ_FAILED` (or, for
 * titles, that row falling back to its id), never another code, never a foreign exception, the
 * caller's inputs and the rest of the host data untouched. Sparse arrays with a huge `length`, in
 * every place the host answers an array, cost what they hold. Shared suite: runs in every runtime.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  createSessionReferences,
  isSessionReferenceError,
  SessionReferenceError,
  type ContentBlock,
  type SessionQuery,
  type TargetAgent,
} from '../src/index.js';
import { anyString, expectAtomicFailure, revokedProxy } from './hardening.js';
import { assistantMessage, checkpoint, userMessage } from './sessions.js';

const AGENT: TargetAgent = { id: 'target', cwd: '/repo' };
const CONTENT: ContentBlock[] = [{ type: 'text', text: 'What did we decide?' }];
const REFERENCES = [{ sessionId: 'source', label: 'Source' }];

type Key = string | number;
type Path = Key[];
type Kind = 'getter' | 'revoked' | 'proxy' | 'malformed';

/** Every path of a JSON-ish tree, the root (`[]`) included, in depth-first order. */
function pathsOf(value: unknown, prefix: Path = [], out: Path[] = []): Path[] {
  out.push(prefix);
  if (typeof value === 'object' && value !== null) {
    for (const key of Object.keys(value)) pathsOf((value as Record<string, unknown>)[key], [...prefix, Array.isArray(value) ? Number(key) : key], out);
  }
  return out;
}

const HOST_ERROR = new Error('host data exploded');

/** A proxy over `target` whose every trap throws HOST_ERROR. */
function throwingProxy(target: object): object {
  const fail = () => {
    throw HOST_ERROR;
  };
  return new Proxy(target, { get: fail, has: fail, ownKeys: fail, getOwnPropertyDescriptor: fail, getPrototypeOf: fail, apply: fail });
}

/**
 * `tree` (a fresh copy) made hostile at `path`: a throwing getter there, or the value replaced by
 * a revoked proxy, a throwing proxy over it, or `malformed`. `restore()` puts the original value
 * back and returns the root, to check that nothing else was modified.
 */
function inject(tree: unknown, path: Path, kind: Kind, malformed: unknown) {
  const root = structuredClone(tree);
  const original = path.reduce<unknown>((node, key) => (node as Record<Key, unknown>)[key], root);
  const hostileValue = () => {
    if (kind === 'malformed') return malformed;
    if (kind === 'proxy' && typeof original === 'object' && original !== null) return throwingProxy(original);
    return revokedProxy();
  };
  if (path.length === 0) return { answer: kind === 'getter' ? revokedProxy() : hostileValue(), restore: () => root };
  const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<Key, unknown>)[key], root) as Record<Key, unknown>;
  const key = path.at(-1)!;
  if (kind === 'getter') {
    Object.defineProperty(parent, key, {
      enumerable: true,
      configurable: true,
      get() {
        throw HOST_ERROR;
      },
    });
  } else {
    parent[key] = hostileValue();
  }
  const restore = () => {
    Object.defineProperty(parent, key, { value: original, enumerable: true, configurable: true, writable: true });
    return root;
  };
  return { answer: root, restore };
}

/** The same tree with the value at `path` replaced by `undefined` (the root: `undefined` itself). */
function withUndefinedAt(tree: unknown, path: Path): unknown {
  if (path.length === 0) return undefined;
  const root = structuredClone(tree);
  const parent = path.slice(0, -1).reduce<unknown>((node, key) => (node as Record<Key, unknown>)[key], root) as Record<Key, unknown>;
  parent[path.at(-1)!] = undefined;
  return root;
}

/** The outcome of a call as comparable data: `ok` + JSON of the result, or the error code. */
async function outcome(run: () => Promise<unknown>): Promise<string> {
  try {
    return `ok ${JSON.stringify(await run())}`;
  } catch (error) {
    expect(error, `a foreign exception escaped: ${String(error)}`).toBeInstanceOf(SessionReferenceError);
    return (error as SessionReferenceError).code;
  }
}

const kind = fc.constantFrom<Kind>('getter', 'revoked', 'proxy', 'malformed');
const malformedValue = fc.oneof(
  fc.anything(),
  fc.constantFrom<unknown>(undefined, null, NaN, -0, Infinity, '', 0, Symbol('host'), () => 'fn', new Map(), [], {}, 10n, { toJSON: () => { throw HOST_ERROR; } }),
);
const text = anyString(12);

/** A valid surface: user, assistant, steering (legacy shapes), checkpoints, enveloped prompts. */
const eventArb = fc.oneof(
  fc.tuple(fc.nat(20), text).map(([seq, t]) => userMessage(seq, [t, 'more'])),
  fc.tuple(fc.nat(20), text).map(([seq, t]) => assistantMessage(seq, t)),
  fc.tuple(fc.nat(20), text, fc.nat(20), fc.nat(20)).map(([seq, t, start, end]) => checkpoint(seq, t, start, end)),
  fc.tuple(fc.nat(20), text).map(([seq, t]) => ({ type: 'steering/message', seq, time: 0, data: { turn: 1, message: t } })),
  fc.tuple(fc.nat(20), text).map(([seq, t]) => ({ type: 'steering/message', seq, time: 0, data: { turn: 1, content: [{ type: 'text', text: t }], source: { kind: 'user' } } })),
  fc.tuple(fc.nat(20), text).map(([seq, t]) => userMessage(seq, 'composed', { envelope: { version: 1, display: [{ type: 'text', text: t }], contexts: [] } })),
);
const snapshotArb = fc.record({
  session: fc.record({ id: fc.constant('source'), createdAt: fc.nat(), cwd: fc.oneof(text, fc.constant(undefined)) }, { requiredKeys: ['id', 'createdAt'] }),
  capturedThroughSeq: fc.oneof(fc.nat(), fc.constant(null)),
  events: fc.array(eventArb, { maxLength: 5 }),
});
const recordsArb = fc.array(
  fc.record({ header: fc.record({ id: fc.string({ minLength: 1, maxLength: 6 }), createdAt: fc.nat(), cwd: fc.constantFrom<string | undefined>('/repo', '/other', '', undefined) }) }),
  { minLength: 1, maxLength: 5 },
).map((records) => records.map((record, i) => ({ header: { ...record.header, id: `${record.header.id}-${i}` } })));

/** A hostile spot: a tree, one of its paths, a kind and a malformed value. */
function hostile<T>(treeArb: fc.Arbitrary<T>) {
  return fc.tuple(treeArb, fc.nat(), kind, malformedValue).map(([tree, pick, k, malformed]) => {
    const paths = pathsOf(tree);
    return { tree, path: paths[pick % paths.length]!, kind: k, malformed };
  });
}

describe('hostile host data is the host\'s fault: READ_FAILED (SPEC §10.1)', () => {
  it('readSurface: a hostile spot anywhere in the snapshot → READ_FAILED, or the result of that spot being undefined', async () => {
    await fc.assert(
      fc.asyncProperty(hostile(snapshotArb), async ({ tree, path, kind: k, malformed }) => {
        const { answer, restore } = inject(tree, path, k, malformed);
        const refs = createSessionReferences({ sessionQuery: { listSessions: async () => [], readSurface: async () => answer } as SessionQuery });
        const inputs = { agent: AGENT, content: CONTENT, references: REFERENCES };
        const before = structuredClone(inputs);
        const got = await outcome(() => refs.prepare(AGENT, CONTENT, REFERENCES));
        if (!got.startsWith('ok')) expect(got).toBe('SESSION_REFERENCE_READ_FAILED');
        if (!got.startsWith('ok')) await expectAtomicFailure(() => refs.prepare(AGENT, CONTENT, REFERENCES), 'SESSION_REFERENCE_READ_FAILED', inputs);
        if (k === 'getter' && got.startsWith('ok')) {
          // A getter never read cannot matter: the result is that of the spot being undefined.
          const plain = createSessionReferences({ sessionQuery: { listSessions: async () => [], readSurface: async () => withUndefinedAt(tree, path) } as SessionQuery });
          expect(got).toBe(await outcome(() => plain.prepare(AGENT, CONTENT, REFERENCES)));
        }
        expect(inputs).toEqual(before);
        expect(restore(), 'the host data is never modified').toEqual(tree);
      }),
      { numRuns: 300 },
    );
  });

  it('listSessions: a hostile spot anywhere in the listing → READ_FAILED, or the result of that spot being undefined', async () => {
    await fc.assert(
      fc.asyncProperty(hostile(recordsArb), async ({ tree, path, kind: k, malformed }) => {
        const { answer, restore } = inject(tree, path, k, malformed);
        const refs = createSessionReferences({ sessionQuery: { listSessions: () => answer, readSurface: async () => null } as unknown as SessionQuery });
        const agent = { ...AGENT };
        const got = await outcome(() => refs.listCandidates(agent));
        if (!got.startsWith('ok')) {
          expect(got).toBe('SESSION_REFERENCE_READ_FAILED');
          await expectAtomicFailure(() => refs.listCandidates(agent), 'SESSION_REFERENCE_READ_FAILED', { agent });
        } else if (k === 'getter') {
          const plain = createSessionReferences({ sessionQuery: { listSessions: async () => withUndefinedAt(tree, path), readSurface: async () => null } as unknown as SessionQuery });
          expect(got).toBe(await outcome(() => plain.listCandidates(agent)));
        }
        expect(agent).toEqual(AGENT);
        expect(restore()).toEqual(tree);
      }),
      { numRuns: 300 },
    );
  });

  it('readTitleSnapshots: a hostile spot anywhere only makes its row fall back to the id, never an error (SPEC §6.4)', async () => {
    const records = ['a', 'b', 'c', 'd'].map((id, i) => ({ header: { id, createdAt: 10 - i } }));
    const rowArb = (sessionId: string) =>
      fc.oneof(
        fc.record({ sessionId: fc.constant(sessionId), status: fc.constant('fulfilled'), value: fc.record({ title: fc.record({ title: text }) }) }),
        fc.record({ sessionId: fc.constant(sessionId), status: fc.constant('rejected'), reason: fc.constant('gone') }),
      );
    const rowsArb = fc.tuple(...records.map((r) => rowArb(r.header.id)));
    await fc.assert(
      fc.asyncProperty(hostile(rowsArb), async ({ tree, path, kind: k, malformed }) => {
        const { answer, restore } = inject(tree, path, k, malformed);
        const query = (titles: unknown) =>
          createSessionReferences({ sessionQuery: { listSessions: async () => records, readSurface: async () => null, readTitleSnapshots: () => titles } as unknown as SessionQuery });
        const got = await outcome(() => query(answer).listCandidates(AGENT));
        expect(got.startsWith('ok'), got).toBe(true);
        const labels = (JSON.parse(got.slice(3)) as Array<{ sessionId: string; label: string }>).map((c) => c.label);
        if (k === 'malformed') {
          expect(labels).toHaveLength(records.length);
        } else {
          // A hostile spot reads like a missing value there: only the row holding it loses its title.
          expect(got).toBe(await outcome(() => query(withUndefinedAt(tree, path)).listCandidates(AGENT)));
        }
        expect(restore()).toEqual(tree);
      }),
      { numRuns: 300 },
    );
  });

  it('a throwing getter on one row of the title answer leaves the other rows\' titles', async () => {
    const rows: unknown[] = ['a', 'b', 'c'].map((sessionId) => ({ sessionId, status: 'fulfilled', value: { title: { title: `T-${sessionId}` } } }));
    Object.defineProperty(rows, 1, {
      get() {
        throw HOST_ERROR;
      },
    });
    const records = ['a', 'b', 'c'].map((id, i) => ({ header: { id, createdAt: 10 - i } }));
    const refs = createSessionReferences({ sessionQuery: { listSessions: async () => records, readSurface: async () => null, readTitleSnapshots: async () => rows } as unknown as SessionQuery });
    expect((await refs.listCandidates(AGENT)).map((c) => c.label)).toEqual(['T-a', 'b', 'T-c']);
  });

  it.each<[string, () => unknown]>([
    ['a revoked proxy as the snapshot', () => revokedProxy()],
    ['a throwing getter on events', () => Object.defineProperty({ capturedThroughSeq: 1 }, 'events', { get: () => { throw HOST_ERROR; } })],
    ['events behind a proxy whose length throws', () => ({ capturedThroughSeq: 1, events: throwingProxy([]) })],
    ['an event whose data getter throws', () => ({ capturedThroughSeq: 1, events: [Object.defineProperty({ type: 'user/message', seq: 1, surfaceOp: 'append' }, 'data', { get: () => { throw HOST_ERROR; } })] })],
    ['a content block that is a revoked proxy', () => ({ capturedThroughSeq: 1, events: [{ type: 'user/message', seq: 1, data: { source: { kind: 'user' }, content: [revokedProxy()] } }] })],
    ['a session whose cwd getter throws', () => ({ capturedThroughSeq: 1, events: [], session: Object.defineProperty({}, 'cwd', { get: () => { throw HOST_ERROR; } }) })],
  ])('readSurface answering %s: READ_FAILED naming the source, never INVALID_ARGUMENT', async (_, answer) => {
    const refs = createSessionReferences({ sessionQuery: { listSessions: async () => [], readSurface: async () => answer() } as unknown as SessionQuery });
    const error = await expectAtomicFailure(() => refs.prepare(AGENT, CONTENT, REFERENCES), 'SESSION_REFERENCE_READ_FAILED', { agent: AGENT, content: CONTENT, references: REFERENCES });
    expect(error.message).toContain('"source"');
    expect(error.cause).toBeDefined();
  });
});

describe('isSessionReferenceError never throws, whatever it is given (SPEC §10.1)', () => {
  // Factories, not values: fast-check itself would trip over a hostile proxy it generated.
  const hostileValues = fc.oneof(
    fc.anything().map((value) => () => value),
    fc.constantFrom<() => unknown>(
      () => revokedProxy(),
      () => throwingProxy({}),
      () => throwingProxy(new SessionReferenceError('SESSION_REFERENCE_READ_FAILED', 'x')),
      () => Object.defineProperty({ name: 'SessionReferenceError' }, 'code', { get: () => { throw HOST_ERROR; } }),
      () => Object.defineProperty({ name: 'SessionReferenceError', code: 'SESSION_REFERENCE_READ_FAILED' }, 'message', { get: () => { throw HOST_ERROR; } }),
      () => Object.defineProperty({}, 'name', { get: () => { throw HOST_ERROR; } }),
      () => Object.create(null),
      () => Symbol('x'),
      () => ({ name: 'SessionReferenceError', code: { toString: () => { throw HOST_ERROR; } }, message: 'm' }),
    ),
  );

  it('returns a boolean for any value: hostile proxies, throwing getters, primitives', () => {
    fc.assert(
      fc.property(hostileValues, (make) => {
        expect(typeof isSessionReferenceError(make())).toBe('boolean');
      }),
      { numRuns: 500 },
    );
  });

  it('still recognizes instances and their toJSON() form, and nothing that merely looks alike', () => {
    const error = new SessionReferenceError('SESSION_REFERENCE_READ_FAILED', 'x');
    expect(isSessionReferenceError(error)).toBe(true);
    expect(isSessionReferenceError(JSON.parse(JSON.stringify(error)))).toBe(true);
    expect(isSessionReferenceError(throwingProxy(error))).toBe(false);
    expect(isSessionReferenceError({ name: 'SessionReferenceError', code: 'SESSION_REFERENCE_NOPE', message: 'x' })).toBe(false);
  });
});

// ---------------------------------------------------------------------------------------------
// SPEC §10.3: a sparse array costs what it holds

const HUGE = 2 ** 32 - 1;

/** An array of `length` holding `entries` at `indices` (sorted, distinct, below `length`) only. */
function sparse<T>(indices: number[], entries: T[], length = HUGE): T[] {
  const array: T[] = [];
  array.length = length;
  indices.forEach((index, k) => (array[index] = entries[k]!));
  return array;
}

/** 1–4 distinct sorted indices anywhere below 2³²−1, the first one not 0 (so the array has a hole). */
const sparseIndices = fc.uniqueArray(fc.integer({ min: 1, max: HUGE - 1 }), { minLength: 1, maxLength: 4 }).map((indices) => indices.sort((a, b) => a - b));

describe('bounded work on host data: sparse arrays cost what they hold (SPEC §10.3)', () => {
  const snapshotHost = (events: unknown) =>
    createSessionReferences({ sessionQuery: { listSessions: async () => [], readSurface: async () => ({ capturedThroughSeq: 9, events }) } as unknown as SessionQuery });

  it('a sparse events array of length 2³²−1 gives exactly the snapshot of its entries, in index order', async () => {
    await fc.assert(
      fc.asyncProperty(sparseIndices, fc.array(eventArb, { minLength: 4, maxLength: 4 }), async (indices, events) => {
        const present = events.slice(0, indices.length);
        const got = await snapshotHost(sparse(indices, present)).prepare(AGENT, CONTENT, REFERENCES);
        const want = await snapshotHost(present).prepare(AGENT, CONTENT, REFERENCES);
        expect(got).toEqual(want);
      }),
      { numRuns: 40 },
    );
  });

  it('sparse content blocks, envelope displays and assistant content read as their entries', async () => {
    const blocks = (texts: string[], indices: number[]) => sparse(indices, texts.map((t) => ({ type: 'text', text: t })));
    const events = [
      { type: 'user/message', seq: 1, data: { source: { kind: 'user' }, content: blocks(['u1', 'u2'], [7, 4_000_000_000]) } },
      { type: 'assistant/message', seq: 2, data: { message: { content: blocks(['a1'], [HUGE - 1]) } } },
      { type: 'user/message', seq: 3, data: { source: { kind: 'user' }, content: [], envelope: { display: blocks(['d1', 'd2'], [1, 2]) } } },
      { type: 'steering/message', seq: 4, data: { turn: 1, content: blocks(['s1'], [99]) } },
    ];
    const { context } = await snapshotHost(sparse([3, 1e9, 3e9, 4e9], events)).prepare(AGENT, CONTENT, REFERENCES);
    expect(context!.metadata.references[0]!.originalMessages).toBe(4);
    expect(context!.content[0].text).toContain('[{"role":"user","text":"u1\\nu2"},{"role":"assistant","text":"a1"},{"role":"user","text":"d1\\nd2"},{"role":"user","text":"s1"}]');
  });

  it('a sparse listSessions answer is READ_FAILED naming its first hole, found at once', async () => {
    await fc.assert(
      fc.asyncProperty(sparseIndices, async (indices) => {
        const records = sparse(indices, indices.map((index) => ({ header: { id: `s${index}`, createdAt: 1 } })));
        const refs = createSessionReferences({ sessionQuery: { listSessions: async () => records, readSurface: async () => null } as unknown as SessionQuery });
        const error = await expectAtomicFailure(() => refs.listCandidates(AGENT), 'SESSION_REFERENCE_READ_FAILED', { agent: AGENT });
        expect(error.message).toContain('record 0 is missing');
      }),
      { numRuns: 40 },
    );
  });

  it('a sparse title answer gives the titles of the rows it holds', async () => {
    const records = ['a', 'b', 'c'].map((id, i) => ({ header: { id, createdAt: 10 - i } }));
    const rows = sparse([5, 3e9], ['a', 'c'].map((sessionId) => ({ sessionId, status: 'fulfilled', value: { title: { title: `T-${sessionId}` } } })));
    const refs = createSessionReferences({ sessionQuery: { listSessions: async () => records, readSurface: async () => null, readTitleSnapshots: async () => rows } as unknown as SessionQuery });
    expect((await refs.listCandidates(AGENT)).map((c) => c.label)).toEqual(['T-a', 'b', 'T-c']);
  });

  it('a malformed snapshot holding a huge sparse array fails at once with a short message', async () => {
    const events = sparse([HUGE - 1], [userMessage(1, 'x')]);
    const refs = createSessionReferences({ sessionQuery: { listSessions: async () => [], readSurface: async () => ({ capturedThroughSeq: 'x', events }) } as unknown as SessionQuery });
    await expectAtomicFailure(() => refs.prepare(AGENT, CONTENT, REFERENCES), 'SESSION_REFERENCE_READ_FAILED', { agent: AGENT, content: CONTENT, references: REFERENCES });
  });

  it('a proxy over a sparse array is read through its own keys, in index order', async () => {
    const target = sparse([10, 2e9], [userMessage(1, 'first'), userMessage(2, 'second')]);
    const events = new Proxy(target, { ownKeys: (t) => Reflect.ownKeys(t).reverse() });
    const { context } = await snapshotHost(events).prepare(AGENT, CONTENT, REFERENCES);
    expect(context!.content[0].text).toContain('[{"role":"user","text":"first"},{"role":"user","text":"second"}]');
  });
});
