// Black-box tests of what ACP clients read beside the answer: the model and
// mode pickers (config options by category, the unstable `models` field and
// session/set_model, per session), the session title, reasoning as agent_thought_chunk, tool-call ids that
// stay unique when the model reuses its ids, stop reason max_tokens, and a
// quiet stderr (ACP clients show each stderr line to the user). The built
// `cairn acp` is driven by the official TypeScript SDK against a local
// OpenAI-compatible endpoint that also lists its models at GET /v1/models.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { writeFileSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { cairnBinary, startModelServer, toolTurn, textTurn, tempDir } from '../blackbox/helpers.mjs';

function startAgent(bin, env) {
  const proc = spawn(bin, ['acp'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((ok) => proc.on('exit', (code) => ok(code)));
  const updates = [];
  const app = acp.client({ name: 'cairn-acp-pickers' })
    .onNotification(acp.methods.client.session.update, ({ params }) => { updates.push(params); })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) =>
      ({ outcome: { outcome: 'selected', optionId: params.options.find((o) => o.kind === 'allow_once').optionId } }));
  const conn = app.connect(acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));
  return { agent: conn.agent, updates, stderr: () => stderr, stop: () => { proc.stdin.end(); return exited; } };
}

function setup(script, models) {
  const ws = tempDir('cairn-acp-ws-');
  writeFileSync(join(ws, 'notes.txt'), 'hello\n');
  const home = tempDir('cairn-acp-home-');
  return startModelServer(script, { models }).then(({ server, requests, port }) => ({
    ws, home, server, requests,
    env: {
      PATH: process.env.PATH, HOME: home, XDG_CACHE_HOME: join(home, 'cache'),
      CAIRN_PROVIDER: 'openai', CAIRN_MODEL: 'gpt-test', OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
      OPENAI_API_KEY: 'sk-test-not-a-real-key',
    },
  }));
}

const option = (opts, id) => opts.find((o) => o.id === id);
const of = (a, sessionId, kind) => a.updates.filter((u) => u.sessionId === sessionId && u.update.sessionUpdate === kind).map((u) => u.update);

test('model picker: the endpoint\'s models, category model; approval is category mode; model and mode change one session only', async (t) => {
  const bin = cairnBinary();
  // The first answer comes from a reasoning model: its reasoning_content
  // deltas are the session's agent_thought_chunk, not answer text.
  const thinking = ['Let me ', 'think.'].map((c) => ({ id: 'chatcmpl-r', choices: [{ index: 0, delta: { reasoning_content: c } }] }));
  const s = await setup([[...thinking, ...textTurn('answer one')], textTurn('answer two')], ['gpt-test', 'gpt-big', 'gpt-small']);
  t.after(() => s.server.close());
  const a = startAgent(bin, s.env);
  await a.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const one = await a.agent.request(acp.methods.agent.session.new, { cwd: s.ws, mcpServers: [] });
  const two = await a.agent.request(acp.methods.agent.session.new, { cwd: s.ws, mcpServers: [] });

  const model = option(one.configOptions, 'model');
  assert.equal(model.category, 'model');
  assert.equal(model.type, 'select');
  assert.equal(model.currentValue, 'gpt-test');
  assert.deepEqual(model.options.map((o) => o.value), ['gpt-test', 'gpt-big', 'gpt-small']);
  assert.equal(option(one.configOptions, 'approval').category, 'mode');
  // The unstable `models` field, which CodeCompanion, avante and acp.el read.
  assert.equal(one.models.currentModelId, 'gpt-test');
  assert.deepEqual(one.models.availableModels.map((m) => m.modelId), ['gpt-test', 'gpt-big', 'gpt-small']);

  // session/set_model as those clients send it: {sessionId, modelId}.
  await a.agent.request('session/set_model', { sessionId: one.sessionId, modelId: 'gpt-big' });
  await assert.rejects(a.agent.request('session/set_model', { sessionId: one.sessionId, modelId: 'no-such-model' }));
  const p1 = await a.agent.request(acp.methods.agent.session.prompt, { sessionId: one.sessionId, prompt: [{ type: 'text', text: 'hi' }] });
  const p2 = await a.agent.request(acp.methods.agent.session.prompt, { sessionId: two.sessionId, prompt: [{ type: 'text', text: 'hi' }] });
  assert.equal(p1.stopReason, 'end_turn');
  assert.equal(p2.stopReason, 'end_turn');
  assert.deepEqual(s.requests.map((r) => r.model), ['gpt-big', 'gpt-test']);
  assert.equal(of(a, one.sessionId, 'agent_thought_chunk').map((u) => u.content.text).join(''), 'Let me think.');
  assert.equal(of(a, one.sessionId, 'agent_message_chunk').map((u) => u.content.text).join(''), 'answer one');
  // The change was announced to its session only.
  const changed = of(a, one.sessionId, 'config_option_update').at(-1);
  assert.equal(option(changed.configOptions, 'model').currentValue, 'gpt-big');
  assert.equal(of(a, two.sessionId, 'config_option_update').length, 0);

  // The mode too is the session's own.
  await a.agent.request(acp.methods.agent.session.setMode, { sessionId: one.sessionId, modeId: 'policy' });
  assert.equal(of(a, one.sessionId, 'current_mode_update').at(-1).currentModeId, 'policy');
  assert.equal(of(a, two.sessionId, 'current_mode_update').length, 0);

  // The model through session/set_config_option, on the other session.
  const set = await a.agent.request(acp.methods.agent.session.setConfigOption,
    { sessionId: two.sessionId, configId: 'model', value: 'gpt-small' });
  assert.equal(option(set.configOptions, 'model').currentValue, 'gpt-small');
  assert.equal(option(set.configOptions, 'approval').currentValue, 'ask');
  assert.equal(await a.stop(), 0);
  assert.equal(a.stderr(), '');
});

test('model picker falls back to the configured model when the endpoint lists none', async (t) => {
  const bin = cairnBinary();
  const s = await setup([], undefined); // GET /v1/models answers 404
  t.after(() => s.server.close());
  const a = startAgent(bin, s.env);
  await a.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const one = await a.agent.request(acp.methods.agent.session.new, { cwd: s.ws, mcpServers: [] });
  assert.deepEqual(option(one.configOptions, 'model').options.map((o) => o.value), ['gpt-test']);
  assert.equal(await a.stop(), 0);
});

test('tool-call ids stay unique when the model reuses call_0; title; max_tokens; nothing on stderr', async (t) => {
  const bin = cairnBinary();
  const read = JSON.stringify({ path: 'notes.txt' });
  const cut = [
    { id: 'chatcmpl-9', choices: [{ index: 0, delta: { content: 'This answer is cut' } }] },
    { id: 'chatcmpl-9', choices: [{ index: 0, delta: {}, finish_reason: 'length' }], usage: { prompt_tokens: 90, completion_tokens: 64 } },
  ];
  const s = await setup([toolTurn('call_0', 'read_file', read), textTurn('first answer'), toolTurn('call_0', 'read_file', read), cut], ['gpt-test']);
  t.after(() => s.server.close());
  // A configuration problem: shown in the session, logged to the file, not on stderr.
  const a = startAgent(bin, { ...s.env, CAIRN_CONTEXT_WINDOW: 'lots' });
  await a.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
  const { sessionId } = await a.agent.request(acp.methods.agent.session.new, { cwd: s.ws, mcpServers: [] });
  const question = 'What does notes.txt say, and why is it there in the first place? Please explain it all in detail.';
  const first = await a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: question }] });
  assert.equal(first.stopReason, 'end_turn');
  const second = await a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'Read it again' }] });
  assert.equal(second.stopReason, 'max_tokens');

  const ids = of(a, sessionId, 'tool_call').map((u) => u.toolCallId);
  assert.equal(ids.length, 2);
  assert.equal(ids[0], 'call_0');
  assert.notEqual(ids[1], ids[0]);
  // Each card's updates carry its own id: both completed.
  for (const id of ids) {
    assert.equal(of(a, sessionId, 'tool_call_update').filter((u) => u.toolCallId === id).at(-1).status, 'completed', id);
  }

  const info = of(a, sessionId, 'session_info_update');
  assert.ok(info.length >= 1);
  assert.ok(question.startsWith(info[0].title.replace(/…$/, '')), info[0].title);
  assert.ok(info[0].title.length <= 80);
  assert.ok(!Number.isNaN(Date.parse(info[0].updatedAt)));

  const text = of(a, sessionId, 'agent_message_chunk').map((u) => u.content.text).join('');
  assert.match(text, /\[Cairn\] configuration: CAIRN_CONTEXT_WINDOW="lots"/);
  assert.equal(await a.stop(), 0);
  assert.equal(a.stderr(), '', 'cairn acp wrote to stderr at the default log level');
  const log = join(s.home, 'cache', 'cairn', 'acp.log');
  assert.ok(existsSync(log));
  assert.match(readFileSync(log, 'utf8'), /CAIRN_CONTEXT_WINDOW/);
});
