// The LSP side of the black-box tests: the real `cairn serve --stdio` with a
// vscode-languageserver-protocol connection on its stdio.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createProtocolConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-languageserver-protocol/node.js';

/**
 * Starts `cairn serve --stdio` against the OpenAI-compatible endpoint on
 * port, with a fresh HOME (state under its XDG_CACHE_HOME), and a protocol
 * connection on its stdio. stderr() is what the server logged so far;
 * exited resolves to its exit code.
 */
export function startServe(bin, port) {
  const home = mkdtempSync(join(tmpdir(), 'cairn-home-'));
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
