/**
 * The edge service's client for front ends (SPEC §17.9), in every runtime of the matrix: an
 * injected `fetch` answers with real `Response`s. A small stand-in of the service's routes (SPEC
 * §17.4) answers from a local service, so the client's results are compared with the local
 * service's own; tables pin the mapping of statuses and bodies back to error codes.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createEdgeClient, EDGE_CLIENT_MAX_RESPONSE_BYTES, type EdgeClient, type EdgeResponseCause } from '../src/edge/client.js';
import {
  createSessionReferences,
  formatSessionReferenceMention,
  isSessionReferenceError,
  SESSION_REFERENCE_ERROR_CODES,
  SessionReferenceError,
  type SessionReferenceErrorCode,
  type SessionReferences,
  type UserMessage,
} from '../src/index.js';
import { expectRejectCode } from './helpers.js';
import { assistantMessage, fakeQuery, userMessage, type FakeSession } from './sessions.js';

const sessions: FakeSession[] = [
  { header: { id: 'alpha', createdAt: 3, cwd: '/repo' }, title: 'Schema migration', events: [userMessage(1, 'Add a <column>?'), assistantMessage(2, 'Yes.')] },
  { header: { id: 'beta', createdAt: 2 }, events: [userMessage(1, 'old'), assistantMessage(2, 'answer')] },
  { header: { id: 'target', createdAt: 1, cwd: '/repo' }, events: [userMessage(1, 'here')] },
];
const agent = { id: 'target', cwd: '/repo' };
const message = (text: string): UserMessage => ({ id: 'm1', role: 'user', content: [{ type: 'text', text }], source: { kind: 'user' } });
const BASE = 'https://refs.example.test/api';

interface Seen {
  url: URL;
  method: string;
  headers: Headers;
  body: unknown;
  signal: AbortSignal | undefined;
}

const json = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

/**
 * A stand-in of the service's routes over a local service (SPEC §17.4, as the Worker answers
 * them): `/candidates`, `/search` (canned hits: the engine is not what is tested here) and
 * `/prepare`; a `SessionReferenceError` becomes `{ code, message }` with the Worker's statuses.
 */
function standIn(refs: SessionReferences, seen: Seen[]) {
  return async (input: string, init: RequestInit): Promise<Response> => {
    const url = new URL(input);
    const body = typeof init.body === 'string' ? (JSON.parse(init.body) as Record<string, unknown>) : undefined;
    seen.push({ url, method: init.method ?? 'GET', headers: new Headers(init.headers), body, signal: init.signal ?? undefined });
    // As the Worker: the agent is the session `as` names, with the cwd given, else the cwd its header holds.
    const id = url.searchParams.get('as') ?? (body?.as as string);
    const cwd = url.searchParams.get('cwd') ?? (body?.cwd as string | undefined) ?? sessions.find((session) => session.header.id === id)?.header.cwd;
    const as = cwd ? { id, cwd } : { id };
    try {
      if (url.pathname === '/api/candidates') {
        const limit = url.searchParams.get('limit');
        return json(await refs.listCandidates(as, url.searchParams.get('q') ?? undefined, limit === null ? undefined : Number(limit)));
      }
      if (url.pathname === '/api/search') return json([{ ...(await refs.listCandidates(as, '', 1))[0], score: 1.5, snippets: [{ role: 'user', seq: 1, text: 'Add a <column>?', highlights: [[6, 7]] }] }]);
      if (url.pathname === '/api/prepare') {
        const composed = await refs.referenceUserMessage(as, body!.message as UserMessage);
        return json({ message: composed, metadata: composed.envelope?.contexts[0]?.metadata ?? null });
      }
      return json({ code: 'ROUTE_NOT_FOUND', message: `no route ${url.pathname}` }, 404);
    } catch (error) {
      const { code, message: text } = error as SessionReferenceError;
      return json({ code, message: text }, code === 'SESSION_REFERENCE_READ_FAILED' ? 502 : 400);
    }
  };
}

function setup(options: { token?: string; matchTitles?: boolean } = {}) {
  const local = createSessionReferences({ sessionQuery: fakeQuery(sessions) });
  const seen: Seen[] = [];
  const client = createEdgeClient({ url: BASE, fetch: standIn(local, seen), ...options });
  return { local, client, seen };
}

/** A client whose every request is answered by `answer`. */
function answering(answer: () => Response | Promise<Response>): EdgeClient {
  return createEdgeClient({ url: BASE, fetch: async () => answer() });
}

describe('edge client: the local service’s answers over the routes (SPEC §17.9)', () => {
  it('sends the matching options to /candidates; a base URL ending in / keeps its path', async () => {
    const seen: Seen[] = [];
    const client = createEdgeClient({ url: `${BASE}/`, matchTitles: true, candidateMatch: 'words', fetch: standIn(createSessionReferences({ sessionQuery: fakeQuery(sessions) }), seen) });
    await client.listCandidates(agent, 'schema');
    expect(seen[0]!.url.href).toBe(`${BASE}/candidates?as=target&cwd=%2Frepo&q=schema&titles=1&match=words`);
  });

  it('listCandidates is GET /candidates and gives the local rows', async () => {
    const { local, client, seen } = setup({ token: 'tok.en-1' });
    expect(await client.listCandidates(agent, 'a', 5)).toEqual(await local.listCandidates(agent, 'a', 5));
    expect(await client.listCandidates(agent)).toEqual(await local.listCandidates(agent));
    const [first, second] = seen;
    expect(first!.method).toBe('GET');
    expect(first!.url.pathname).toBe('/api/candidates');
    expect([...first!.url.searchParams]).toEqual([['as', 'target'], ['cwd', '/repo'], ['q', 'a'], ['limit', '5']]);
    expect(first!.headers.get('authorization')).toBe('Bearer tok.en-1');
    expect(first!.headers.get('accept')).toBe('application/json');
    expect([...second!.url.searchParams]).toEqual([['as', 'target'], ['cwd', '/repo']]);
    // An agent without a cwd sends cwd= empty: the service then ranks by none, as locally, not by
    // the cwd of its uploaded row (the second probe's N2).
    await client.listCandidates({ id: 'target' });
    await client.listCandidates({ id: 'target', cwd: '' });
    expect(seen.slice(2).map((request) => [...request.url.searchParams])).toEqual([[['as', 'target'], ['cwd', '']], [['as', 'target'], ['cwd', '']]]);
  });

  it('works detached, as the editor’s suggest.fetch (SPEC §15.9)', async () => {
    const { local, client } = setup();
    const { listCandidates } = client;
    const suggest = { fetch: (query: string, signal: AbortSignal) => listCandidates(agent, query, undefined, signal) };
    expect(await suggest.fetch('', new AbortController().signal)).toEqual(await local.listCandidates(agent, ''));
  });

  it('prepare gives the local service’s content and context, by one POST /prepare', async () => {
    const { local, client, seen } = setup();
    const content = [{ type: 'text' as const, text: 'compare them' }, { type: 'image', url: 'x' }];
    const references = [{ sessionId: 'alpha', label: 'Schema [v2] \\ ]' }, { sessionId: 'beta' }, { sessionId: 'alpha', label: 'dup' }];
    const remote = await client.prepare(agent, content, references);
    expect(remote).toEqual(await local.prepare(agent, content, references));
    expect(remote.content).not.toBe(content);
    expect(seen).toHaveLength(1);
    expect(seen[0]!.method).toBe('POST');
    expect(seen[0]!.headers.get('content-type')).toBe('application/json');
    expect(seen[0]!.body).toMatchObject({ as: 'target' });
    // No references: the copied content, and no request (as locally, no read).
    expect(await client.prepare(agent, content, [])).toEqual({ content });
    expect(seen).toHaveLength(1);
  });

  it('referenceUserMessage gives the local composed message; one without mentions is composed here', async () => {
    const { local, client, seen } = setup();
    const cited = message(`see ${formatSessionReferenceMention({ sessionId: 'alpha', label: 'Schema' })} and ${formatSessionReferenceMention({ sessionId: 'beta' })}`);
    expect(await client.referenceUserMessage(agent, cited)).toEqual(await local.referenceUserMessage(agent, cited));
    expect(seen[0]!.body).toEqual({ as: 'target', cwd: '/repo', message: cited });
    const plain = message('no mention here');
    expect(await client.referenceUserMessage(agent, plain)).toEqual(await local.referenceUserMessage(agent, plain));
    expect(seen).toHaveLength(1);
  });

  it('searchSessions is GET /search?as=&q=&limit= and gives the hits', async () => {
    const { client, seen } = setup();
    const hits = await client.searchSessions(agent, 'column', { limit: 3 });
    expect(hits).toEqual([{ sessionId: 'alpha', label: 'Schema migration', cwd: '/repo', createdAt: 3, mention: expect.any(String), score: 1.5, snippets: [{ role: 'user', seq: 1, text: 'Add a <column>?', highlights: [[6, 7]] }] }]);
    expect(Object.keys(hits[0]!)).toEqual(['sessionId', 'label', 'cwd', 'createdAt', 'mention', 'score', 'snippets']);
    expect([...seen[0]!.url.searchParams]).toEqual([['as', 'target'], ['cwd', '/repo'], ['q', 'column'], ['limit', '3']]);
  });
});

describe('edge client: arguments checked as the local service checks them, before any request', () => {
  const revoked = Proxy.revocable({}, {});
  revoked.revoke();
  const calls: Array<[string, (refs: EdgeClient) => Promise<unknown>]> = [
    ['agent without id', (r) => r.listCandidates({} as never)],
    ['agent a revoked proxy', (r) => r.listCandidates(revoked.proxy as never)],
    ['query not a string', (r) => r.listCandidates(agent, 5 as never)],
    ['limit 0', (r) => r.listCandidates(agent, '', 0)],
    ['limit 1.5', (r) => r.listCandidates(agent, '', 1.5)],
    ['signal not a signal', (r) => r.listCandidates(agent, '', 2, {} as never)],
    ['search query missing', (r) => r.searchSessions(agent, undefined as never)],
    ['search options not an object', (r) => r.searchSessions(agent, 'x', 3 as never)],
    ['search unknown option', (r) => r.searchSessions(agent, 'x', { limt: 3 } as never)],
    ['search limit -1', (r) => r.searchSessions(agent, 'x', { limit: -1 })],
    ['prepare content not an array', (r) => r.prepare(agent, 'x' as never, [])],
    ['prepare references not an array', (r) => r.prepare(agent, [], {} as never)],
    ['prepare reference without id', (r) => r.prepare(agent, [], [{ label: 'x' } as never])],
    ['prepare self reference', (r) => r.prepare(agent, [], [{ sessionId: 'target' }])],
    ['prepare bad signal', (r) => r.prepare(agent, [], [], 'x' as never)],
    ['message not a user message', (r) => r.referenceUserMessage(agent, { ...message('x'), role: 'assistant' } as never)],
    ['message with an envelope', (r) => r.referenceUserMessage(agent, { ...message('x'), envelope: { version: 1, display: [], contexts: [] } })],
    ['message with a malformed mention', (r) => r.referenceUserMessage(agent, message('see @[x](dsh-session:%%%)'))],
    ['message citing itself', (r) => r.referenceUserMessage(agent, message(formatSessionReferenceMention({ sessionId: 'target' })))],
  ];
  it.each(calls)('%s: same code and message, no request', async (_name, call) => {
    const { local, client, seen } = setup();
    const expected = await call(local as unknown as EdgeClient).then(
      () => undefined,
      (error: unknown) => error as SessionReferenceError,
    );
    expect(expected).toBeInstanceOf(SessionReferenceError);
    const error = await expectRejectCode(call(client), expected!.code);
    expect(error.message).toBe(expected!.message);
    expect(seen).toEqual([]);
  });

  it('an aborted signal rejects CANCELLED with no request', async () => {
    const { client, seen } = setup();
    const controller = new AbortController();
    controller.abort(new Error('gone'));
    const error = await expectRejectCode(client.listCandidates(agent, '', undefined, controller.signal), 'SESSION_REFERENCE_CANCELLED');
    expect((error.cause as Error).message).toBe('gone');
    await expectRejectCode(client.prepare(agent, [], [{ sessionId: 'alpha' }], controller.signal), 'SESSION_REFERENCE_CANCELLED');
    expect(seen).toEqual([]);
  });
});

describe('edge client: answers mapped back to error codes', () => {
  const table: Array<[string, () => Response, SessionReferenceErrorCode, string | RegExp]> = [
    ['400 with a library code', () => json({ code: 'SESSION_REFERENCE_INVALID_ARGUMENT', message: 'limit must be…' }, 400), 'SESSION_REFERENCE_INVALID_ARGUMENT', 'limit must be…'],
    ['404 unknown session', () => json({ code: 'SESSION_REFERENCE_NOT_FOUND', message: 'no session "x"' }, 404), 'SESSION_REFERENCE_NOT_FOUND', 'no session "x"'],
    ['413 budget', () => json({ code: 'SESSION_REFERENCE_BUDGET_EXCEEDED', message: 'too big' }, 413), 'SESSION_REFERENCE_BUDGET_EXCEEDED', 'too big'],
    ['502 read failure', () => json({ code: 'SESSION_REFERENCE_READ_FAILED', message: 'r2 down' }, 502), 'SESSION_REFERENCE_READ_FAILED', 'r2 down'],
    ['502 broken log', () => json({ code: 'SESSION_REFERENCE_INVALID_LOG', message: 'line 3' }, 502), 'SESSION_REFERENCE_INVALID_LOG', 'line 3'],
    ['401 UNAUTHENTICATED', () => json({ code: 'UNAUTHENTICATED', message: 'token expired' }, 401), 'SESSION_REFERENCE_INVALID_CONFIG', 'GET /candidates answered 401: UNAUTHENTICATED: token expired'],
    ['401 without a body', () => new Response(null, { status: 401 }), 'SESSION_REFERENCE_INVALID_CONFIG', 'GET /candidates answered 401'],
    ['403 from a proxy, as HTML', () => new Response('<h1>Forbidden</h1>', { status: 403 }), 'SESSION_REFERENCE_INVALID_CONFIG', 'GET /candidates answered 403'],
    ['404 no such route', () => json({ code: 'ROUTE_NOT_FOUND', message: 'no route' }, 404), 'SESSION_REFERENCE_INVALID_CONFIG', /ROUTE_NOT_FOUND: no route$/],
    ['405', () => json({ code: 'METHOD_NOT_ALLOWED', message: 'use GET' }, 405), 'SESSION_REFERENCE_INVALID_CONFIG', /405/],
    ['413 request too large', () => json({ code: 'REQUEST_TOO_LARGE', message: 'over 1 MiB' }, 413), 'SESSION_REFERENCE_INVALID_ARGUMENT', /413: REQUEST_TOO_LARGE: over 1 MiB/],
    ['429', () => new Response('slow down', { status: 429 }), 'SESSION_REFERENCE_READ_FAILED', 'GET /candidates answered 429'],
    ['499', () => json({ code: 'CANCELLED', message: 'client went away' }, 499), 'SESSION_REFERENCE_CANCELLED', /499/],
    ['500 INTERNAL_ERROR', () => json({ code: 'INTERNAL_ERROR', message: 'boom' }, 500), 'SESSION_REFERENCE_READ_FAILED', /500: INTERNAL_ERROR: boom/],
    ['503 HTML', () => new Response('<html>down</html>', { status: 503 }), 'SESSION_REFERENCE_READ_FAILED', 'GET /candidates answered 503'],
    ['200 HTML', () => new Response('<html>login</html>', { status: 200 }), 'SESSION_REFERENCE_READ_FAILED', /not JSON/],
    ['200 invalid UTF-8', () => new Response(new Uint8Array([0x5b, 0xff, 0x5d]), { status: 200 }), 'SESSION_REFERENCE_READ_FAILED', /not UTF-8/],
    ['200 an object', () => json({ rows: [] }), 'SESSION_REFERENCE_READ_FAILED', /something other than an array/],
    ['200 a bad row', () => json([{ sessionId: 1 }]), 'SESSION_REFERENCE_READ_FAILED', /not \{ sessionId, label, cwd\?, createdAt, mention \}/],
  ];
  it.each(table)('%s', async (_name, answer, code, message) => {
    const error = await expectRejectCode(answering(answer).listCandidates(agent), code);
    if (typeof message === 'string') expect(error.message).toBe(message);
    else expect(error.message).toMatch(message);
  });

  it('keeps the server’s cause, and the status as cause of a refusal', async () => {
    const wrapped = await expectRejectCode(
      answering(() => json({ code: 'SESSION_REFERENCE_READ_FAILED', message: 'outer', cause: { code: 'SESSION_REFERENCE_INVALID_LOG', message: 'inner' } }, 502)).listCandidates(agent),
      'SESSION_REFERENCE_READ_FAILED',
    );
    expect(wrapped.cause).toBeInstanceOf(SessionReferenceError);
    expect((wrapped.cause as SessionReferenceError).code).toBe('SESSION_REFERENCE_INVALID_LOG');
    const refused = await expectRejectCode(answering(() => json({ code: 'UNAUTHENTICATED', message: 'no token' }, 401)).listCandidates(agent), 'SESSION_REFERENCE_INVALID_CONFIG');
    expect(refused.cause).toEqual({ status: 401, code: 'UNAUTHENTICATED', message: 'no token' } satisfies EdgeResponseCause);
  });

  it('a network failure is READ_FAILED, cause kept', async () => {
    const failure = new TypeError('fetch failed');
    const error = await expectRejectCode(createEdgeClient({ url: BASE, fetch: () => Promise.reject(failure) }).listCandidates(agent), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.message).toBe('GET /candidates failed: "fetch failed"');
    expect(error.cause).toBe(failure);
  });

  it('a body over maxResponseBytes is READ_FAILED, declared or not', async () => {
    const client = (response: () => Response) => createEdgeClient({ url: BASE, maxResponseBytes: 16, fetch: async () => response() });
    await expectRejectCode(client(() => json(['x'.repeat(40)])).listCandidates(agent), 'SESSION_REFERENCE_READ_FAILED');
    const stream = () =>
      new Response(new ReadableStream({ pull: (controller) => controller.enqueue(new Uint8Array(8).fill(0x20)) }), { status: 200 });
    const error = await expectRejectCode(client(stream).listCandidates(agent), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.message).toBe('GET /candidates answered a body over 16 bytes');
    expect(EDGE_CLIENT_MAX_RESPONSE_BYTES).toBe(64 * 1024 * 1024);
  });

  it('an abort while the request is pending rejects CANCELLED at once and aborts the request', async () => {
    let requestSignal: AbortSignal | undefined;
    let started!: () => void;
    const pending = new Promise<void>((resolve) => (started = resolve));
    const client = createEdgeClient({
      url: BASE,
      fetch: (_input, init) => {
        requestSignal = init.signal ?? undefined;
        started();
        return new Promise<Response>(() => undefined); // never answers
      },
    });
    const controller = new AbortController();
    const call = client.searchSessions(agent, 'x', { signal: controller.signal });
    await pending;
    controller.abort(new Error('newer query'));
    const error = await expectRejectCode(call, 'SESSION_REFERENCE_CANCELLED');
    expect((error.cause as Error).message).toBe('newer query');
    expect(requestSignal!.aborted).toBe(true);
  });

  it('a signal that is not an AbortSignal but has its shape (SPEC §10.2) works, and keeps no listener', async () => {
    const listeners = new Set<() => void>();
    const signal = { aborted: false, reason: undefined as unknown, addEventListener: (_: string, l: () => void) => listeners.add(l), removeEventListener: (_: string, l: () => void) => listeners.delete(l) };
    const { local, client } = setup();
    expect(await client.listCandidates(agent, '', undefined, signal as unknown as AbortSignal)).toEqual(await local.listCandidates(agent, ''));
    expect(listeners.size).toBe(0);
  });

  it('hostile answers end as a SessionReferenceError, never another exception (fast-check; prints its seed)', async () => {
    const body = fc.oneof(
      fc.json(),
      fc.string(),
      fc.record({ code: fc.oneof(fc.constantFrom(...SESSION_REFERENCE_ERROR_CODES), fc.string()), message: fc.oneof(fc.string(), fc.integer()), cause: fc.anything() }).map((value) => JSON.stringify(value)),
      fc.array(fc.record({ sessionId: fc.string(), label: fc.anything(), createdAt: fc.double(), mention: fc.string() })).map((value) => JSON.stringify(value)),
    );
    const status = fc.constantFrom(200, 201, 204, 301, 400, 401, 403, 404, 413, 429, 499, 500, 502, 503);
    await fc.assert(
      fc.asyncProperty(body, status, fc.constantFrom<keyof EdgeClient>('listCandidates', 'searchSessions', 'prepare', 'referenceUserMessage'), async (text, code, method) => {
        const client = answering(() => new Response(code === 204 ? null : text, { status: code }));
        const call =
          method === 'listCandidates' ? client.listCandidates(agent)
          : method === 'searchSessions' ? client.searchSessions(agent, 'q')
          : method === 'prepare' ? client.prepare(agent, [], [{ sessionId: 'alpha' }])
          : client.referenceUserMessage(agent, message(formatSessionReferenceMention({ sessionId: 'alpha' })));
        const outcome = await call.then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
        if ('error' in outcome) {
          expect(outcome.error).toBeInstanceOf(SessionReferenceError);
          expect(isSessionReferenceError(outcome.error)).toBe(true);
        } else {
          expect(code).toBeGreaterThanOrEqual(200);
          expect(code).toBeLessThan(300);
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('edge client: options and tokens', () => {
  it('refuses bad options with INVALID_CONFIG, never showing a secret', () => {
    const bad: Array<[unknown, RegExp]> = [
      [undefined, /options must be an object/],
      [{ url: BASE, tokn: 'x' }, /unknown option, got "tokn"/],
      [{ url: 'ftp://x.test/' }, /url must be an absolute http: or https: URL/],
      [{ url: 'not a url' }, /url must be an absolute http: or https: URL/],
      [{ url: 'https://user:hunter2@x.test/' }, /must not carry a user name or password/],
      [{ url: `${BASE}?as=1` }, /no query or fragment/],
      [{ url: BASE, token: 'two words' }, /token must be a string of visible ASCII/],
      [{ url: BASE, token: 'a', getToken: () => 'b' }, /not both/],
      [{ url: BASE, getToken: 'x' }, /getToken must be a function/],
      [{ url: BASE, fetch: {} }, /fetch must be a function/],
      [{ url: BASE, matchTitles: 1 }, /matchTitles must be a boolean/],
      [{ url: BASE, candidateMatch: 'prefix' }, /candidateMatch must be 'substring' or 'words'/],
      [{ url: BASE, maxResponseBytes: 0 }, /maxResponseBytes must be a positive safe integer/],
    ];
    for (const [options, message] of bad) {
      let thrown: unknown;
      try {
        createEdgeClient(options as never);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, String(message)).toBeInstanceOf(SessionReferenceError);
      expect((thrown as SessionReferenceError).code).toBe('SESSION_REFERENCE_INVALID_CONFIG');
      expect((thrown as SessionReferenceError).message).toMatch(message);
      expect((thrown as SessionReferenceError).message).not.toMatch(/hunter2|two words/);
    }
  });

  it('getToken is asked before every request; none sends no Authorization; a failure is READ_FAILED', async () => {
    const tokens = ['first', undefined, 'bad token', 'x'];
    const seen: Seen[] = [];
    const local = createSessionReferences({ sessionQuery: fakeQuery(sessions) });
    const client = createEdgeClient({ url: BASE, getToken: () => tokens.shift(), fetch: standIn(local, seen) });
    await client.listCandidates(agent);
    await client.listCandidates(agent);
    expect(seen.map((request) => request.headers.get('authorization'))).toEqual(['Bearer first', null]);
    const error = await expectRejectCode(client.listCandidates(agent), 'SESSION_REFERENCE_READ_FAILED');
    expect(error.message).not.toContain('bad token');
    const throwing = createEdgeClient({ url: BASE, getToken: async () => Promise.reject(new Error('signed out')), fetch: standIn(local, seen) });
    expect((await expectRejectCode(throwing.listCandidates(agent), 'SESSION_REFERENCE_READ_FAILED')).message).toBe('getToken() failed: "signed out"');
    expect(seen).toHaveLength(2);
  });
});
