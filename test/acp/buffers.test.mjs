// Black-box test of `cairn acp` with an unsaved buffer the prompt does not
// attach: the official ACP client (@agentclientprotocol/sdk) holds text for a
// file that differs from the disk; the agent's read_file and edit_file see
// that text (through fs/read_text_file), the accepted edit is written on top
// of it (the unsaved text survives), and a hunk over lines the user changed
// while the edit waited is not applied, the tool call saying where.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { writeFileSync, readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { cairnBinary, startModelServer, toolTurn, textTurn, tempDir } from '../blackbox/helpers.mjs';

const original = 'export function add(a, b) {\n  return a - b;\n}\n\nexport function mul(a, b) {\n  return a + b;\n}\n';
const unsaved = '// unsaved: the user is still typing here\n' + original;

// run starts `cairn acp`, prompts once (text only) and returns what the
// client saw. onPermission may change the buffer while the edit waits.
async function run(t, turns, onPermission) {
  const { server, requests, port } = await startModelServer(turns);
  t.after(() => server.close());
  const ws = tempDir('cairn-acp-buf-');
  mkdirSync(join(ws, 'src'));
  const file = join(ws, 'src', 'calc.js');
  writeFileSync(file, original);
  const buffers = new Map([[file, unsaved]]);
  const home = tempDir('cairn-acp-home-');
  const env = {
    PATH: process.env.PATH, HOME: home, XDG_CACHE_HOME: join(home, 'cache'),
    CAIRN_PROVIDER: 'openai', CAIRN_MODEL: 'gpt-test', OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
    OPENAI_API_KEY: 'sk-test-not-a-real-key',
  };
  const proc = spawn(cairnBinary(), ['acp'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const exited = new Promise((ok) => proc.on('exit', (code) => ok(code)));
  const seen = { updates: [], writes: [], reads: [] };
  const app = acp.client({ name: 'cairn-acp-buffers' })
    .onNotification(acp.methods.client.session.update, ({ params }) => { seen.updates.push(params.update); })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      if (onPermission) onPermission(buffers, file);
      return { outcome: { outcome: 'selected', optionId: params.options.find((o) => o.kind === 'allow_once').optionId } };
    })
    .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
      seen.reads.push(params.path);
      return { content: buffers.get(params.path) ?? readFileSync(params.path, 'utf8') };
    })
    .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
      seen.writes.push(params);
      buffers.set(params.path, params.content); // the buffer is updated, not saved
      return {};
    });
  const conn = app.connect(acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));
  await conn.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } },
  });
  const { sessionId } = await conn.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
  const resp = await conn.agent.request(acp.methods.agent.session.prompt, {
    sessionId, prompt: [{ type: 'text', text: 'Fix the arithmetic in src/calc.js.' }],
  });
  assert.equal(resp.stopReason, 'end_turn', stderr);
  proc.stdin.end();
  assert.equal(await exited, 0, stderr);
  return { seen, requests, file, disk: readFileSync(file, 'utf8'), buffer: buffers.get(file), stderr };
}

function toolMessage(requests, id) {
  for (const r of requests) {
    const m = r.messages.find((m) => m.role === 'tool' && m.tool_call_id === id);
    if (m) return typeof m.content === 'string' ? m.content : JSON.stringify(m.content);
  }
  return '';
}

function editText(seen, id) {
  return seen.updates.filter((u) => u.sessionUpdate === 'tool_call_update' && u.toolCallId === id)
    .flatMap((u) => u.content ?? []).filter((c) => c.type === 'content').map((c) => c.content.text).join('\n');
}

test('cairn acp: read_file and an accepted edit use the unsaved buffer; the unsaved text survives', async (t) => {
  const read = JSON.stringify({ path: 'src/calc.js' });
  const edit = JSON.stringify({ path: 'src/calc.js', oldText: 'return a - b;', newText: 'return a + b;' });
  const { seen, requests, file, disk, buffer, stderr } = await run(t,
    [toolTurn('call_read', 'read_file', read), toolTurn('call_edit', 'edit_file', edit), textTurn('Fixed add.')]);
  assert.match(toolMessage(requests, 'call_read'), /unsaved: the user is still typing here/, 'read_file saw the buffer');
  assert.ok(seen.reads.includes(file), 'fs/read_text_file was used');
  assert.equal(seen.writes.length, 1, stderr);
  assert.equal(seen.writes[0].content, unsaved.replace('return a - b;', 'return a + b;'));
  assert.equal(buffer, seen.writes[0].content);
  assert.equal(disk, original, 'nothing was saved behind the editor');
});

test('cairn acp: a hunk over lines typed while the edit waited is not applied; the rest is', async (t) => {
  const edit = JSON.stringify({ path: 'src/calc.js', oldText: '  return a - b;\n}\n\nexport function mul(a, b) {\n  return a + b;',
    newText: '  return a + b;\n}\n\nexport function mul(a, b) {\n  return a * b;' });
  const typed = unsaved.replace('  return a + b;\n}\n', '  return a + b; // keep: typed during review\n}\n');
  const { seen, stderr } = await run(t, [toolTurn('call_edit', 'edit_file', edit), textTurn('Fixed both.')],
    (buffers, file) => buffers.set(file, typed));
  assert.equal(seen.writes.length, 1, stderr);
  assert.equal(seen.writes[0].content, typed.replace('return a - b;', 'return a + b;'));
  const text = editText(seen, 'call_edit');
  assert.match(text, /Not applied, because you changed the same lines while the edit waited: src\/calc\.js line 7/);
  assert.doesNotMatch(text, /edit-[0-9a-f]/);
});
