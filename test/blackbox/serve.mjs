// The LSP side of the black-box tests: the real `cairn serve --stdio` with a
// vscode-languageserver-protocol connection on its stdio.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { tempDir } from './helpers.mjs';
import { createProtocolConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-languageserver-protocol/node.js';

/**
 * Starts `cairn serve --stdio` against the OpenAI-compatible endpoint on
 * port, with HOME home (default: a fresh one; state under its
 * XDG_CACHE_HOME, so a server started again on it resumes), and a protocol
 * connection on its stdio. stderr() is what the server logged so far;
 * exited resolves to its exit code.
 */
export function startServe(bin, port, home = tempDir('cairn-home-')) {
  const proc = spawn(bin, ['serve', '--stdio'], {
    env: {
      PATH: process.env.PATH, HOME: home, XDG_CACHE_HOME: join(home, 'cache'),
      CAIRN_PROVIDER: 'openai', CAIRN_MODEL: 'gpt-test', OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
      OPENAI_API_KEY: 'sk-test-not-a-real-key',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let logged = '';
  proc.stderr.on('data', (d) => { logged += d; });
  const exited = new Promise((ok) => proc.on('exit', (code) => ok(code)));
  const conn = createProtocolConnection(new StreamMessageReader(proc.stdout), new StreamMessageWriter(proc.stdin));
  return { proc, home, conn, exited, stderr: () => logged };
}

/** Applies LSP text edits (positions in UTF-16 units, as JS strings count) to text. */
export function applyTextEdits(text, edits) {
  const lines = text.split('\n');
  const offset = (p) => {
    let o = 0;
    for (let l = 0; l < p.line; l++) o += lines[l].length + 1;
    return o + p.character;
  };
  const spans = edits.map((e) => ({ s: offset(e.range.start), e: offset(e.range.end), t: e.newText }))
    .sort((a, b) => b.s - a.s);
  for (const sp of spans) text = text.slice(0, sp.s) + sp.t + text.slice(sp.e);
  return text;
}
