/**
 * The CLI's `push` (SPEC §17.8) and the front-end client (SPEC §17.9) against the real service:
 * the three-line Worker of examples/edge-worker built by a plain `wrangler deploy --dry-run`, run by
 * Miniflare (workerd, real R2 and SQLite-backed Durable Objects) listening on a loopback port, with
 * an HS256 token signed by jose. The client's answers are compared with the local service's over
 * the same store on disk.
 */
import { copyFileSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SignJWT } from 'jose';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEdgeClient, type EdgeClient, type EdgeResponseCause } from '../src/edge/client.js';
import { createSessionReferences, formatSessionReferenceMention, type SessionReferences, type UserMessage } from '../src/index.js';
import { main } from '../src/node/main.js';
import { PUSH_TOKEN_VARIABLE, type PushSummary } from '../src/node/push.js';
import { sampleStoreRoot } from '../src/node/samples.js';
import { createDshStoreSessionQuery } from '../src/node/store.js';
import { startEdgeWorker } from '../scripts/edge-loopback.mjs';
import { expectRejectCode } from './helpers.js';

const SECRET = 'edge-client-test-secret-that-is-long-enough-0123456789';
const TARGET = { id: 'session-7d2f4c1a-93be-4f6e-8a05-c1e4b2d97a30', cwd: '/home/user/projects/01_unicorn/77-Dumen' };
const DUMEN_ID = 'session-904b047f-eb01-493f-b98a-391ecfae5b66';
const LEDGER_ID = 'session-91f4b0c6-2e7d-4a83-bd15-6c0e9a4f27d8';
const ZSTD_ID = 'session-4e6a2d9f-b1c8-47e0-9f35-a8d21c6b0e74';

let worker: Awaited<ReturnType<typeof startEdgeWorker>>;
let mf: Miniflare;
let url: string;
let token: string;
let local: SessionReferences;
let client: EdgeClient;

const tokenFor = (sub: string, secret = SECRET) => new SignJWT({ sub }).setProtectedHeader({ alg: 'HS256' }).setExpirationTime('10m').sign(new TextEncoder().encode(secret));

beforeAll(async () => {
  worker = await startEdgeWorker({ AUTH_JWT_SECRET: SECRET });
  ({ url, miniflare: mf } = worker);
  token = await tokenFor('acme');
  local = createSessionReferences({ sessionQuery: createDshStoreSessionQuery({ root: sampleStoreRoot() }) });
  client = createEdgeClient({ url, token });
});

afterAll(async () => {
  await worker?.dispose();
});

function io(env: Record<string, string>) {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { stdout: { write: (text: string) => out.push(text) }, stderr: { write: (text: string) => err.push(text) }, env }, out, err };
}

describe('push to the real service (SPEC §17.8)', () => {
  it('uploads the sample store, then finds every log unchanged', async () => {
    const first = io({ [PUSH_TOKEN_VARIABLE]: token });
    expect(await main(['push', '--to', url, '--demo', '--json'], first.io)).toBe(0);
    const summary = JSON.parse(first.out.join('')) as PushSummary;
    expect(summary).toMatchObject({ uploaded: 7, unchanged: 0, failed: 0 });
    const bucket = await mf.getR2Bucket('SESSIONS');
    const objects = (await bucket.list({ prefix: 'tenants/acme/' })).objects;
    expect(objects.map((object) => object.key).sort()).toEqual(summary.logs.map((log) => `tenants/acme/${log.key}`).sort());
    for (const log of summary.logs) expect(objects.find((object) => object.key === `tenants/acme/${log.key}`)?.etag).toBe(log.md5);

    const again = io({ [PUSH_TOKEN_VARIABLE]: token });
    expect(await main(['push', '--to', url, '--demo'], again.io)).toBe(0);
    expect(again.out.join('')).toBe(`uploaded 0, unchanged 7, failed 0 — ${url}\n`);
  });

  it('pushes the real fixture log; a log the service refuses fails that log alone (exit 1)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'push-e2e-'));
    mkdirSync(join(root, 'fixtures', 'dumen-prefix'), { recursive: true });
    copyFileSync('/work/shared/fixtures/dsh-v3/dumen-prefix/session.v3.jsonl', join(root, 'fixtures', 'dumen-prefix', 'session.v3.jsonl'));
    // A first line that is a header to the store's listing, but no dsh log to the service: not JSON after it.
    mkdirSync(join(root, 'broken', 's'), { recursive: true });
    const header = `${JSON.stringify({ type: 'session', version: 3, id: 'broken-1', createdAt: 1 })}\n`;
    writeFileSync(join(root, 'broken', 's', 'session.v3.jsonl'), `${header}not json\n{}\n`);
    // Issue 27 (the probe's store10): a first line that is empty, then a header — refused locally, the rest still pushed.
    mkdirSync(join(root, 'p', 'bad'), { recursive: true });
    writeFileSync(join(root, 'p', 'bad', 'session.v3.jsonl'), `\n${header}`);
    const run = io({ [PUSH_TOKEN_VARIABLE]: await tokenFor('fixture-tenant') });
    expect(await main(['push', '--to', url, '--store', root, '--json'], run.io)).toBe(1);
    const summary = JSON.parse(run.out.join('')) as PushSummary;
    expect(summary).toMatchObject({ uploaded: 1, unchanged: 0, failed: 2 });
    // The service's 400 for a body that is not a dsh log (SPEC §17.4): failed, with the service's code.
    expect(summary.logs.find((log) => log.key === 'broken/s/session.v3.jsonl')).toMatchObject({ status: 'failed', code: 'SESSION_REFERENCE_INVALID_LOG', error: expect.stringMatching(/^SESSION_REFERENCE_INVALID_LOG: /) });
    expect(summary.logs.find((log) => log.key === 'p/bad/session.v3.jsonl')).toMatchObject({ status: 'failed', error: expect.stringMatching(/^SESSION_REFERENCE_INVALID_LOG: .*line 1/) });
    expect(summary.logs.find((log) => log.key === 'fixtures/dumen-prefix/session.v3.jsonl')?.status).toBe('uploaded');
    const bucket = await mf.getR2Bucket('SESSIONS');
    expect((await bucket.list({ prefix: 'tenants/fixture-tenant/' })).objects.map((object) => object.key)).toEqual(['tenants/fixture-tenant/fixtures/dumen-prefix/session.v3.jsonl']);
  });

  it('a token the service refuses: exit 1, UNAUTHENTICATED named, the token never shown', async () => {
    const wrong = await tokenFor('acme', 'another-secret-another-secret-another-secret');
    const run = io({ [PUSH_TOKEN_VARIABLE]: wrong });
    expect(await main(['push', '--to', url, '--demo'], run.io)).toBe(1);
    expect(run.err.join('')).toMatch(/^SESSION_REFERENCE_INVALID_CONFIG: GET \/sessions answered 401: UNAUTHENTICATED: .*set DSH_SESSION_REFERENCE_TOKEN/);
    expect(run.err.join('') + run.out.join('')).not.toContain(wrong);
  });
});

describe('the edge client against the real service (SPEC §17.9)', () => {
  // The store was pushed above (the tests of a file run in order).
  it('listCandidates gives the local service’s rows over the same store', async () => {
    expect(await client.listCandidates(TARGET)).toEqual(await local.listCandidates(TARGET));
    expect(await client.listCandidates(TARGET, 'ledger', 2)).toEqual(await local.listCandidates(TARGET, 'ledger', 2));
  });

  it('title and word matching (SPEC §6.7, §15.10) as the local config keys give them', async () => {
    const words = createEdgeClient({ url, token, matchTitles: true, candidateMatch: 'words' });
    const localWords = createSessionReferences({ sessionQuery: createDshStoreSessionQuery({ root: sampleStoreRoot() }), config: { matchTitles: true, candidateMatch: 'words' } });
    for (const query of ['ledger rec', 'dumen', 'csv head']) expect(await words.listCandidates(TARGET, query)).toEqual(await localWords.listCandidates(TARGET, query));
    expect((await words.listCandidates(TARGET, 'ledger rec')).length).toBeGreaterThan(0);
  });

  it('prepare and referenceUserMessage give the local service’s context and message', async () => {
    const references = [{ sessionId: LEDGER_ID, label: 'ledger' }, { sessionId: ZSTD_ID }];
    const content = [{ type: 'text' as const, text: 'compare' }];
    expect(await client.prepare(TARGET, content, references)).toEqual(await local.prepare(TARGET, content, references));
    const message: UserMessage = {
      id: 'm-1',
      role: 'user',
      content: [{ type: 'text', text: `Compare ${formatSessionReferenceMention({ sessionId: DUMEN_ID, label: 'Dümen' })} and go on.` }],
      source: { kind: 'user' },
    };
    expect(await client.referenceUserMessage(TARGET, message)).toEqual(await local.referenceUserMessage(TARGET, message));
  });

  it('searchSessions finds a session by what was said', async () => {
    const hits = await client.searchSessions(TARGET, 'gemini', { limit: 5 });
    expect(hits.map((hit) => hit.sessionId)).toContain(DUMEN_ID);
    expect(hits.map(({ sessionId, label }) => ({ sessionId, label }))).toEqual((await local.searchSessions(TARGET, 'gemini', { limit: 5 })).map(({ sessionId, label }) => ({ sessionId, label })));
  });

  it('maps the service’s refusals back: an unknown session, too many references, a refused token', async () => {
    const unknown = await expectRejectCode(client.prepare(TARGET, [], [{ sessionId: 'no-such-session' }]), 'SESSION_REFERENCE_NOT_FOUND');
    expect(unknown.message).toMatch(/no-such-session/);
    await expectRejectCode(client.prepare(TARGET, [], [{ sessionId: DUMEN_ID }, { sessionId: LEDGER_ID }, { sessionId: ZSTD_ID }, { sessionId: 'session-e5f1c2a0' }]), 'SESSION_REFERENCE_TOO_MANY');
    const refused = await expectRejectCode(createEdgeClient({ url, token: 'garbage' }).listCandidates(TARGET), 'SESSION_REFERENCE_INVALID_CONFIG');
    expect((refused.cause as EdgeResponseCause).status).toBe(401);
    expect((refused.cause as EdgeResponseCause).code).toBe('UNAUTHENTICATED');
    // Another tenant's sessions are neither offered nor citable; its agent answers as an unknown one,
    // which, as locally, is no error (the probe's F9: the session being typed in is not uploaded yet).
    const other = createEdgeClient({ url, getToken: () => tokenFor('globex') });
    expect(await other.listCandidates(TARGET)).toEqual([]);
    expect(await other.listCandidates({ id: 'never-uploaded', cwd: '/anywhere' })).toEqual([]);
    await expectRejectCode(other.prepare({ id: 'never-uploaded' }, [], [{ sessionId: DUMEN_ID }]), 'SESSION_REFERENCE_NOT_FOUND');
  });
});
