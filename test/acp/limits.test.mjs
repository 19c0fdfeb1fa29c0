// Black-box tests of `cairn acp` under hostile input, on raw newline-delimited
// JSON-RPC (a client may write anything to the agent's stdin): a flood of
// notifications must not end the agent, and many sessions must not take the
// user's inotify instances.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync, readdirSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { cairnBinary, tempDir } from '../blackbox/helpers.mjs';

// startRaw spawns `cairn acp` and collects its answers by id.
function startRaw(bin) {
  const home = tempDir('cairn-acp-home-');
  const env = { PATH: process.env.PATH, HOME: home, XDG_CACHE_HOME: join(home, 'cache'), CAIRN_PROVIDER: 'scripted' };
  const proc = spawn(bin, ['acp'], { env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; if (stderr.length > 1 << 20) stderr = stderr.slice(-(1 << 19)); });
  let exitCode;
  const exited = new Promise((ok) => proc.on('exit', (code) => { exitCode = code; ok(code); }));
  const answers = new Map();
  const waiters = new Map();
  let buf = '';
  proc.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const line = buf.slice(0, i);
      buf = buf.slice(i + 1);
      let m;
      try { m = JSON.parse(line); } catch { continue; }
      if (m.id !== undefined && m.method === undefined) {
        answers.set(m.id, m);
        waiters.get(m.id)?.(m);
      }
    }
  });
  const write = (obj) => new Promise((ok, fail) => proc.stdin.write(JSON.stringify(obj) + '\n', (err) => (err ? fail(err) : ok())));
  // call sends a request and waits (generous deadline) for its answer, or
  // fails at once if the agent exits first.
  const call = (id, method, params) => {
    const answered = new Promise((ok) => {
      if (answers.has(id)) ok(answers.get(id));
      waiters.set(id, ok);
    });
    const gone = exited.then((code) => { throw new Error(`cairn acp exited (${code}) before answering ${method}\n${stderr.slice(-4000)}`); });
    const late = new Promise((_, fail) => setTimeout(() => fail(new Error(`no answer to ${method}\n${stderr.slice(-4000)}`)), 60000).unref());
    return write({ jsonrpc: '2.0', id, method, params }).then(() => Promise.race([answered, gone, late]));
  };
  return { proc, call, exited, alive: () => exitCode === undefined, stderr: () => stderr,
    stop: () => { proc.stdin.end(); return exited; } };
}

function workspace() {
  const ws = tempDir('cairn-acp-ws-');
  writeFileSync(join(ws, 'a.go'), 'package a\n');
  return ws;
}

test('cairn acp: 20,000 session/cancel notifications, then a request is still answered', async () => {
  const bin = cairnBinary();
  const a = startRaw(bin);
  const ws = workspace();
  await a.call(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} });
  const created = await a.call(2, 'session/new', { cwd: ws, mcpServers: [] });
  const sid = created.result?.sessionId;
  assert.ok(sid, JSON.stringify(created));
  // One write of the whole flood, as fast as the pipe takes it.
  let flood = '';
  for (let i = 0; i < 20000; i++) {
    flood += JSON.stringify({ jsonrpc: '2.0', method: 'session/cancel', params: { sessionId: i % 2 ? sid : `unknown-${i}` } }) + '\n';
  }
  await new Promise((ok, fail) => a.proc.stdin.write(flood, (err) => (err ? fail(err) : ok())));
  const listed = await a.call(3, 'session/list', { cwd: ws });
  assert.ok(Array.isArray(listed.result?.sessions), JSON.stringify(listed));
  const again = await a.call(4, 'session/new', { cwd: ws, mcpServers: [] });
  assert.ok(again.result?.sessionId, JSON.stringify(again));
  assert.ok(a.alive(), 'cairn acp exited during the flood');
  assert.equal(await a.stop(), 0);
});

function inotifyInstances(pid) {
  let n = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try { if (readlinkSync(`/proc/${pid}/fd/${fd}`).includes('inotify')) n++; } catch { /* closed meanwhile */ }
  }
  return n;
}

test('cairn acp: 150 sessions on one folder use one inotify instance; on 150 folders, a capped number', async () => {
  const bin = cairnBinary();
  const a = startRaw(bin);
  await a.call(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} });
  const ws = workspace();
  let id = 10;
  for (let i = 0; i < 150; i++) {
    const r = await a.call(id++, 'session/new', { cwd: ws, mcpServers: [] });
    assert.ok(r.result?.sessionId, JSON.stringify(r));
  }
  // session/list answers after the sessions' workspace is set up.
  await a.call(id++, 'session/list', { cwd: ws });
  assert.ok(inotifyInstances(a.proc.pid) <= 1, `150 sessions on one folder hold ${inotifyInstances(a.proc.pid)} inotify instances`);

  const parent = tempDir('cairn-acp-many-');
  for (let i = 0; i < 150; i++) {
    const dir = join(parent, `w${i}`);
    mkdirSync(dir);
    writeFileSync(join(dir, 'f.txt'), 'hello\n');
    const r = await a.call(id++, 'session/new', { cwd: dir, mcpServers: [] });
    assert.ok(r.result?.sessionId, JSON.stringify(r));
  }
  const held = inotifyInstances(a.proc.pid);
  assert.ok(held <= 16, `151 workspaces hold ${held} inotify instances (the user's limit is often 128)`);

  // session/load with a made-up id is refused before its folder is opened.
  const fresh = workspace();
  const loaded = await a.call(id++, 'session/load', { cwd: fresh, sessionId: 'thread-000000000000', mcpServers: [] });
  assert.ok(loaded.error, JSON.stringify(loaded));
  assert.ok(a.alive());
  assert.equal(await a.stop(), 0);
});
