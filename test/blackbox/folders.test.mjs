// Black-box test of a multi-root workspace: the real `cairn serve --stdio`
// driven by vscode-languageserver-protocol with two workspace folders. The
// second folder is indexed (its own $/progress task), searched by the model's
// search_code call, and edited through workspace/applyEdit with that folder's
// file URI; after workspace/didChangeWorkspaceFolders removes it, search no
// longer finds it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, readFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cairnBinary, startModelServer, toolTurn, textTurn, tempDir } from './helpers.mjs';
import { applyTextEdits, startServe } from './serve.mjs';

test('two workspace folders: the second is searched, edited, then removed', async (t) => {
  const bin = cairnBinary();
  const search = JSON.stringify({ query: 'late payment penalty' });
  const edit = JSON.stringify({ path: 'billing/inv/invoice.js', oldText: 'days * 3', newText: 'days * 4' });
  const { server, requests, port } = await startModelServer([
    toolTurn('call_search', 'search_code', search), toolTurn('call_edit', 'edit_file', edit), textTurn('It is in billing.'),
    toolTurn('call_search2', 'search_code', search), textTurn('Searched again.'),
  ]);
  t.after(() => server.close());

  const base = tempDir('cairn-folders-');
  const app = join(base, 'app');
  const billing = join(base, 'billing');
  mkdirSync(join(app, 'src'), { recursive: true });
  mkdirSync(join(billing, 'inv'), { recursive: true });
  writeFileSync(join(app, 'src', 'main.js'), 'export function main() {\n  return 1;\n}\n');
  const invoice = '// Surcharge is the late payment penalty.\nexport function surcharge(days) {\n  return days * 3;\n}\n';
  writeFileSync(join(billing, 'inv', 'invoice.js'), invoice);
  const { conn, exited, stderr: logged } = startServe(bin, port);
  const events = [];
  let wake = () => {};
  conn.onNotification('cairn/runEvent', (ev) => { events.push(ev); wake(); });
  const titles = new Map();
  const ended = [];
  conn.onRequest('window/workDoneProgress/create', () => null);
  conn.onNotification('$/progress', ({ token, value }) => {
    if (value.kind === 'begin') titles.set(token, value.title);
    if (value.kind === 'end') { ended.push(titles.get(token) ?? ''); wake(); }
  });
  conn.onRequest('window/showMessageRequest', () => ({ title: 'Allow once' }));
  conn.onRequest('workspace/applyEdit', ({ edit }) => {
    for (const dc of edit.documentChanges ?? []) {
      if (!dc.textDocument) continue;
      const p = fileURLToPath(dc.textDocument.uri);
      writeFileSync(p, applyTextEdits(readFileSync(p, 'utf8'), dc.edits));
    }
    return { applied: true };
  });
  conn.listen();

  const until = (what, cond) => new Promise((ok, fail) => {
    // Generous: only a hang should fail this on a loaded machine.
    const timer = setTimeout(() => fail(new Error(`timed out waiting for ${what}: ${JSON.stringify(events)}\n${logged()}`)), 120000);
    wake = () => { if (cond()) { clearTimeout(timer); ok(); } };
    wake();
  });

  const appUri = pathToFileURL(app).href;
  const billingUri = pathToFileURL(billing).href;
  const init = await conn.sendRequest('initialize', {
    processId: process.pid, rootUri: appUri,
    workspaceFolders: [{ uri: appUri, name: 'app' }, { uri: billingUri, name: 'billing' }],
    capabilities: {
      workspace: { applyEdit: true, workspaceFolders: true, workspaceEdit: { documentChanges: true, resourceOperations: ['create', 'rename', 'delete'] } },
      window: { workDoneProgress: true },
    },
  });
  assert.equal(init.capabilities.workspace.workspaceFolders.supported, true);
  assert.equal(init.capabilities.workspace.workspaceFolders.changeNotifications, true);
  await conn.sendNotification('initialized', {});
  await until('the second folder indexed', () => ended.some((x) => x.includes('search index (billing)')));

  const ask = async (question) => {
    const uri = pathToFileURL(join(app, 'src', 'main.js')).href;
    const { runId } = await conn.sendRequest('workspace/executeCommand', {
      command: 'cairn.ask', arguments: [{ uri, range: { start: { line: 0, character: 0 }, end: { line: 2, character: 1 } }, question }],
    });
    await until(`run ${runId}`, () => events.some((e) => e.runId === runId && ['finished', 'failed', 'cancelled'].includes(e.kind)));
    return events.filter((e) => e.runId === runId);
  };

  const first = await ask('Where is the late payment penalty?');
  assert.equal(first.at(-1).kind, 'finished', JSON.stringify(first.at(-1)));
  const hits = requests[1].messages.find((m) => m.role === 'tool' && m.tool_call_id === 'call_search');
  assert.ok(hits && hits.content.includes('billing/inv/invoice.js:1:'), hits?.content);
  const proposed = first.find((e) => e.kind === 'editProposed');
  assert.ok(proposed, 'an edit was proposed');
  assert.equal(readFileSync(join(billing, 'inv', 'invoice.js'), 'utf8'), invoice, 'nothing written before accept');
  const acc = await conn.sendRequest('workspace/executeCommand', { command: 'cairn.acceptEdit', arguments: [{ editId: proposed.editId }] });
  assert.equal(acc.applied, true);
  assert.equal(readFileSync(join(billing, 'inv', 'invoice.js'), 'utf8'), invoice.replace('days * 3', 'days * 4'));

  await conn.sendNotification('workspace/didChangeWorkspaceFolders', { event: { added: [], removed: [{ uri: billingUri, name: 'billing' }] } });
  const second = await ask('Search again');
  assert.equal(second.at(-1).kind, 'finished');
  const again = requests[4].messages.filter((m) => m.role === 'tool').at(-1);
  assert.ok(again && again.tool_call_id === 'call_search2' && !again.content.includes('billing/'), again?.content);

  await conn.sendRequest('shutdown');
  await conn.sendNotification('exit');
  assert.equal(await exited, 0, logged());
});
