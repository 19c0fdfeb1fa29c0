// Black-box tests of threads, per-hunk review and plain-LSP clients: the
// real `cairn` binary over stdio, driven by vscode-languageserver-protocol,
// against a local HTTP server speaking OpenAI's streaming wire format (the
// requests it captures are what the model was sent).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cairnBinary, startModelServer, toolTurn, textTurn, tempDir } from './helpers.mjs';
import { applyTextEdits, startServe } from './serve.mjs';

const bin = cairnBinary();

// Two changes three lines apart: two hunks.
const original = 'export function add(a, b) {\n  return a - b;\n}\n\nexport function mul(a, b) {\n  return a + b;\n}\n';
const twoHunkEdit = JSON.stringify({
  path: 'src/calc.js',
  oldText: 'return a - b;\n}\n\nexport function mul(a, b) {\n  return a + b;',
  newText: 'return a + b;\n}\n\nexport function mul(a, b) {\n  return a * b;',
});

function workspace() {
  const ws = tempDir('cairn-ws-');
  mkdirSync(join(ws, 'src'));
  writeFileSync(join(ws, 'src', 'calc.js'), original);
  return ws;
}

// session starts `cairn serve` on ws and initializes it. A Cairn client
// declares experimental.cairn.runEvents; a plain one (like eglot) does not,
// and opens documents it is shown.
async function session(t, { ws, home, port, plain = false }) {
  const { proc, conn, exited, stderr } = startServe(bin, port, home);
  const s = { conn, events: [], shown: [], messages: [], onChange: () => {}, stderr };
  conn.onNotification('cairn/runEvent', (ev) => { s.events.push(ev); s.onChange(); });
  conn.onNotification('window/showMessage', (m) => { s.messages.push(m.message); s.onChange(); });
  conn.onRequest('window/showMessageRequest', () => ({ title: 'Allow once' }));
  conn.onRequest('window/showDocument', ({ uri }) => { s.shown.push(uri); s.onChange(); return { success: true }; });
  conn.onRequest('workspace/applyEdit', ({ edit }) => {
    // Apply and save, as a user who accepts does.
    for (const dc of edit.documentChanges ?? []) {
      if (!dc.textDocument) continue;
      const p = fileURLToPath(dc.textDocument.uri);
      writeFileSync(p, applyTextEdits(readFileSync(p, 'utf8'), dc.edits));
    }
    for (const [uri, edits] of Object.entries(edit.changes ?? {})) {
      const p = fileURLToPath(uri);
      writeFileSync(p, applyTextEdits(readFileSync(p, 'utf8'), edits));
    }
    return { applied: true };
  });
  conn.listen();
  const rootUri = pathToFileURL(ws).href;
  const capabilities = {
    workspace: { applyEdit: true, workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'] } },
    window: plain ? { showDocument: { support: true } } : {},
  };
  if (!plain) capabilities.experimental = { cairn: { runEvents: true } };
  await conn.sendRequest('initialize', { processId: process.pid, rootUri, workspaceFolders: [{ uri: rootUri, name: 'ws' }], capabilities });
  await conn.sendNotification('initialized', {});
  s.exec = (command, arg) => conn.sendRequest('workspace/executeCommand', { command, arguments: [arg] });
  // until resolves once cond() holds; only a hang fails it (two minutes:
  // a loaded machine is slow).
  s.until = (what, cond) => new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`timed out waiting for ${what}: ${JSON.stringify(s.events)}\n${stderr()}`)), 120000);
    s.onChange = () => { if (cond()) { clearTimeout(timer); ok(); } };
    s.onChange();
  });
  s.waitRun = async (runId) => {
    await s.until(`run ${runId}`, () => s.events.some((e) => e.runId === runId && ['finished', 'failed', 'cancelled'].includes(e.kind)));
    return s.events.filter((e) => e.runId === runId);
  };
  s.close = async () => {
    await conn.sendRequest('shutdown');
    await conn.sendNotification('exit');
    assert.equal(await exited, 0);
    conn.dispose();
  };
  t.after(() => proc.kill());
  return s;
}

const userText = (req) => req.messages.filter((m) => m.role === 'user').map((m) => m.content).join('\n');

test('a follow-up in the same thread sends the first exchange to the model; threads are listed after a restart', async (t) => {
  const { server, requests, port } = await startModelServer([
    textTurn('add subtracts: the operator is wrong.'), textTurn('mul adds: also wrong.'),
  ]);
  t.after(() => server.close());
  const ws = workspace();
  const home = tempDir('cairn-home-');
  const uri = pathToFileURL(join(ws, 'src', 'calc.js')).href;

  const s = await session(t, { ws, home, port });
  const first = await s.exec('cairn.ask', { uri, question: 'What is wrong with add?' });
  assert.match(first.runId, /^run-/);
  assert.match(first.threadId, /^thread-/);
  const evs = await s.waitRun(first.runId);
  assert.equal(evs[0].kind, 'started');
  assert.equal(evs[0].threadId, first.threadId);
  assert.equal(evs[0].question, 'What is wrong with add?');
  assert.equal(evs.at(-1).kind, 'finished');

  const second = await s.exec('cairn.ask', { uri, question: 'And mul?', threadId: first.threadId });
  assert.equal(second.threadId, first.threadId);
  assert.equal((await s.waitRun(second.runId)).at(-1).kind, 'finished');
  assert.equal(requests.length, 2);
  const followUp = userText(requests[1]);
  assert.ok(followUp.includes('What is wrong with add?'), followUp);
  assert.ok(followUp.includes('add subtracts: the operator is wrong.'), followUp);
  assert.ok(followUp.includes('And mul?'), followUp);
  assert.ok(!userText(requests[0]).includes('Earlier in this conversation'), 'a new thread has no history');
  await s.close();

  // A new server process on the same workspace and state.
  const s2 = await session(t, { ws, home, port });
  const threads = await s2.exec('cairn.listThreads', {});
  assert.equal(threads.length, 1);
  assert.equal(threads[0].threadId, first.threadId);
  assert.equal(threads[0].title, 'What is wrong with add?');
  assert.deepEqual(threads[0].runs, [first.runId, second.runId]);
  assert.ok(!Number.isNaN(Date.parse(threads[0].updated)));
  await assert.rejects(s2.exec('cairn.ask', { uri, question: 'x', threadId: '../etc' }), /invalid thread id/);
  await s2.close();
});

test('two hunks: accept hunk 0, reject hunk 1, undo restores byte for byte', async (t) => {
  const { server, port } = await startModelServer([
    toolTurn('call_edit', 'edit_file', twoHunkEdit), textTurn('Fixed both operators.'),
  ]);
  t.after(() => server.close());
  const ws = workspace();
  const file = join(ws, 'src', 'calc.js');
  const uri = pathToFileURL(file).href;
  const s = await session(t, { ws, home: tempDir('cairn-home-'), port });
  const { runId } = await s.exec('cairn.ask', { uri, question: 'Fix the operators' });
  const evs = await s.waitRun(runId);
  const { editId } = evs.find((e) => e.kind === 'editProposed');

  let view = await s.exec('cairn.getEdit', { editId });
  assert.equal(view.hunks.length, 2);
  assert.deepEqual(view.hunks.map((h) => [h.index, h.path, h.startLine, h.endLine, h.state]),
    [[0, 'src/calc.js', 1, 2, 'pending'], [1, 'src/calc.js', 5, 6, 'pending']]);
  assert.ok(view.hunks[1].diff.includes('+  return a * b;'));

  const acc = await s.exec('cairn.acceptEdit', { editId, hunks: [0] });
  assert.equal(acc.applied, true);
  const one = original.replace('return a - b;', 'return a + b;');
  assert.equal(readFileSync(file, 'utf8'), one);
  view = await s.exec('cairn.getEdit', { editId });
  assert.equal(view.state, 'pending', 'pending until every hunk is decided');

  await s.exec('cairn.rejectEdit', { editId, hunks: [1] });
  assert.equal(readFileSync(file, 'utf8'), one);
  view = await s.exec('cairn.getEdit', { editId });
  assert.equal(view.state, 'accepted');
  assert.deepEqual(view.hunks.map((h) => h.state), ['accepted', 'rejected']);

  const undo = await s.exec('cairn.undo', { checkpointId: acc.checkpointId });
  assert.equal(undo.applied, true);
  assert.equal(readFileSync(file, 'utf8'), original, 'undo restores byte for byte');
  await s.close();
});

test('a plain LSP client gets the answer with window/showDocument and accepts through a code action', async (t) => {
  const { server, port } = await startModelServer([
    toolTurn('call_edit', 'edit_file', twoHunkEdit), textTurn('Fixed both operators.'),
  ]);
  t.after(() => server.close());
  const ws = workspace();
  const file = join(ws, 'src', 'calc.js');
  const uri = pathToFileURL(file).href;
  const home = tempDir('cairn-home-');
  const s = await session(t, { ws, home, port, plain: true });

  // The user picks "Explain this code" from the code-action menu.
  const range = { start: { line: 0, character: 0 }, end: { line: 6, character: 1 } };
  const menu = await s.conn.sendRequest('textDocument/codeAction', { textDocument: { uri }, range, context: { diagnostics: [] } });
  const explain = menu.find((a) => a.title === 'Explain this code');
  const { runId } = await s.exec(explain.command.command, explain.command.arguments[0]);
  await s.waitRun(runId);
  await s.until('window/showDocument', () => s.shown.length > 0);
  const doc = fileURLToPath(s.shown[0]);
  assert.ok(doc.startsWith(join(home, 'cache', 'cairn')), `the answer document ${doc} is under the state dir`);
  assert.ok(doc.endsWith('.md'));
  const text = readFileSync(doc, 'utf8');
  assert.ok(text.includes('Fixed both operators.'), text);
  assert.ok(text.includes("Accept Cairn's edit…"), text);

  const actions = await s.conn.sendRequest('textDocument/codeAction', {
    textDocument: { uri }, range: { start: { line: 5, character: 2 }, end: { line: 5, character: 2 } }, context: { diagnostics: [] },
  });
  const accept = actions.find((a) => a.title === "Accept Cairn's edit…");
  assert.ok(accept, JSON.stringify(actions));
  assert.ok(actions.some((a) => a.title === "Reject Cairn's edit…"));
  const res = await s.exec(accept.command.command, accept.command.arguments[0]);
  assert.equal(res.applied, true);
  assert.equal(readFileSync(file, 'utf8'), 'export function add(a, b) {\n  return a + b;\n}\n\nexport function mul(a, b) {\n  return a * b;\n}\n');
  await s.close();
});
