// Black-box test of `cairn acp` sessions and setup (issue 26, items 2 and 5),
// with the official TypeScript SDK's client app against a local
// OpenAI-compatible streaming endpoint: a command's output on its card
// (capped, redacted) for a client without terminals; session/list without
// cwd lists the sessions saved by an earlier process in another folder;
// session/delete; an MCP server's env given as an object; authenticate with
// an unknown method is an error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { writeFileSync, mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { cairnBinary, startModelServer, toolTurn, textTurn, tempDir } from '../blackbox/helpers.mjs';

function waitFor(state, cond, what) {
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`timed out waiting for ${what}\n${state.stderr()}`)), 60000);
    const check = () => { if (cond()) { clearTimeout(timer); state.waiters.delete(check); ok(); } };
    state.waiters.add(check);
    check();
  });
}

function startAgent(bin, env) {
  const proc = spawn(bin, ['acp'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((ok) => proc.on('exit', (code) => ok(code)));
  const state = { updates: [], waiters: new Set(), stderr: () => stderr };
  const notify = () => { for (const w of [...state.waiters]) w(); };
  const app = acp.client({ name: 'cairn-acp-sessions' })
    .onNotification(acp.methods.client.session.update, ({ params }) => { state.updates.push(params); notify(); })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => (
      { outcome: { outcome: 'selected', optionId: params.options.find((o) => o.kind === 'allow_once').optionId } }));
  const conn = app.connect(acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));
  return { agent: conn.agent, state, stop: async () => { proc.stdin.end(); return exited; } };
}

const init = (a) => a.agent.request(acp.methods.agent.initialize, {
  protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {}, clientInfo: { name: 'blackbox', version: '1' },
});

function environment(port) {
  const home = tempDir('cairn-acp-home-');
  return {
    PATH: process.env.PATH, HOME: home, XDG_CACHE_HOME: join(home, 'cache'),
    CAIRN_PROVIDER: 'openai', CAIRN_MODEL: 'gpt-test', OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
    OPENAI_API_KEY: 'sk-test-not-a-real-key', CAIRN_APPROVAL: 'policy',
  };
}

function workspace() {
  const ws = realpathSync(tempDir('cairn-acp-ws-'));
  mkdirSync(join(ws, 'src'));
  writeFileSync(join(ws, 'src', 'a.txt'), 'a\n');
  return ws;
}

// The card's text in the last tool_call_update of callId that has content.
function cardText(updates, callId) {
  let text = '';
  for (const { update } of updates) {
    if (update.sessionUpdate === 'tool_call_update' && update.toolCallId === callId && update.content?.length) {
      text = update.content.map((c) => c.content?.text ?? '').join('');
    }
  }
  return text;
}

test('cairn acp: without client terminals a command card shows its output, capped and redacted', async (t) => {
  const bin = cairnBinary();
  const cmd = "printf 'hello from the command\\n'; printf 'token ghp_%s\\n' N4mEtOkEn7Qz2Lx9Wv3Bc8Rt5Yp1Ks6Hd0Ja; seq 1 30000";
  const { server, port } = await startModelServer([toolTurn('call_run', 'run_command', JSON.stringify({ command: cmd })), textTurn('ran it')]);
  t.after(() => server.close());
  const ws = workspace();
  const a = startAgent(bin, environment(port));
  t.after(() => a.stop());
  await init(a);
  const { sessionId } = await a.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
  const res = await a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'run it' }] });
  assert.equal(res.stopReason, 'end_turn');
  const card = cardText(a.state.updates, 'call_run');
  assert.match(card, /exit 0/, card);
  assert.match(card, /hello from the command/);
  assert.match(card, /\n30000\n/, 'the tail of the output is kept');
  assert.match(card, /bytes (not shown|omitted)/, 'long output is capped');
  assert.ok(card.length < 12000, `card is ${card.length} bytes`);
  assert.ok(!card.includes('ghp_N4mE'), 'the secret is masked on the card');
});

test('cairn acp: session/list without cwd, session/delete, MCP env object, unknown authenticate method', async (t) => {
  const bin = cairnBinary();
  const { server, port } = await startModelServer([textTurn('first answer')]);
  t.after(() => server.close());
  const env = environment(port);
  const ws1 = workspace();
  const ws2 = workspace();

  // A first process saves a session in ws1.
  const a = startAgent(bin, env);
  await init(a);
  const s1 = (await a.agent.request(acp.methods.agent.session.new, { cwd: ws1, mcpServers: [] })).sessionId;
  await a.agent.request(acp.methods.agent.session.prompt, { sessionId: s1, prompt: [{ type: 'text', text: 'Remember this question' }] });
  assert.equal(await a.stop(), 0);

  // A second process, opened on ws2, lists it without a cwd.
  const b = startAgent(bin, env);
  t.after(() => b.stop());
  const info = await init(b);
  assert.deepEqual(info.agentCapabilities.sessionCapabilities.delete, {});
  await assert.rejects(b.agent.request(acp.methods.agent.authenticate, { methodId: 'oauth-nope' }), /unknown authentication method/);

  // CodeCompanion's shape of an MCP server's env: an object.
  const s2 = (await b.agent.request(acp.methods.agent.session.new, {
    cwd: ws2, mcpServers: [{ name: 'probe', command: '/bin/true', args: [], env: { PROBE_TOKEN: 'x', LEVEL: '2' } }],
  })).sessionId;
  assert.match(s2, /^thread-/);

  let list = await b.agent.request(acp.methods.agent.session.list, {});
  const saved = list.sessions.find((s) => s.sessionId === s1);
  assert.ok(saved, `session/list without cwd lacks the saved session: ${JSON.stringify(list)}`);
  assert.equal(saved.cwd, ws1);
  assert.match(saved.title, /Remember this question/);
  assert.ok(list.sessions.some((s) => s.sessionId === s2 && s.cwd === ws2));

  // Deleting: the saved one (its folder not open here) and the live one.
  assert.deepEqual(await b.agent.request(acp.methods.agent.session.delete, { sessionId: s1 }), {});
  assert.deepEqual(await b.agent.request(acp.methods.agent.session.delete, { sessionId: s2 }), {});
  list = await b.agent.request(acp.methods.agent.session.list, {});
  assert.ok(!list.sessions.some((s) => s.sessionId === s1 || s.sessionId === s2), JSON.stringify(list));
  await assert.rejects(b.agent.request(acp.methods.agent.session.load, { sessionId: s1, cwd: ws1, mcpServers: [] }), /no session/);
  await assert.rejects(b.agent.request(acp.methods.agent.session.prompt, { sessionId: s2, prompt: [{ type: 'text', text: 'hi' }] }), /no session/);
  await assert.rejects(b.agent.request(acp.methods.agent.session.delete, { sessionId: 'thread-unknown' }), /no session/);
  await assert.rejects(b.agent.request(acp.methods.agent.session.delete, { sessionId: '../../etc' }), /invalid session id/);
});
