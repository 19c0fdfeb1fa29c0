// Black-box test of `cairn acp` driven by a real ACP client: the `acpx` CLI
// (npm, pinned in package.json), as a user runs it: `acpx --agent "cairn
// acp" --format json exec "…"`. Its JSON output is the ACP traffic in both
// directions, one message a line, which the test reads back. The model is the
// local OpenAI-compatible endpoint of ../blackbox/helpers.mjs; the MCP server
// the client hands over is the real @modelcontextprotocol/server-everything
// (pinned in test/mcp) over streamable HTTP and over SSE.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { writeFileSync, readFileSync, existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cairnBinary, startModelServer, toolTurn, textTurn, tempDir } from '../blackbox/helpers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const acpx = join(here, 'node_modules', '.bin', 'acpx');
const everything = resolve(here, '..', 'mcp', 'node_modules', '@modelcontextprotocol', 'server-everything', 'dist', 'index.js');

function freePort() {
  return new Promise((ok) => { const s = createServer(); s.listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => ok(p)); }); });
}

// startEverything runs the MCP server over `streamableHttp` or `sse` and
// resolves with its URL once it listens.
async function startEverything(t, transport) {
  if (!existsSync(everything)) throw new Error(`${everything} is missing: run npm ci in test/mcp`);
  const port = await freePort();
  const proc = spawn(process.execPath, [everything, transport], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  t.after(() => proc.kill());
  await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error('the MCP server did not start')), 30000);
    proc.stderr.on('data', (d) => { if (/running|listening/i.test(String(d))) { clearTimeout(timer); ok(); } });
  });
  return `http://127.0.0.1:${port}/${transport === 'sse' ? 'sse' : 'mcp'}`;
}

// runAcpx runs one `acpx exec` against cairn and returns the ACP messages.
async function runAcpx(t, script, { models, mcpServers, extra = [], prompt }) {
  const bin = cairnBinary();
  const s = await startModelServer(script, { models });
  t.after(() => s.server.close());
  const ws = tempDir('cairn-acpx-ws-');
  writeFileSync(join(ws, 'notes.txt'), 'hello\n');
  const home = tempDir('cairn-acpx-home-');
  const args = ['--agent', `${bin} acp`, '--cwd', ws, '--format', 'json', '--approve-all', '--timeout', '120', ...extra];
  if (mcpServers) {
    writeFileSync(join(home, 'mcp.json'), JSON.stringify({ mcpServers }));
    args.push('--mcp-config', join(home, 'mcp.json'));
  }
  const env = {
    PATH: process.env.PATH, HOME: home, XDG_CACHE_HOME: join(home, 'cache'), TMPDIR: tmpdir(),
    CAIRN_PROVIDER: 'openai', CAIRN_MODEL: 'gpt-test', OPENAI_BASE_URL: `http://127.0.0.1:${s.port}/v1`,
    OPENAI_API_KEY: 'sk-test-not-a-real-key',
  };
  const { out, err } = await new Promise((ok, fail) => {
    execFile(acpx, [...args, 'exec', prompt], { env, timeout: 180000, maxBuffer: 64 << 20 }, (e, stdout, stderr) => {
      if (e) fail(new Error(`acpx failed (${e.code}): ${stderr}\n${stdout.slice(-4000)}`)); else ok({ out: stdout, err: stderr });
    });
  });
  const msgs = out.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
  return { msgs, ws, bin, requests: s.requests, stderr: err };
}

const updates = (msgs, kind) => msgs.filter((m) => m.method === 'session/update' && m.params.update.sessionUpdate === kind).map((m) => m.params.update);
const requestsOf = (msgs, method) => msgs.filter((m) => m.method === method && m.id !== undefined);
// Both sides number their requests from 0, so an answer is matched to its
// request by id and by shape. stopReason is the prompt's answer's.
const stopReason = (msgs) => msgs.find((m) => !m.method && m.result?.stopReason)?.result.stopReason;
// resultOf is the answer to the client's first request of the given method
// (initialize and session/new come before any request of the agent's).
function resultOf(msgs, method) {
  const req = msgs.find((m) => m.method === method && m.id !== undefined);
  assert.ok(req, `no ${method} request`);
  const res = msgs.find((m) => m.id === req.id && !m.method && (m.result !== undefined || m.error !== undefined) && msgs.indexOf(m) > msgs.indexOf(req));
  assert.ok(res, `no answer to ${method}`);
  return res.result;
}

test('acpx: plan, MCP over streamable HTTP, edit through fs, command in the client terminal, title, usage', async (t) => {
  const url = await startEverything(t, 'streamableHttp');
  const step = (a, b) => JSON.stringify({ entries: [{ content: 'Echo through MCP', status: a }, { content: 'Fix notes.txt', status: b, priority: 'high' }] });
  const script = [
    toolTurn('p1', 'update_plan', step('in_progress', 'pending')),
    toolTurn('m1', 'mcp__ev__echo', JSON.stringify({ message: 'hi over http' })),
    toolTurn('e1', 'edit_file', JSON.stringify({ path: 'notes.txt', oldText: 'hello', newText: 'hello world' })),
    toolTurn('c1', 'run_command', JSON.stringify({ command: 'echo from-the-terminal' })),
    toolTurn('p2', 'update_plan', step('completed', 'completed')),
    textTurn('All done.'),
  ];
  const r = await runAcpx(t, script, {
    prompt: 'fix notes', mcpServers: [{ name: 'ev', type: 'http', url, headers: [{ name: 'X-Cairn-Test', value: '1' }] }],
  });
  const init = resultOf(r.msgs, 'initialize');
  assert.deepEqual(init.agentCapabilities.mcpCapabilities, { http: true, sse: true });
  const created = resultOf(r.msgs, 'session/new');
  assert.equal(created.configOptions.find((o) => o.category === 'model')?.currentValue, 'gpt-test');
  assert.equal(created.configOptions.find((o) => o.category === 'mode')?.id, 'approval');

  // Plans: the whole list each time; the update_plan calls have no card.
  const plans = updates(r.msgs, 'plan').map((u) => u.entries.map((e) => `${e.content}:${e.status}:${e.priority}`).join(', '));
  assert.deepEqual(plans, [
    'Echo through MCP:in_progress:medium, Fix notes.txt:pending:high',
    'Echo through MCP:completed:medium, Fix notes.txt:completed:high',
  ]);
  const cards = updates(r.msgs, 'tool_call').map((u) => u.toolCallId);
  assert.deepEqual(cards, ['m1', 'e1', 'c1'], 'one card per tool call, none for update_plan, ids unique');

  // The MCP tool ran on the HTTP server and its answer reached the model.
  const done = (id) => updates(r.msgs, 'tool_call_update').filter((u) => u.toolCallId === id).map((u) => u.status).filter(Boolean).pop();
  assert.equal(done('m1'), 'completed');
  assert.ok(JSON.stringify(r.requests[2].messages).includes('Echo: hi over http'), 'the echo reached the model');

  // The edit: diff shown, permission asked, written through fs/write_text_file.
  assert.ok(updates(r.msgs, 'tool_call_update').some((u) => u.toolCallId === 'e1' && u.content?.some((c) => c.type === 'diff' && c.newText === 'hello world\n')));
  const writes = requestsOf(r.msgs, 'fs/write_text_file');
  assert.equal(writes.length, 1);
  assert.equal(writes[0].params.content, 'hello world\n');
  assert.equal(readFileSync(join(r.ws, 'notes.txt'), 'utf8'), 'hello world\n');

  // The command ran in acpx's terminal as Cairn's sandboxed launcher.
  const term = requestsOf(r.msgs, 'terminal/create');
  assert.equal(term.length, 1);
  assert.equal(term[0].params.command, r.bin);
  assert.deepEqual(term[0].params.args, ['sandbox-run']);
  assert.ok(!JSON.stringify(term[0].params).includes('from-the-terminal'), 'the command line is not given to the client');
  assert.ok(updates(r.msgs, 'tool_call_update').some((u) => u.toolCallId === 'c1' && u.content?.some((c) => c.type === 'terminal')));
  assert.equal(done('c1'), 'completed');
  assert.ok(JSON.stringify(r.requests[4].messages).includes('from-the-terminal'), 'the command output reached the model');

  assert.equal(updates(r.msgs, 'session_info_update')[0]?.title, 'fix notes');
  assert.ok(updates(r.msgs, 'usage_update').length >= 1);
  assert.equal(stopReason(r.msgs), 'end_turn');
});

test('acpx: MCP over SSE, model picker (--model), max_tokens stop reason', async (t) => {
  const url = await startEverything(t, 'sse');
  const cut = textTurn('This answer is cu');
  cut[cut.length - 1].choices[0].finish_reason = 'length';
  const script = [toolTurn('m1', 'mcp__ev__echo', JSON.stringify({ message: 'hi over sse' })), cut];
  const r = await runAcpx(t, script, {
    prompt: 'echo it', models: ['gpt-test', 'gpt-big'], extra: ['--model', 'gpt-big'],
    mcpServers: [{ name: 'ev', type: 'sse', url, headers: [] }],
  });
  const set = requestsOf(r.msgs, 'session/set_config_option');
  assert.equal(set.length, 1);
  assert.equal(set[0].params.configId, 'model');
  assert.deepEqual(r.requests.map((q) => q.model), ['gpt-big', 'gpt-big'], 'both model calls asked the chosen model');
  const last = updates(r.msgs, 'tool_call_update').filter((u) => u.toolCallId === 'm1' && u.status).pop();
  assert.equal(last.status, 'completed');
  assert.ok(JSON.stringify(r.requests[1].messages).includes('Echo: hi over sse'));
  assert.equal(stopReason(r.msgs), 'max_tokens');
});
