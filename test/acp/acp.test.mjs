// Black-box test of `cairn acp`: the built binary, driven over its stdio by
// the official Agent Client Protocol TypeScript SDK (@agentclientprotocol/sdk
// 2.4.0, whose client app replaced ClientSideConnection) over ndJsonStream,
// against a local HTTP server speaking OpenAI's streaming Chat Completions:
// initialize → new session → prompt with a selection → streamed text → an
// edit tool call with diff content → permission answered →
// fs/write_text_file → cancel of a second prompt → restart → session/load
// replays the first session without calling the model again.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { writeFileSync, readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as acp from '@agentclientprotocol/sdk';
import { cairnBinary, startModelServer, toolTurn, textTurn, chunk, tempDir } from '../blackbox/helpers.mjs';

const answer = 'add subtracted; it now adds.';

function script() {
  const read = JSON.stringify({ path: 'src/calc.js', startLine: 1, endLine: 5 });
  const edit = JSON.stringify({ path: 'src/calc.js', oldText: 'return a - b;', newText: 'return a + b;' });
  // The second prompt's answer starts streaming and then hangs: it is cancelled.
  const slow = { hold: true, events: chunk('Thinking about it', 3).map((c) => ({ id: 'chatcmpl-3', choices: [{ index: 0, delta: { content: c } }] })) };
  return [toolTurn('call_read', 'read_file', read), toolTurn('call_edit', 'edit_file', edit), textTurn(answer), slow];
}

// waitFor polls cond on every update, with a generous deadline (no timing
// assertion: the deadline only turns a hang into a failure).
function waitFor(state, cond, what) {
  return new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`timed out waiting for ${what}; updates: ${JSON.stringify(state.updates.slice(-5))}\n${state.stderr()}`)), 30000);
    const check = () => { if (cond()) { clearTimeout(timer); state.waiters.delete(check); ok(); } };
    state.waiters.add(check);
    check();
  });
}

// startAgent spawns `cairn acp` and connects the SDK's client app to it.
function startAgent(bin, env, client) {
  const proc = spawn(bin, ['acp'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((ok) => proc.on('exit', (code) => ok(code)));
  const state = { updates: [], permissions: [], writes: [], reads: [], waiters: new Set(), stderr: () => stderr };
  const notify = () => { for (const w of [...state.waiters]) w(); };
  const app = acp.client({ name: 'cairn-acp-blackbox' })
    .onNotification(acp.methods.client.session.update, ({ params }) => { state.updates.push(params); notify(); })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      state.permissions.push(params);
      notify();
      return { outcome: { outcome: 'selected', optionId: params.options.find((o) => o.kind === 'allow_once').optionId } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      state.reads.push(params.path);
      return { content: client.buffers.get(params.path) ?? readFileSync(params.path, 'utf8') };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      state.writes.push(params);
      client.buffers.set(params.path, params.content);
      writeFileSync(params.path, params.content); // the editor saves
      notify();
      return {};
    });
  const conn = app.connect(acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));
  return { proc, exited, conn, agent: conn.agent, state, stop: async () => { proc.stdin.end(); return exited; } };
}

test('cairn acp: selection prompt → streamed text → edit with diff → permission → fs/write_text_file → cancel → load after restart', async (t) => {
  const bin = cairnBinary();
  const { server, requests, port } = await startModelServer(script());
  t.after(() => server.close());

  const ws = tempDir('cairn-acp-ws-');
  mkdirSync(join(ws, 'src'));
  const file = join(ws, 'src', 'calc.js');
  const original = '// calc — tiny arithmetic\nexport function add(a, b) {\n  return a - b;\n}\n// héllo 🙂 unicode stays intact\n';
  writeFileSync(file, original);
  // The editor's buffer has an unsaved change: Cairn must read it through
  // fs/read_text_file, and write on top of it.
  const buffer = '// unsaved: reviewed by the user\n' + original;
  const client = { buffers: new Map([[file, buffer]]) };
  const home = tempDir('cairn-acp-home-');
  const env = {
    PATH: process.env.PATH, HOME: home, XDG_CACHE_HOME: join(home, 'cache'),
    CAIRN_PROVIDER: 'openai', CAIRN_MODEL: 'gpt-test', OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
    OPENAI_API_KEY: 'sk-test-not-a-real-key',
  };

  // --- first process ---
  const a = startAgent(bin, env, client);
  const init = await a.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
    clientInfo: { name: 'blackbox', version: '1' },
  });
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentCapabilities.loadSession, true);
  assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true);
  assert.deepEqual(init.authMethods, []);
  assert.equal(init.agentInfo.name, 'cairn');

  const { sessionId, modes, configOptions } = await a.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
  assert.match(sessionId, /^thread-/); // a session is a Cairn thread
  assert.equal(modes.currentModeId, 'ask');
  assert.deepEqual(modes.availableModes.map((m) => m.id), ['ask', 'policy']);
  assert.equal(configOptions[0].id, 'approval');

  // The selection: lines 2-4 of the buffer (the function), as an embedded
  // resource with a line fragment, the way editors attach a selection.
  const selected = buffer.split('\n').slice(2, 5).join('\n');
  const uri = `${pathToFileURL(file).href}#L3-L5`;
  const first = await a.agent.request(acp.methods.agent.session.prompt, {
    sessionId,
    prompt: [
      { type: 'text', text: 'Why does add subtract? Fix it.' },
      { type: 'resource', resource: { uri, mimeType: 'text/javascript', text: selected } },
    ],
  });
  assert.equal(first.stopReason, 'end_turn', a.state.stderr());

  const mine = a.state.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
  // Streamed text, in more than one chunk, adds up to the answer.
  const chunks = mine.filter((u) => u.sessionUpdate === 'agent_message_chunk').map((u) => u.content.text);
  assert.ok(chunks.length > 1, `streamed in chunks: ${JSON.stringify(chunks)}`);
  assert.equal(chunks.join(''), answer);
  // Slash commands are announced.
  const cmds = mine.find((u) => u.sessionUpdate === 'available_commands_update');
  assert.deepEqual(cmds.availableCommands.map((c) => c.name).sort(), ['context', 'resume', 'rewind', 'undo']);
  // One tool_call per tool, with kind, status, locations and raw input.
  const calls = mine.filter((u) => u.sessionUpdate === 'tool_call');
  assert.deepEqual(calls.map((c) => [c.toolCallId, c.kind]), [['call_read', 'read'], ['call_edit', 'edit']]);
  assert.equal(calls[0].locations[0].path, file);
  assert.equal(calls[0].locations[0].line, 1);
  assert.deepEqual(calls[1].rawInput, { path: 'src/calc.js', oldText: 'return a - b;', newText: 'return a + b;' });
  // Usage against the context window, at the end of the turn.
  const usage = mine.find((u) => u.sessionUpdate === 'usage_update');
  assert.ok(usage && usage.used === 120 + 30 + 120 + 30 + 200 + 12 && usage.size > usage.used, JSON.stringify(usage));
  // gpt-test has no price: no cost figure rather than a made-up one.
  assert.ok(usage.cost == null, `usage_update of an unpriced model carries a cost: ${JSON.stringify(usage)}`);
  const readDone = mine.find((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'call_read' && u.status === 'completed');
  assert.ok(readDone, 'read_file completed');

  // The edit is shown as diff content: the whole file before and after.
  const written = buffer.replace('a - b', 'a + b');
  const diffUpdate = mine.find((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'call_edit' && u.content?.some((c) => c.type === 'diff'));
  const diff = diffUpdate.content.find((c) => c.type === 'diff');
  assert.deepEqual({ path: diff.path, oldText: diff.oldText, newText: diff.newText }, { path: file, oldText: buffer, newText: written });

  // The permission request carried the diff and offered ACP's four options.
  assert.equal(a.state.permissions.length, 1);
  const perm = a.state.permissions[0];
  assert.equal(perm.toolCall.toolCallId, 'call_edit');
  assert.equal(perm.toolCall.kind, 'edit');
  assert.ok(perm.toolCall.content.some((c) => c.type === 'diff' && c.newText === written));
  assert.deepEqual(perm.options.map((o) => o.kind).sort(), ['allow_always', 'allow_once', 'reject_always', 'reject_once']);

  // Accepted: written through fs/write_text_file, on top of the unsaved buffer.
  assert.equal(a.state.writes.length, 1);
  assert.deepEqual({ path: a.state.writes[0].path, content: a.state.writes[0].content, sessionId: a.state.writes[0].sessionId },
    { path: file, content: written, sessionId });
  const editDone = mine.filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'call_edit').at(-1);
  assert.equal(editDone.status, 'completed');
  assert.match(editDone.rawOutput.checkpointId, /^cp-|checkpoint|^[a-z]+-/);
  assert.ok(a.state.reads.includes(file), 'the buffer was read through fs/read_text_file');

  // The model saw the selection from the buffer (its unsaved first line shifts the lines).
  const user = requests[0].messages.find((m) => m.role === 'user').content;
  assert.match(user, /## Selection: src\/calc\.js lines 3-5/);
  assert.match(user, /unsaved: reviewed by the user/);

  // --- a second prompt, cancelled while the model streams ---
  const before = a.state.updates.length;
  const second = a.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'And subtraction?' }] });
  await waitFor(a.state, () => a.state.updates.slice(before).some((u) => u.update.sessionUpdate === 'agent_message_chunk'), 'the second answer to stream');
  await a.agent.notify(acp.methods.agent.session.cancel, { sessionId });
  const cancelled = await second;
  assert.equal(cancelled.stopReason, 'cancelled');
  assert.equal(requests.length, 4);
  // The session is a thread: the second prompt continued the first turn.
  const secondUser = requests[3].messages.find((m) => m.role === 'user').content;
  assert.match(secondUser, /Why does add subtract\? Fix it\./);
  assert.match(secondUser, /add subtracted; it now adds\./);

  const list = await a.agent.request(acp.methods.agent.session.list, { cwd: ws });
  assert.ok(list.sessions.some((s) => s.sessionId === sessionId && s.title.startsWith('Why does add subtract?')));
  assert.equal(await a.stop(), 0, a.state.stderr());

  // --- restart: a new process loads the first session from the journal ---
  const b = startAgent(bin, env, client);
  await b.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
  });
  const loaded = await b.agent.request(acp.methods.agent.session.load, { sessionId, cwd: ws, mcpServers: [] });
  assert.equal(loaded.modes.currentModeId, 'ask');
  const replay = b.state.updates.filter((u) => u.sessionId === sessionId).map((u) => u.update);
  const userMsgs = replay.filter((u) => u.sessionUpdate === 'user_message_chunk').map((u) => u.content.text);
  assert.equal(userMsgs.length, 2);
  assert.match(userMsgs[0], /^Why does add subtract\? Fix it\./);
  assert.equal(userMsgs[1], 'And subtraction?');
  const replayText = replay.filter((u) => u.sessionUpdate === 'agent_message_chunk').map((u) => u.content.text).join('');
  assert.ok(replayText.includes(answer), replayText);
  const replayEdit = replay.filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === 'call_edit').at(-1);
  assert.equal(replayEdit.status, 'completed');
  assert.ok(replayEdit.content.some((c) => c.type === 'diff' && c.newText === written));
  // Nothing was run again: no model request, no permission, no write.
  assert.equal(requests.length, 4);
  assert.equal(b.state.permissions.length, 0);
  assert.equal(b.state.writes.length, 0);

  // The loaded session answers its slash commands: the context report of the last run.
  const ctx = await b.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: '/context' }] });
  assert.equal(ctx.stopReason, 'end_turn');
  // The second run was cancelled before its report? No: reports are built first.
  const report = b.state.updates.filter((u) => u.update.sessionUpdate === 'agent_message_chunk').map((u) => u.update.content.text).join('');
  assert.match(report, /Context report/);
  assert.equal(await b.stop(), 0, b.state.stderr());
});
