// Black-box test of `cairn acp` with a client that offers terminals (as Zed
// does): the client app of the official TypeScript SDK implements
// terminal/* by spawning the program it is given, as an editor does. An
// allowed command must reach the client as Cairn's sandboxed launcher (never
// the raw command line), its output must show in the terminal and reach the
// model, the card must embed the terminal, and a command the user denies
// must never reach terminal/create.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Readable, Writable } from 'node:stream';
import { writeFileSync, mkdirSync, realpathSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import * as acp from '@agentclientprotocol/sdk';
import { cairnBinary, startModelServer, toolTurn, textTurn, tempDir } from '../blackbox/helpers.mjs';

test('cairn acp: commands run in the client terminal as the sandboxed launcher; denied ones never reach it', async (t) => {
  const bin = cairnBinary();
  const ws = realpathSync(tempDir('cairn-acp-ws-'));
  const outside = realpathSync(tempDir('cairn-acp-outside-'));
  mkdirSync(join(ws, 'd'));
  writeFileSync(join(ws, 'd', 's.sh'), `echo hello-term\ntouch d/made.txt\ntouch ${outside}/escaped 2>/dev/null || echo outside-denied\n`);
  const { server, requests, port } = await startModelServer([
    toolTurn('call_ok', 'run_command', JSON.stringify({ command: 'sh d/s.sh' })),
    toolTurn('call_no', 'run_command', JSON.stringify({ command: 'touch d/denied.txt' })),
    textTurn('done'),
  ]);
  t.after(() => server.close());
  const home = tempDir('cairn-acp-home-');
  const env = {
    PATH: process.env.PATH, HOME: home, XDG_CACHE_HOME: join(home, 'cache'),
    CAIRN_PROVIDER: 'openai', CAIRN_MODEL: 'gpt-test', OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
    OPENAI_API_KEY: 'sk-test-not-a-real-key',
  };
  const proc = spawn(bin, ['acp'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  t.after(() => proc.stdin.end());

  const updates = [];
  const created = [];
  const released = [];
  const terminals = new Map();
  const app = acp.client({ name: 'cairn-acp-terminal' })
    .onNotification(acp.methods.client.session.update, ({ params }) => { updates.push(params); })
    .onRequest(acp.methods.client.session.requestPermission, ({ params }) => {
      const deny = params.toolCall.title.includes('denied.txt');
      return { outcome: { outcome: 'selected', optionId: params.options.find((o) => o.kind === (deny ? 'reject_once' : 'allow_once')).optionId } };
    })
    .onRequest(acp.methods.client.terminal.create, ({ params }) => {
      created.push(params);
      const extra = Object.fromEntries((params.env ?? []).map((e) => [e.name, e.value]));
      const child = spawn(params.command, params.args ?? [], { cwd: params.cwd, env: { ...process.env, ...extra } });
      const term = { output: '', exit: new Promise((ok) => child.on('exit', (code, signal) => ok({ exitCode: code, signal }))), child };
      child.stdout.on('data', (d) => { term.output += d; });
      child.stderr.on('data', (d) => { term.output += d; });
      const terminalId = `term-${created.length}`;
      terminals.set(terminalId, term);
      return { terminalId };
    })
    .onRequest(acp.methods.client.terminal.waitForExit, async ({ params }) => terminals.get(params.terminalId).exit)
    .onRequest(acp.methods.client.terminal.output, ({ params }) => ({ output: terminals.get(params.terminalId).output, truncated: false }))
    .onRequest(acp.methods.client.terminal.kill, ({ params }) => { terminals.get(params.terminalId).child.kill(); return {}; })
    .onRequest(acp.methods.client.terminal.release, ({ params }) => { released.push(params.terminalId); return {}; });
  const conn = app.connect(acp.ndJsonStream(Writable.toWeb(proc.stdin), Readable.toWeb(proc.stdout)));

  await conn.agent.request(acp.methods.agent.initialize, {
    protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { terminal: true }, clientInfo: { name: 'blackbox', version: '1' },
  });
  const { sessionId } = await conn.agent.request(acp.methods.agent.session.new, { cwd: ws, mcpServers: [] });
  const res = await conn.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: 'text', text: 'run the script' }] });
  assert.equal(res.stopReason, 'end_turn', stderr);

  assert.equal(created.length, 1, `terminal/create calls: ${JSON.stringify(created)}`);
  const c = created[0];
  assert.equal(realpathSync(c.command), realpathSync(bin), 'the client runs the cairn binary (its sandbox launcher)');
  assert.deepEqual(c.args, ['sandbox-run']);
  assert.deepEqual(c.env.map((e) => e.name), ['CAIRN_RUN_SPEC']);
  assert.equal(c.cwd, ws);
  assert.ok(!JSON.stringify(c).includes('s.sh'), 'the raw command line never reaches the client');
  const term = terminals.get('term-1');
  assert.match(term.output, /hello-term/);
  assert.match(term.output, /outside-denied/, 'the write outside the workspace was refused by the sandbox');
  assert.ok(!existsSync(join(outside, 'escaped')));
  assert.ok(existsSync(join(ws, 'd', 'made.txt')));
  assert.ok(!existsSync(join(ws, 'd', 'denied.txt')));
  assert.deepEqual(released, ['term-1']);

  const onCard = updates.some(({ update }) => update.sessionUpdate === 'tool_call_update' && update.toolCallId === 'call_ok' &&
    (update.content ?? []).some((x) => x.type === 'terminal' && x.terminalId === 'term-1'));
  assert.ok(onCard, 'the card embeds the terminal');
  const toModel = JSON.stringify(requests.slice(1));
  assert.match(toModel, /hello-term/, 'the model gets the output');
});
