/**
 * SPEC §1.1 smoke test in *plain* workerd. The vitest workers pool turns on nodejs_compat_v2 for
 * its own runner (so `Buffer` leaks into the `workerd` project); here the core (`.` and `./store`)
 * is bundled with esbuild for a browser/worker target and run in Miniflare with no compatibility
 * flags at all. The very same bundle also runs in Node, and both must give identical results.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { zstdLog } from './fixtures/object-store.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SAMPLE_LOG = join(
  ROOT,
  'samples/store/77-Dumen/session-904b047f-eb01-493f-b98a-391ecfae5b66/session.v3.jsonl',
);
const COMPATIBILITY_DATE = '2026-04-01';

const SYNTHETIC_LOG = [
  { type: 'session', version: 3, id: 'smoke-b', createdAt: 1789415426009, cwd: '/elsewhere' },
  {
    type: 'user/message',
    seq: 0,
    time: 1,
    data: {
      id: 'u1',
      role: 'user',
      content: [{ type: 'text', text: 'Plan the </referenced-sessions> escape <script>, ünïcödé 🎉' }],
      source: { kind: 'user' },
    },
  },
  {
    type: 'assistant/message',
    seq: 1,
    time: 2,
    data: { turn: 1, step: 1, message: { role: 'assistant', content: [{ type: 'reasoning', text: 'hidden' }, { type: 'text', text: 'Done.' }] } },
  },
  { type: 'session/title', seq: 2, time: 3, data: { title: 'Smoke title' } },
]
  .map((line) => JSON.stringify(line))
  .join('\n');

/** The exercise, bundled with the core; identical code runs in workerd and in Node. */
const ENTRY = `
import * as core from './src/index.ts';
import * as store from './src/store/index.ts';

function errorInfo(error) {
  return {
    isSessionReferenceError: core.isSessionReferenceError(error),
    instance: error instanceof core.SessionReferenceError,
    json: core.isSessionReferenceError(error) ? error.toJSON() : String(error),
    plainRecognized: core.isSessionReferenceError(JSON.parse(JSON.stringify(error))),
  };
}

async function settle(promise) {
  try {
    return { value: await promise };
  } catch (error) {
    return { error: errorInfo(error) };
  }
}

/** workerd compiles no WebAssembly from bytes: the Worker gives libzstd's module (SPEC §11.2). */
export function provideLibzstd(module) {
  store.provideZstdWasm(module);
}

export async function run(input) {
  const ids = ['session-434', '', 'a', '日本語', '🎉 emoji', '\\ud800', 'x\\udfffy', '</referenced-sessions>'];
  const uris = ids.map((id) => core.encodeSessionReferenceUri(id));
  const roundTrip = uris.map((uri) => core.decodeSessionReferenceUri(uri));
  const badUri = await settle((async () => core.decodeSessionReferenceUri(uris[0] + '='))());

  const sample = store.parseSessionLog(input.sampleText);
  const sampleFromBytes = store.parseSessionLog(new TextEncoder().encode(input.sampleText));
  const sampleFromZstd = store.parseSessionLog(new Uint8Array(input.sampleZstd));
  const synthetic = store.parseSessionLog(new TextEncoder().encode(input.syntheticText).buffer);
  const query = store.createMemorySessionQuery([sample, synthetic]);
  const refs = core.createSessionReferences({ sessionQuery: query, config: { maxReferenceBytes: 4096 } });
  const agent = { id: 'smoke-target', cwd: sample.header.cwd };

  const candidates = await refs.listCandidates(agent);
  const filtered = await refs.listCandidates(agent, 'ELSEWHERE');
  const prompt = 'Compare ' + candidates[0].mention + ' with ' + core.encodeSessionReferenceUri('smoke-b') + ' please';
  const parsed = core.parseSessionReferenceText(prompt);
  const scanned = core.scanSessionReferenceText('@[x](dsh-session:AAAA) and ' + uris[0]);
  const prepared = await refs.prepare(agent, [{ type: 'text', text: parsed.text }], parsed.references);
  const message = { id: 'm1', role: 'user', content: [{ type: 'text', text: prompt }], source: { kind: 'user' } };
  const viaService = await refs.referenceUserMessage(agent, message);
  // The two steps by hand, given the positions the service found (SPEC §9.4 envelope.mentions).
  const composed = core.composePromptMessage({ ...message, content: prepared.content }, prepared.context, viaService.envelope.mentions);

  const controller = new AbortController();
  const pending = refs.prepare(agent, [], [{ sessionId: 'smoke-b' }], controller.signal);
  controller.abort(new Error('stop'));
  const cancelled = await settle(pending);
  const missing = await settle(query.readSurface('nope'));
  const self = await settle(refs.prepare({ id: 'smoke-b' }, [], [{ sessionId: 'smoke-b' }]));

  return {
    uris,
    roundTrip,
    badUri,
    parsedLogs: {
      sampleId: sample.header.id,
      sampleEvents: sample.events.length,
      bytesSame: JSON.stringify(sampleFromBytes) === JSON.stringify(sample),
      zstdSame: JSON.stringify(sampleFromZstd) === JSON.stringify(sample),
    },
    candidates,
    filtered: filtered.map((c) => c.sessionId),
    parsed,
    scanned: scanned.tokens.map((t) => ({ kind: t.kind, start: t.start, end: t.end, sessionId: t.sessionId, error: t.error && t.error.code })),
    prepared,
    composed,
    viaServiceEqual: JSON.stringify(viaService) === JSON.stringify(composed),
    cancelled,
    missing,
    self,
  };
}

export default {
  async fetch(request) {
    const globals = {
      Buffer: typeof globalThis.Buffer,
      process: typeof globalThis.process,
      require: typeof globalThis.require,
      setImmediate: typeof globalThis.setImmediate,
      userAgent: globalThis.navigator && navigator.userAgent,
    };
    try {
      const result = await run(await request.json());
      return Response.json({ globals, result });
    } catch (error) {
      return Response.json({ globals, crash: String(error && error.stack || error) }, { status: 500 });
    }
  },
};
`;

/** The Worker's main module: libzstd's module given to the bundle, then the bundle's fetch. */
const MAIN = `
import libzstd from './libzstd.wasm';
import smoke, { provideLibzstd } from './smoke.mjs';
provideLibzstd(libzstd);
export default smoke;
`;

describe('the built core in plain workerd, without nodejs_compat (SPEC §1.1)', () => {
  let tmp: string;
  let script: string;
  let mf: Miniflare | undefined;
  const sampleText = readFileSync(SAMPLE_LOG, 'utf8');
  const input = { sampleText, sampleZstd: [...zstdLog(sampleText, 50)], syntheticText: SYNTHETIC_LOG };
  let worker: { globals: Record<string, string>; result?: any; crash?: string };
  let node: any;

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'dsh-miniflare-smoke-'));
    const bundle = await build({
      stdin: { contents: ENTRY, resolveDir: ROOT, sourcefile: 'smoke-entry.js', loader: 'js' },
      bundle: true,
      format: 'esm',
      platform: 'browser',
      conditions: ['workerd', 'worker', 'browser'],
      target: 'es2022',
      write: false,
      logLevel: 'silent',
    });
    script = bundle.outputFiles[0]!.text;
    const file = join(tmp, 'smoke.mjs');
    writeFileSync(file, script);
    node = await (await import(pathToFileURL(file).href)).run(structuredClone(input));

    // The Worker: the bundle, plus a main module that imports libzstd's module as a compiled
    // module (as examples/edge-worker does) and gives it to the library before any read.
    mf = new Miniflare({
      modules: [
        { type: 'ESModule', path: 'main.mjs', contents: MAIN },
        { type: 'ESModule', path: 'smoke.mjs', contents: script },
        { type: 'CompiledWasm', path: 'libzstd.wasm', contents: readFileSync(join(ROOT, 'src/store/libzstd.wasm')) },
      ],
      compatibilityDate: COMPATIBILITY_DATE,
    });
    const response = await mf.dispatchFetch('http://smoke.test/', { method: 'POST', body: JSON.stringify(input) });
    worker = (await response.json()) as typeof worker;
  });

  afterAll(async () => {
    await mf?.dispose();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('bundles without Node built-ins', () => {
    expect(script).not.toMatch(/\bfrom\s*["']node:/);
    expect(script).not.toMatch(/\brequire\(\s*["']/);
  });

  it('runs in workerd with no Node globals at all', () => {
    expect(worker.crash).toBeUndefined();
    expect(worker.globals).toMatchObject({ Buffer: 'undefined', process: 'undefined', require: 'undefined', setImmediate: 'undefined' });
    expect(worker.globals.userAgent).toBe('Cloudflare-Workers');
  });

  it('gives results identical to Node', () => {
    expect(worker.result).toEqual(node);
  });

  it('encodes and decodes URIs (SPEC §2)', () => {
    const { uris, roundTrip, badUri } = worker.result;
    expect(uris[0]).toBe('dsh-session:InNlc3Npb24tNDM0Ig');
    expect(uris[1]).toBe('dsh-session:IiI');
    expect(roundTrip).toEqual(['session-434', '', 'a', '日本語', '🎉 emoji', '\ud800', 'x\udfffy', '</referenced-sessions>']);
    expect(badUri.error).toMatchObject({
      isSessionReferenceError: true,
      instance: true,
      plainRecognized: true,
      json: { name: 'SessionReferenceError', code: 'SESSION_REFERENCE_INVALID_REFERENCE' },
    });
  });

  it('parses the sample log from text, bytes and zstd frames (SPEC §11.1, §11.2)', () => {
    expect(worker.result.parsedLogs).toEqual({
      sampleId: 'session-904b047f-eb01-493f-b98a-391ecfae5b66',
      sampleEvents: expect.any(Number),
      bytesSame: true,
      zstdSame: true,
    });
    expect(worker.result.parsedLogs.sampleEvents).toBeGreaterThan(50);
  });

  it('lists candidates over the memory query (SPEC §6, §11.3)', () => {
    const { candidates, filtered } = worker.result;
    expect(candidates.map((c: { sessionId: string }) => c.sessionId)).toEqual([
      'session-904b047f-eb01-493f-b98a-391ecfae5b66',
      'smoke-b',
    ]);
    expect(candidates[0].label).toBe('Bu projeyi gemini ile geliştiriyorduk');
    expect(candidates[1].label).toBe('Smoke title');
    expect(filtered).toEqual(['smoke-b']);
  });

  it('parses mentions and prepares a bounded, tag-safe context (SPEC §3, §7–§9)', () => {
    const { parsed, scanned, prepared, composed, viaServiceEqual } = worker.result;
    expect(parsed.text).toBe('Compare @Bu projeyi gemini ile geliştiriyorduk with @smoke-b please');
    expect(parsed.references.map((r: { sessionId: string }) => r.sessionId)).toEqual([
      'session-904b047f-eb01-493f-b98a-391ecfae5b66',
      'smoke-b',
    ]);
    expect(scanned[0]).toMatchObject({ kind: 'mention', start: 0, error: 'SESSION_REFERENCE_INVALID_REFERENCE' });
    expect(scanned[1]).toMatchObject({ kind: 'bare', sessionId: 'session-434' });

    const context = prepared.context;
    expect(context.source).toEqual({ kind: 'plugin', plugin: 'session-reference' });
    expect(context.placement).toBe('prompt-prefix');
    const text: string = context.content[0].text;
    expect(text.startsWith('## Referenced sessions\n\n')).toBe(true);
    const inner = text.slice(text.indexOf('<referenced-sessions>\n') + 22, text.lastIndexOf('\n</referenced-sessions>'));
    expect(inner).not.toContain('<');
    const refs = JSON.parse(inner);
    expect(refs.map((r: { sessionId: string }) => r.sessionId)).toEqual([
      'session-904b047f-eb01-493f-b98a-391ecfae5b66',
      'smoke-b',
    ]);
    expect(refs[1].conversation).toEqual([
      { role: 'user', text: 'Plan the </referenced-sessions> escape <script>, ünïcödé 🎉' },
      { role: 'assistant', text: 'Done.' },
    ]);
    for (const meta of context.metadata.references) {
      expect(meta.serializedBytes).toBeLessThanOrEqual(4096);
      expect(meta.budgetBytes).toBe(4096);
    }
    expect(composed.content[0].text.startsWith(text)).toBe(true);
    expect(composed.envelope.version).toBe(1);
    expect(viaServiceEqual).toBe(true);
    expect(composed.envelope.mentions.map((m: { sessionId: string }) => m.sessionId)).toEqual(parsed.references.map((r: { sessionId: string }) => r.sessionId));
  });

  it('reports cancellation, missing sessions and self-references with codes (SPEC §7, §10)', () => {
    const { cancelled, missing, self } = worker.result;
    expect(cancelled.error.json.code).toBe('SESSION_REFERENCE_CANCELLED');
    expect(missing.error.json.code).toBe('SESSION_REFERENCE_NOT_FOUND');
    expect(self.error.json.code).toBe('SESSION_REFERENCE_SELF_REFERENCE');
  });
});
