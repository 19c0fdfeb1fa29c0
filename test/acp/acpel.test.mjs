// Black-box test of `cairn acp` driven by acp.el (agent-shell's ACP layer)
// in Emacs batch mode: acp-el/cairn-acp-el-test.el is the client. acp.el is
// not on any package registry this project's machines reach (Debian ships
// no elpa package of it, MELPA is out of reach), so the test runs where
// ACP_EL_DIR names a folder holding acp.el 0.14.2 (with its acp-traffic.el) and skips, saying so,
// everywhere else.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cairnBinary, startModelServer, toolTurn, textTurn, tempDir } from '../blackbox/helpers.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const acpEl = process.env.ACP_EL_DIR;
let emacs = true;
try { execFileSync('emacs', ['--version'], { stdio: 'ignore' }); } catch { emacs = false; }
const skip = !acpEl || !existsSync(join(acpEl ?? '', 'acp.el')) ? 'ACP_EL_DIR does not name a folder with acp.el'
  : !emacs ? 'emacs is not installed' : false;

test('acp.el: initialize, session/set_model, plan updates, edit through fs, quiet stderr', { skip }, async (t) => {
  const bin = cairnBinary();
  const step = (a, b) => JSON.stringify({ entries: [{ content: 'Read notes.txt', status: a }, { content: 'Fix it', status: b }] });
  const s = await startModelServer([
    toolTurn('p1', 'update_plan', step('in_progress', 'pending')),
    toolTurn('e1', 'edit_file', JSON.stringify({ path: 'notes.txt', oldText: 'hello', newText: 'hello world' })),
    toolTurn('p2', 'update_plan', step('completed', 'completed')),
    textTurn('Done.'),
  ], { models: ['gpt-test', 'gpt-big'] });
  t.after(() => s.server.close());
  const ws = tempDir('cairn-acpel-ws-');
  writeFileSync(join(ws, 'notes.txt'), 'hello\n');
  const home = tempDir('cairn-acpel-home-');
  const env = {
    PATH: process.env.PATH, HOME: home, XDG_CACHE_HOME: join(home, 'cache'), TMPDIR: tmpdir(), WS: ws, CAIRN_BIN: bin,
    CAIRN_PROVIDER: 'openai', CAIRN_MODEL: 'gpt-test', OPENAI_BASE_URL: `http://127.0.0.1:${s.port}/v1`,
    OPENAI_API_KEY: 'sk-test-not-a-real-key',
  };
  const out = await new Promise((ok) => {
    execFile('emacs', ['-Q', '--batch', '-L', acpEl, '-l', join(here, 'acp-el', 'cairn-acp-el-test.el')],
      { env, timeout: 180000 }, (e, stdout, stderr) => ok({ code: e ? e.code : 0, text: stdout + stderr }));
  });
  assert.equal(out.code, 0, out.text);
  assert.match(out.text, /ACP-EL-OK/);
  assert.deepEqual(s.requests.map((r) => r.model), ['gpt-big', 'gpt-big', 'gpt-big', 'gpt-big'], 'session/set_model applies to the turn');
});
