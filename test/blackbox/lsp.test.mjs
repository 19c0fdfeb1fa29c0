// Black-box test: build the real `cairn` binary, start it as `cairn serve
// --stdio`, and drive it with vscode-languageserver-protocol (the client
// library VS Code itself uses) against a local HTTP server that speaks
// OpenAI's streaming Chat Completions wire format, with tool-call argument
// deltas split across chunks and a [DONE] terminator.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync, mkdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cairnBinary, startModelServer, toolTurn, textTurn, tempDir } from './helpers.mjs';
import { startServe } from './serve.mjs';

// The model's turns, served in order, each as an SSE stream.
function turns() {
  const read = JSON.stringify({ path: 'src/calc.js' });
  const edit = JSON.stringify({ path: 'src/calc.js', oldText: 'return a - b;', newText: 'return a + b;' });
  return [toolTurn('call_read', 'read_file', read), toolTurn('call_edit', 'edit_file', edit),
    textTurn('add subtracted; it now adds.')];
}

// applyTextEdits applies LSP edits (positions in UTF-16 units) to text.
function applyTextEdits(text, edits) {
  const lines = text.split('\n');
  const offset = (p) => {
    let o = 0;
    for (let l = 0; l < p.line; l++) o += lines[l].length + 1;
    return o + p.character; // JS strings are UTF-16, like LSP positions
  };
  const spans = edits.map((e) => ({ s: offset(e.range.start), e: offset(e.range.end), t: e.newText }))
    .sort((a, b) => b.s - a.s);
  for (const sp of spans) text = text.slice(0, sp.s) + sp.t + text.slice(sp.e);
  return text;
}

test('ask → tool calls over OpenAI SSE → proposed edit → accept → undo restores byte for byte', async (t) => {
  const bin = cairnBinary();
  const { server, requests, port } = await startModelServer(turns());
  t.after(() => server.close());

  const ws = tempDir('cairn-ws-');
  mkdirSync(join(ws, 'src'));
  const original = '// calc — tiny arithmetic\nexport function add(a, b) {\n  return a - b;\n}\n// héllo 🙂 unicode stays intact\n';
  writeFileSync(join(ws, 'src', 'calc.js'), original);
  const { home, conn, exited, stderr: logged } = startServe(bin, port);
  const events = [];
  let onEvent = () => {};
  conn.onNotification('cairn/runEvent', (ev) => { events.push(ev); onEvent(); });
  conn.onRequest('window/showMessageRequest', () => ({ title: 'Allow once' }));
  const applied = [];
  conn.onRequest('workspace/applyEdit', ({ edit }) => {
    applied.push(edit);
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
  const init = await conn.sendRequest('initialize', {
    processId: process.pid, rootUri, workspaceFolders: [{ uri: rootUri, name: 'ws' }],
    capabilities: { workspace: { applyEdit: true, workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'] } } },
  });
  assert.ok(init.capabilities.executeCommandProvider.commands.includes('cairn.ask'));
  assert.ok(init.capabilities.codeActionProvider);
  await conn.sendNotification('initialized', {});

  const uri = pathToFileURL(join(ws, 'src', 'calc.js')).href;
  const actions = await conn.sendRequest('textDocument/codeAction', {
    textDocument: { uri }, range: { start: { line: 1, character: 0 }, end: { line: 3, character: 1 } }, context: { diagnostics: [] },
  });
  assert.ok(actions.some((a) => a.title.includes('Explain') && a.command.command === 'cairn.ask'));

  const { runId } = await conn.sendRequest('workspace/executeCommand', {
    command: 'cairn.ask',
    arguments: [{ uri, range: { start: { line: 1, character: 0 }, end: { line: 3, character: 1 } }, question: 'Why does add subtract?' }],
  });
  assert.match(runId, /^run-/);
  await new Promise((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`run did not finish: ${JSON.stringify(events)}\n${logged()}`)), 120000); // generous: a loaded machine is slow, and only a hang should fail this
    onEvent = () => { if (events.some((e) => ['finished', 'failed', 'cancelled'].includes(e.kind))) { clearTimeout(timer); ok(); } };
    onEvent();
  });
  const mine = events.filter((e) => e.runId === runId);
  assert.deepEqual(mine.map((e) => e.seq), mine.map((_, i) => i + 1), 'seq runs 1..n');
  const finished = mine.at(-1);
  assert.equal(finished.kind, 'finished', JSON.stringify(finished));
  assert.equal(finished.answer, 'add subtracted; it now adds.');
  assert.equal(finished.usage.inputTokens, 120 + 120 + 200);
  const calls = mine.filter((e) => e.kind === 'toolCall');
  assert.deepEqual(calls.map((c) => c.tool), ['read_file', 'edit_file']);
  assert.deepEqual(calls[1].input, { path: 'src/calc.js', oldText: 'return a - b;', newText: 'return a + b;' });
  // The model got the tool result of read_file in its second request.
  const toolMsg = requests[1].messages.find((m) => m.role === 'tool');
  assert.ok(toolMsg && toolMsg.content.includes('return a - b;') && toolMsg.tool_call_id === 'call_read');
  assert.ok(requests[0].tools.some((x) => x.function.name === 'edit_file'));

  const proposed = mine.find((e) => e.kind === 'editProposed');
  assert.ok(proposed, 'an edit was proposed');
  assert.equal(readFileSync(join(ws, 'src', 'calc.js'), 'utf8'), original, 'nothing written before accept');

  const acc = await conn.sendRequest('workspace/executeCommand', { command: 'cairn.acceptEdit', arguments: [{ editId: proposed.editId }] });
  assert.equal(acc.applied, true);
  assert.equal(readFileSync(join(ws, 'src', 'calc.js'), 'utf8'), original.replace('a - b', 'a + b'));

  const undo = await conn.sendRequest('workspace/executeCommand', { command: 'cairn.undo', arguments: [{ checkpointId: acc.checkpointId }] });
  assert.equal(undo.applied, true);
  assert.equal(readFileSync(join(ws, 'src', 'calc.js'), 'utf8'), original, 'undo restores byte for byte');
  assert.equal(applied.length, 2);

  // Unknown command: a clear error, and the server keeps serving.
  await assert.rejects(conn.sendRequest('workspace/executeCommand', { command: 'cairn.bogus', arguments: [{}] }), /unknown command/);
  const report = await conn.sendRequest('workspace/executeCommand', { command: 'cairn.contextReport', arguments: [{ runId }] });
  assert.match(report.markdown, /Context report/);

  // Nothing but protocol frames on stdout, and the key never reaches a log.
  assert.ok(!logged().includes('sk-test-not-a-real-key'));
  await conn.sendRequest('shutdown');
  await conn.sendNotification('exit');
  assert.equal(await exited, 0);
  conn.dispose();
  assert.ok(existsSync(join(home, 'cache', 'cairn')), 'state lives under XDG_CACHE_HOME/cairn');
});
