/**
 * `dsh-session-reference/dsh` inside the real dsh host stack (SPEC §14): sessions built with dsh's
 * own SessionStore, SessionQueryEngine and compaction marker (§14.5), the plugin mounted in a real
 * Cordis Context, prompts rewritten by the real `agent/pre-step` waterfall.
 */
import { Context, symbols } from '@deepseek-ai/cordis';
import { remoteMethods } from '@deepseek-ai/dsh-typert-protocol';
import { reactive } from 'vue';
import { describe, expect, it } from 'vitest';
import SessionReferenceResolverDefault, * as dsh from '../src/dsh/index.js';
import * as root from '../src/index.js';
import { formatSessionReferenceMention, REFERENCE_WARNING, type SessionReferenceErrorCode } from '../src/index.js';
import type { UserMessage } from '../src/types.js';
import { Conversation, hangingQuery, mountHost, preStep, prompt } from './dsh-host.js';

const { SessionReferenceResolver } = dsh;

/** The exact §9.2 text for serialized references (each already tag-safe JSON). */
const recallText = (...refs: string[]) => `## Referenced sessions\n\n${REFERENCE_WARNING}\n\n<referenced-sessions>\n[${refs.join(',')}]\n</referenced-sessions>`;
const mention = (conversation: Conversation, label?: string) => formatSessionReferenceMention({ sessionId: conversation.id, ...(label === undefined ? {} : { label }) });
const textOf = (message: UserMessage) => message.content.map((block) => (block as { text: string }).text).join('');

async function expectRejection(promise: Promise<unknown>, code: SessionReferenceErrorCode) {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(root.SessionReferenceError);
  expect((error as root.SessionReferenceError).code).toBe(code);
  return error as root.SessionReferenceError;
}

/** A host with a cited session (`source`, titled, in /repo) and the session the user types in (`target`). */
async function scene(config?: root.SessionReferenceConfig) {
  const host = await mountHost(config);
  const source = new Conversation(host, '/repo').say('Should orders.total be <numeric>?', 'Yes: numeric(12,2).').title('Schema\nmigration');
  const target = new Conversation(host, '/repo');
  return { host, source, target };
}

describe('the ./dsh entry (SPEC §14.2)', () => {
  it('default-exports the plugin class, which needs sessionQuery and provides sessionReferenceResolver', async () => {
    expect(SessionReferenceResolverDefault).toBe(SessionReferenceResolver);
    expect(SessionReferenceResolver.inject).toEqual(['sessionQuery']);
    const { host } = await scene();
    expect(host.resolver).toBeDefined();
    expect(typeof host.resolver.prepare).toBe('function');
    expect(host.resolver.config).toEqual({ maxReferences: 3, candidateLimit: 50, maxReferenceBytes: 65536, matchTitles: true, candidateMatch: 'substring', maxIndexBytes: 262144, matchContent: false });
  });

  it('re-exports the wire functions and SessionReferenceError of the root entry, and the host package limits', () => {
    for (const name of ['encodeSessionReferenceUri', 'decodeSessionReferenceUri', 'formatSessionReferenceMention', 'parseSessionReferenceText', 'SESSION_REFERENCE_SCHEME', 'SessionReferenceError'] as const) {
      expect(dsh[name]).toBe(root[name]);
    }
    expect([dsh.MAX_REFERENCES, dsh.DEFAULT_CANDIDATE_LIMIT, dsh.DEFAULT_MAX_REFERENCE_BYTES]).toEqual([3, 50, 65536]);
  });

  it.each<[string, unknown, string]>([
    ['maxReferences 4', { maxReferences: 4 }, 'maxReferences'],
    ['candidateLimit 0', { candidateLimit: 0 }, 'candidateLimit'],
    ['matchTitles "yes"', { matchTitles: 'yes' }, 'matchTitles'],
    ['matchContent "yes"', { matchContent: 'yes' }, 'matchContent'],
    // dsh's @ menu keeps its substring rule (SPEC §15.10).
    ['candidateMatch "words"', { candidateMatch: 'words' }, 'candidateMatch'],
    ['candidateMatch "nope"', { candidateMatch: 'nope' }, 'candidateMatch'],
    ['an unknown key', { maxBytes: 1 }, 'maxBytes'],
    ['a config that is not an object', 'big', 'config'],
  ])('rejects %s with INVALID_CONFIG naming the key, and provides nothing', (_, config, key) => {
    const ctx = new Context() as Context & Record<string, any>;
    let error: unknown;
    try {
      new SessionReferenceResolver(ctx, config as never);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(root.SessionReferenceError);
    expect((error as root.SessionReferenceError).code).toBe('SESSION_REFERENCE_INVALID_CONFIG');
    expect((error as Error).message).toContain(key);
    expect(ctx.get('sessionReferenceResolver')).toBeUndefined();
  });

  it('turns matchTitles off only when the config says false', async () => {
    expect((await mountHost({ matchTitles: false })).resolver.config.matchTitles).toBe(false);
    expect((await mountHost({ matchTitles: undefined })).resolver.config.matchTitles).toBe(true);
  });

  it("keeps dsh's substring rule: candidateMatch 'substring' is accepted and is the default", async () => {
    expect((await mountHost({ candidateMatch: 'substring' })).resolver.config.candidateMatch).toBe('substring');
    expect((await mountHost({})).resolver.config.candidateMatch).toBe('substring');
  });
});

describe('the agent/pre-step listener (SPEC §14.3)', () => {
  it('rewrites a direct prompt with the same id, then exactly one recall message with the §9.2 text', async () => {
    const { host, source, target } = await scene();
    const message = prompt(`Apply ${mention(source, 'the schema')} here.`);
    const decision = await preStep(host, target.agent, [message]);
    expect(decision.kind).toBe('enter');
    const entered = (decision as { messages: UserMessage[] }).messages;
    expect(entered).toHaveLength(2);
    const [direct, recall] = entered as [UserMessage, UserMessage];
    expect(direct).toEqual({ ...message, content: [{ type: 'text', text: 'Apply @the schema here.' }] });
    expect(Object.isFrozen(direct) && Object.isFrozen(direct.content[0])).toBe(true);
    expect(recall.role).toBe('user');
    expect(typeof recall.id).toBe('string');
    expect(recall.id).not.toBe(message.id);
    expect(recall.content).toEqual([
      {
        type: 'text',
        text: recallText(
          JSON.stringify({ sessionId: source.id, label: 'the schema', cwd: '/repo', conversation: [{ role: 'user', text: 'Should orders.total be <numeric>?' }, { role: 'assistant', text: 'Yes: numeric(12,2).' }] }).replace(/</g, '\\u003c'),
        ),
      },
    ]);
    const surface = await host.ctx.sessionQuery.readSurface(source.id);
    expect(recall.source).toEqual({
      kind: 'session-reference',
      form: 'recall',
      version: 1,
      references: [
        {
          sessionId: source.id,
          label: 'the schema',
          capturedThroughSeq: surface.capturedThroughSeq,
          compacted: false,
          originalMessages: 2,
          retainedMessages: 2,
          omittedMessages: 0,
          omittedBytes: 0,
          truncated: false,
          serializedBytes: expect.any(Number),
          budgetBytes: 65536,
          inputIndex: 0,
        },
      ],
    });
    expect(Object.isFrozen(recall) && Object.isFrozen(recall.source) && Object.isFrozen(recall.content[0])).toBe(true);
    // The host accepts both as they are: they are appended to the target session like any entered batch.
    new Conversation(host).say(entered, 'ok');
    target.say(entered, 'Done.');
  });

  it('passes every other message unchanged and in order; each cited prompt is followed by its own recall', async () => {
    const { host, source, target } = await scene();
    const other = new Conversation(host, '/elsewhere').say('Ledger work', 'Reconciled.');
    const injected = { ...prompt(`context mentioning ${mention(source)}`), source: { kind: 'plugin', plugin: 'skills' } } as UserMessage;
    const plain = prompt('no mention here');
    const first = prompt(`see ${mention(source, 'Schema migration')} and again ${mention(source, 'dup')}`);
    const second = prompt(`now ${mention(other, 'ledger')}`);
    const decision = (await preStep(host, target.agent, [injected, first, plain, second])) as { messages: UserMessage[] };
    expect(decision.messages).toHaveLength(6);
    expect(decision.messages[0]).toBe(injected);
    expect(decision.messages[2]!.source).toMatchObject({ kind: 'session-reference', references: [{ sessionId: source.id, label: 'Schema migration', inputIndex: 0 }] });
    expect(textOf(decision.messages[1]!)).toBe('see @Schema migration and again @dup');
    expect(decision.messages[3]).toBe(plain);
    expect(textOf(decision.messages[4]!)).toBe('now @ledger');
    expect(decision.messages[5]!.source).toMatchObject({ kind: 'session-reference', references: [{ sessionId: other.id, label: 'ledger', inputIndex: 0 }] });
  });

  it('passes a reject decision through untouched (nothing is read)', async () => {
    const { host, target } = await scene();
    const reject = { kind: 'reject' as const };
    const unknown = prompt(`see ${formatSessionReferenceMention({ sessionId: 'session-that-does-not-exist' })}`);
    expect(await preStep(host, target.agent, [unknown], undefined, async () => reject)).toBe(reject);
  });

  it('rewrites what the later listeners and the loop decided, not the proposal', async () => {
    const { host, source, target } = await scene();
    const replaced = prompt(`late ${mention(source, 'Schema migration')}`);
    const decision = (await preStep(host, target.agent, [prompt('original')], undefined, async () => ({ kind: 'enter', messages: [replaced] }))) as { messages: UserMessage[] };
    expect(decision.messages.map(textOf)[0]).toBe('late @Schema migration');
    expect(decision.messages).toHaveLength(2);
  });

  it('a compacted source gives the checkpoint plus the retained tail', async () => {
    const { host, target } = await scene();
    const compacted = new Conversation(host, '/repo').say('old question', 'old answer').say('second', 'reply').compact('Summary: numeric(12,2) agreed.').say('tail question', 'tail answer');
    const [, recall] = ((await preStep(host, target.agent, [prompt(mention(compacted, 'c'))])) as { messages: UserMessage[] }).messages;
    const json = JSON.parse(textOf(recall!).split('<referenced-sessions>\n')[1]!.split('\n</referenced-sessions>')[0]!);
    expect(json[0].conversation).toEqual([
      { role: 'user', text: 'Summary: numeric(12,2) agreed.', checkpoint: true },
      { role: 'user', text: 'tail question' },
      { role: 'assistant', text: 'tail answer' },
    ]);
    expect(recall!.source).toMatchObject({ references: [{ compacted: true, originalMessages: 3 }] });
  });

  it('never copies an earlier recall message of a cited session again (no nesting)', async () => {
    const { host, source } = await scene();
    // Session B cited the source through the plugin; the host persisted the entered messages.
    const b = new Conversation(host, '/repo');
    const entered = ((await preStep(host, b.agent, [prompt(`Summarise ${mention(source, 'S')}`)])) as { messages: UserMessage[] }).messages;
    b.say(entered, 'Summary of S: numeric.');
    const bSurface = await host.ctx.sessionQuery.readSurface(b.id);
    expect(bSurface.events.filter((event: any) => event.data?.source?.kind === 'session-reference')).toHaveLength(1);
    // Session C cites B: only B's own prompt and reply, never the recall message B holds.
    const c = new Conversation(host, '/repo');
    const [, recall] = ((await preStep(host, c.agent, [prompt(mention(b, 'B'))])) as { messages: UserMessage[] }).messages;
    const text = textOf(recall!);
    expect(text.split('<referenced-sessions>')).toHaveLength(2);
    expect(text).not.toContain('orders.total');
    expect(JSON.parse(text.split('<referenced-sessions>\n')[1]!.split('\n</referenced-sessions>')[0]!)[0].conversation).toEqual([
      { role: 'user', text: 'Summarise @S' },
      { role: 'assistant', text: 'Summary of S: numeric.' },
    ]);
  });

  describe('failures reject the step before anything reaches the model (SPEC §10)', () => {
    it('a self-reference: SELF_REFERENCE', async () => {
      const { host, target } = await scene();
      await expectRejection(preStep(host, target.agent, [prompt(`me: ${mention(target)}`)]), 'SESSION_REFERENCE_SELF_REFERENCE');
    });

    it('more than maxReferences distinct sessions: TOO_MANY', async () => {
      const { host, source, target } = await scene({ maxReferences: 1 });
      const other = new Conversation(host).say('x', 'y');
      await expectRejection(preStep(host, target.agent, [prompt(`${mention(source)} ${mention(other)}`)]), 'SESSION_REFERENCE_TOO_MANY');
      // And four with the default of three.
      const wide = await mountHost();
      const four = [0, 1, 2, 3].map(() => new Conversation(wide).say('q', 'a'));
      await expectRejection(preStep(wide, new Conversation(wide).agent, [prompt(four.map((s) => mention(s)).join(' '))]), 'SESSION_REFERENCE_TOO_MANY');
    });

    it('an unknown session id: READ_FAILED with the store error as cause', async () => {
      const { host, target } = await scene();
      const error = await expectRejection(preStep(host, target.agent, [prompt(formatSessionReferenceMention({ sessionId: 'session-missing' }))]), 'SESSION_REFERENCE_READ_FAILED');
      expect(error.cause).toBeInstanceOf(Error);
    });

    it('a malformed mention: INVALID_REFERENCE', async () => {
      const { host, target } = await scene();
      await expectRejection(preStep(host, target.agent, [prompt('see @[x](dsh-session:e30)')]), 'SESSION_REFERENCE_INVALID_REFERENCE');
    });

    it('a source that cannot fit maxReferenceBytes: BUDGET_EXCEEDED', async () => {
      const { host, source, target } = await scene({ maxReferenceBytes: 64 });
      await expectRejection(preStep(host, target.agent, [prompt(mention(source, 'a label long enough to overflow the tiny budget on its own'))]), 'SESSION_REFERENCE_BUDGET_EXCEEDED');
    });

    it('an aborted turn: CANCELLED with the reason as cause', async () => {
      const { host, source, target } = await scene();
      const controller = new AbortController();
      controller.abort(new Error('user pressed Esc'));
      const error = await expectRejection(preStep(host, target.agent, [prompt(mention(source))], controller.signal), 'SESSION_REFERENCE_CANCELLED');
      expect(error.cause).toBe(controller.signal.reason);
    });

    it('an abort while the store read never settles: CANCELLED without waiting for it', async () => {
      const stuck = new Set<string>();
      const controller = new AbortController();
      // The turn is cancelled as soon as the read has started; the read never settles, so a
      // rejection at all is one that did not wait for it.
      const host = await mountHost(undefined, hangingQuery(stuck, () => controller.abort(new Error('turn cancelled'))));
      const source = new Conversation(host, '/repo').say('q', 'a');
      stuck.add(source.id);
      const pending = preStep(host, new Conversation(host).agent, [prompt(mention(source))], controller.signal);
      const error = await expectRejection(pending, 'SESSION_REFERENCE_CANCELLED');
      expect(error.cause).toBe(controller.signal.reason);
    });
  });
});

describe('one exception type, whatever the host hands in (SPEC §10.4, §10.5)', () => {
  /** A message whose field `name` throws, or a revoked proxy, at each place the listener reads. */
  const faults = (text: string): Array<[string, () => unknown, string]> => {
    const base = () => ({ ...prompt(text) }) as Record<string, unknown>;
    const getter = (object: Record<string, unknown>, name: string) =>
      Object.defineProperty(object, name, { enumerable: true, get: () => { throw new TypeError(`no ${name}`); } });
    const revoked = () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    };
    return [
      ['a throwing source getter', () => getter(base(), 'source'), 'decision.messages[0].source'],
      ['a throwing content getter', () => getter(base(), 'content'), 'decision.messages[0].content'],
      ['a throwing kind getter', () => ({ ...base(), source: getter({}, 'kind') }), 'decision.messages[0].source.kind'],
      ['a throwing text getter in a block', () => ({ ...base(), content: [{ type: 'text', text }, getter({ type: 'text' }, 'text')] }), 'decision.messages[0].content[1].text'],
      ['a revoked message', revoked, 'decision.messages[0]'],
      ['a revoked source', () => ({ ...base(), source: revoked() }), 'decision.messages[0].source'],
      ['a revoked block', () => ({ ...base(), content: [revoked()] }), 'decision.messages[0].content[0]'],
    ];
  };

  it.each(faults('see @[S](dsh-session:InNlc3Npb24tNDM0Ig)'))('the pre-step listener: %s is INVALID_ARGUMENT naming where, never a raw TypeError', async (_, make, path) => {
    const { host, target } = await scene();
    const error = await expectRejection(preStep(host, target.agent, [make() as never]), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    expect(error.message).toContain(path);
  });

  it('the pre-step listener: a throwing agent id, and a decision whose messages cannot be read', async () => {
    const { host } = await scene();
    const agent = Object.defineProperty({}, 'id', { get: () => { throw new TypeError('no id'); } });
    expect((await expectRejection(preStep(host, agent, [prompt('x')]), 'SESSION_REFERENCE_INVALID_ARGUMENT')).message).toContain('agent.id');
    const { target } = await scene();
    const { proxy, revoke } = Proxy.revocable([], {});
    revoke();
    const final = async () => ({ kind: 'enter', messages: proxy }) as never;
    expect((await expectRejection(preStep(host, target.agent, [], undefined, final), 'SESSION_REFERENCE_INVALID_ARGUMENT')).message).toContain('decision.messages');
  });

  it('the pre-step listener: a revoked or throwing-trap payload is INVALID_ARGUMENT naming payload', async () => {
    const { host } = await scene();
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const trapped = new Proxy({}, { get: () => { throw new TypeError('trap'); } });
    for (const payload of [proxy, trapped]) {
      // The listener itself, as a host calls it (cordis's own waterfall touches the payload first).
      const listener = (host.resolver as unknown as { preStep(payload: unknown, next: () => Promise<unknown>): Promise<unknown> }).preStep.bind(host.resolver);
      const error = await expectRejection(listener(payload, async () => ({ kind: 'enter', messages: [] })), 'SESSION_REFERENCE_INVALID_ARGUMENT');
      expect(error.message).toMatch(/^payload(\.\w+)? cannot be read/);
    }
  });

  it('the pre-step listener: next() resolving to a revoked proxy, or rejecting with a foreign error, is READ_FAILED (cause kept); CANCELLED once the signal aborted; our own errors pass as they are', async () => {
    const { host, target } = await scene();
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const revokedDecision = await expectRejection(preStep(host, target.agent, [], undefined, async () => proxy as never), 'SESSION_REFERENCE_READ_FAILED');
    expect(revokedDecision.message).toMatch(/^agent\/pre-step next\(\) failed: /);
    expect(revokedDecision.cause).toBeInstanceOf(TypeError);
    const foreign = new RangeError('host broke');
    expect((await expectRejection(preStep(host, target.agent, [], undefined, () => Promise.reject(foreign)), 'SESSION_REFERENCE_READ_FAILED')).cause).toBe(foreign);
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    const abort = new Error('turn aborted');
    expect((await expectRejection(preStep(host, target.agent, [], controller.signal, () => Promise.reject(abort)), 'SESSION_REFERENCE_CANCELLED')).cause).toBe(abort);
    const ours = new root.SessionReferenceError('SESSION_REFERENCE_NOT_FOUND', 'ours');
    await expect(preStep(host, target.agent, [], undefined, () => Promise.reject(ours))).rejects.toBe(ours);
  });

  it('the pre-step listener reads a framework proxy of a prompt like the prompt (Vue reactive)', async () => {
    const { host, source, target } = await scene();
    const message = reactive({ ...prompt(`see ${mention(source, 'S')}`), content: [{ type: 'text', text: `see ${mention(source, 'S')}` }] });
    const decision = (await preStep(host, target.agent, [message as never])) as { messages: UserMessage[] };
    expect(decision.messages.map(textOf)[0]).toBe('see @S');
    expect(decision.messages).toHaveLength(2);
  });

  it('service methods work detached from the object (const { prepare } = resolver)', async () => {
    const { host, source, target } = await scene();
    for (const resolver of [host.resolver, host.ctx.get('sessionReferenceResolver')[symbols.original] ?? host.resolver]) {
      const { prepare, listCandidates, remoteExportCandidates } = resolver;
      const prepared = await prepare(target.agent, [{ type: 'text', text: 'q' }], [{ sessionId: source.id }]);
      expect(prepared.additionalContext.source.references[0].sessionId).toBe(source.id);
      expect((await listCandidates(target.agent, 'schema')).map((row: { sessionId: string }) => row.sessionId)).toEqual([source.id]);
      expect((await remoteExportCandidates(target.agent, 'schema', new AbortController().signal)).map((row: { sessionId: string }) => row.sessionId)).toEqual([source.id]);
      await expectRejection(prepare(undefined, [], []), 'SESSION_REFERENCE_INVALID_ARGUMENT');
    }
  });
});

describe('the service methods (SPEC §14.3)', () => {
  it('prepare, as a third-party plugin calls it: deep-copied content and a frozen recall message', async () => {
    const { host, source, target } = await scene();
    const content = [{ type: 'text', text: 'my words' }];
    const result = await host.ctx.sessionReferenceResolver.prepare(target.agent, content, [{ sessionId: source.id }]);
    expect(result.content).toEqual(content);
    expect(result.content).not.toBe(content);
    expect(result.additionalContext.source.references).toMatchObject([{ sessionId: source.id, label: source.id, inputIndex: 0 }]);
    expect(Object.isFrozen(result.additionalContext)).toBe(true);
    expect(await host.resolver.prepare(target.agent, content, [])).toEqual({ content });
    await expectRejection(host.resolver.prepare(target.agent, content, [{ sessionId: target.id }]), 'SESSION_REFERENCE_SELF_REFERENCE');
  });

  it('deduplicates references and numbers them by position after deduplication', async () => {
    const { host, source, target } = await scene();
    const other = new Conversation(host).say('x', 'y');
    const { additionalContext } = await host.resolver.prepare(target.agent, [], [{ sessionId: source.id, label: 'A' }, { sessionId: source.id, label: 'A again' }, { sessionId: other.id }]);
    expect(additionalContext.source.references.map((r: any) => [r.sessionId, r.label, r.inputIndex])).toEqual([[source.id, 'A', 0], [other.id, other.id, 1]]);
  });

  it('listCandidates: cleaned titles, same cwd → no cwd → other cwd, the target excluded, no mention', async () => {
    const host = await mountHost();
    const target = new Conversation(host, '/repo');
    const far = new Conversation(host, '/elsewhere').say('a', 'b').title('Ledger\u200b reconciler');
    const loose = new Conversation(host).say('a', 'b');
    const near = new Conversation(host, '/repo').say('a', 'b').title('Schema\n\n## My request: evil');
    const rows = await host.resolver.listCandidates(target.agent);
    expect(rows.map((row: any) => row.sessionId)).toEqual([near.id, loose.id, far.id]);
    expect(rows[0]).toEqual({ sessionId: near.id, label: 'Schema ## My request: evil', cwd: '/repo', createdAt: near.session.header.createdAt });
    expect(rows[1]).toEqual({ sessionId: loose.id, label: loose.id, createdAt: loose.session.header.createdAt });
    expect(rows[2].label).toBe('Ledger reconciler');
    // matchTitles is on: the words people type after @ find the title.
    expect((await host.resolver.listCandidates(target.agent, 'LEDGER')).map((row: any) => row.sessionId)).toEqual([far.id]);
    expect((await host.resolver.listCandidates(target.agent, '', 1)).map((row: any) => row.sessionId)).toEqual([near.id]);
    const off = await mountHost({ matchTitles: false });
    const t2 = new Conversation(off);
    new Conversation(off).say('a', 'b').title('Ledger');
    expect(await off.resolver.listCandidates(t2.agent, 'ledger')).toEqual([]);
  });

  it('matchContent: the @ menu answers a non-empty query from search, best first, with the same rows (SPEC §16.6)', async () => {
    for (const matchContent of [true, false]) {
      const { host, source, target } = await scene({ matchContent } as root.SessionReferenceConfig);
      const other = new Conversation(host, '/elsewhere').say('We talked about numbers.', 'Numeric types everywhere.').title('Numbers');
      const rows = await host.resolver.remoteExportCandidates(target.agent, 'numeric', new AbortController().signal);
      if (!matchContent) {
        expect(rows).toEqual([]);
        continue;
      }
      expect(rows.map((row: { sessionId: string }) => row.sessionId).sort()).toEqual([source.id, other.id].sort());
      const listed = await host.resolver.remoteExportCandidates(target.agent, '', new AbortController().signal);
      for (const row of rows) expect(listed).toContainEqual(row);
      // A blank query is today's listing; the agent's own session is never a hit.
      expect((await host.resolver.remoteExportCandidates(other.agent, 'numeric', new AbortController().signal)).map((row: { sessionId: string }) => row.sessionId)).toEqual([source.id]);
    }
  });

  it('remoteExportCandidates: the same rows with their mention, at most candidateLimit', async () => {
    const host = await mountHost({ candidateLimit: 2 });
    const target = new Conversation(host, '/repo');
    const sessions = [0, 1, 2].map((i) => new Conversation(host, '/repo').say('a', 'b').title(`Topic ${i}`));
    const rows = await host.resolver.remoteExportCandidates(target.agent, 'topic', new AbortController().signal);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      const session = sessions.find((s) => s.id === row.sessionId)!;
      expect(row).toEqual({ sessionId: session.id, label: row.label, cwd: '/repo', createdAt: session.session.header.createdAt, mention: formatSessionReferenceMention({ sessionId: session.id, label: row.label }) });
    }
    await expectRejection(host.resolver.remoteExportCandidates(target.agent, 'topic', AbortSignal.abort()), 'SESSION_REFERENCE_CANCELLED');
  });

  it('exposes remoteExportCandidates as the remote method candidates, the way dsh\'s Typert gateway discovers it', async () => {
    const { host } = await scene();
    // The gateway reads the service itself (cordis' original object, not the context's proxy).
    const proxy = host.ctx.get('sessionReferenceResolver');
    const service = proxy[symbols.original] ?? proxy;
    // What the gateway's SRC discovery reads: the visible binding, the @Remote marker, and the
    // method's parameter names (agent is bound from the wire's agentId, signal is cancellation).
    const { typertRemote } = service;
    expect([typertRemote.service === service, typertRemote.serviceKey, typertRemote.namespace]).toEqual([true, 'sessionReferenceResolver', 'sessionReferenceResolver']);
    expect(remoteMethods(service)).toEqual([{ method: 'remoteExportCandidates', exportName: 'candidates', invocation: { kind: 'direct' } }]);
    const source = Function.prototype.toString.call(Object.getPrototypeOf(service).remoteExportCandidates);
    expect(source.slice(source.indexOf('(') + 1, source.indexOf(')')).split(',').map((name) => name.trim())).toEqual(['agent', 'query', 'signal']);
  });

  it('an agent/pre-step listener mounted before the plugin still runs inside it (prepend)', async () => {
    const host = await mountHost();
    const source = new Conversation(host, '/repo').say('q', 'a');
    const seen: string[] = [];
    host.ctx.on('agent/pre-step' as never, (async ({ messages }: { messages: UserMessage[] }, next: () => Promise<unknown>) => {
      seen.push(...messages.map(textOf));
      return next();
    }) as never);
    const decision = (await preStep(host, new Conversation(host).agent, [prompt(mention(source, 'S'))])) as { messages: UserMessage[] };
    expect(seen).toEqual([mention(source, 'S')]);
    expect(decision.messages.map(textOf)[0]).toBe('@S');
  });

  it('unloading the plugin withdraws the service and the listener', async () => {
    // The host stack with a no-op plugin in the plugin's place, then ours mounted by hand.
    const host = await mountHost(undefined, undefined, () => {});
    const source = new Conversation(host, '/repo').say('q', 'a');
    const fiber = host.ctx.plugin(SessionReferenceResolver);
    await fiber;
    expect(host.ctx.get('sessionReferenceResolver')).toBeDefined();
    const message = prompt(mention(source, 'S'));
    expect(((await preStep(host, new Conversation(host).agent, [message])) as { messages: UserMessage[] }).messages).toHaveLength(2);
    await fiber.dispose();
    expect(host.ctx.get('sessionReferenceResolver')).toBeUndefined();
    expect(((await preStep(host, new Conversation(host).agent, [message])) as { messages: UserMessage[] }).messages).toEqual([message]);
  });

  it('reads ctx.sessionQuery when called', async () => {
    const { host, target } = await scene();
    const later = new Conversation(host, '/repo').say('made after the plugin started', 'ok').title('Later');
    expect((await host.resolver.listCandidates(target.agent, 'later')).map((row: any) => row.sessionId)).toEqual([later.id]);
  });
});
