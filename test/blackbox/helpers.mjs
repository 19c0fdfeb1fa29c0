// Helpers shared by the black-box tests (test/blackbox for LSP, test/acp for
// ACP): build the real cairn binary, and a local HTTP server that speaks
// OpenAI's streaming Chat Completions wire format from a script of turns.
import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const made = [];
process.on('exit', () => {
  if (process.env.CAIRN_KEEP_TMP) return;
  for (const d of made) {
    try {
      rmSync(d, { recursive: true, force: true, maxRetries: 3 });
    } catch {
      // a child still writing into it: leave it, the next test run is unaffected
    }
  }
});

/**
 * A new directory under the OS temp dir, removed when this test file's
 * process exits (set CAIRN_KEEP_TMP=1 to keep them for a post-mortem).
 */
export function tempDir(prefix) {
  const d = mkdtempSync(join(tmpdir(), prefix));
  made.push(d);
  return d;
}

// cairnBinary returns $CAIRN_BIN, or builds cmd/cairn into a temp dir.
export function cairnBinary() {
  if (process.env.CAIRN_BIN) return process.env.CAIRN_BIN;
  const out = join(tempDir('cairn-bin-'), 'cairn');
  execFileSync('go', ['build', '-o', out, './cmd/cairn'], { cwd: repo, stdio: 'inherit' });
  return out;
}

// chunk splits a string into n nearly equal pieces.
export function chunk(s, n) {
  const size = Math.ceil(s.length / n);
  const out = [];
  for (let i = 0; i < s.length; i += size) out.push(s.slice(i, i + size));
  return out;
}

// toolTurn is a model turn calling one tool, its arguments split across
// deltas as OpenAI sends them (later deltas carry no id).
export function toolTurn(id, name, args) {
  const ev = [{ id: 'chatcmpl-1', choices: [{ index: 0, delta: { role: 'assistant', content: null,
    tool_calls: [{ index: 0, id, type: 'function', function: { name, arguments: '' } }] } }] }];
  for (const piece of chunk(args, 4)) {
    ev.push({ id: 'chatcmpl-1', choices: [{ index: 0, delta: { tool_calls: [{ index: 0, function: { arguments: piece } }] } }] });
  }
  ev.push({ id: 'chatcmpl-1', choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] });
  ev.push({ id: 'chatcmpl-1', choices: [], usage: { prompt_tokens: 120, completion_tokens: 30 } });
  return ev;
}

// textTurn is a final answer streamed in five pieces.
export function textTurn(text) {
  return [
    ...chunk(text, 5).map((c) => ({ id: 'chatcmpl-2', choices: [{ index: 0, delta: { content: c } }] })),
    { id: 'chatcmpl-2', choices: [{ index: 0, delta: {}, finish_reason: 'stop' }], usage: { prompt_tokens: 200, completion_tokens: 12 } },
  ];
}

// startModelServer serves the script's turns in order, one per request,
// each as an SSE stream whose frames are written in two TCP writes split
// mid-line (to exercise reassembly). A turn given as { events, hold: true }
// streams its events and then never ends: the stream stays open until the
// client goes away (a run to cancel). With opts.models, GET /v1/models
// lists those ids; otherwise it is a 404, as on servers without the route.
export function startModelServer(script, opts = {}) {
  const requests = [];
  const server = createServer((req, res) => {
    if (req.method === 'GET') {
      if (req.url === '/v1/models' && opts.models) {
        res.writeHead(200, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data: opts.models.map((id) => ({ id, object: 'model' })) }));
      } else {
        res.writeHead(404); res.end('not found');
      }
      return;
    }
    let body = '';
    req.on('data', (d) => { body += d; });
    req.on('end', () => {
      requests.push(JSON.parse(body));
      let turn = script[requests.length - 1];
      if (!turn || req.url !== '/v1/chat/completions') {
        res.writeHead(500); res.end('unexpected request'); return;
      }
      const hold = !Array.isArray(turn) && turn.hold;
      const events = Array.isArray(turn) ? turn : turn.events;
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      const frames = events.map((e) => `data: ${JSON.stringify(e)}\n\n`);
      if (!hold) frames.push('data: [DONE]\n\n');
      let i = 0;
      const tick = () => {
        if (i >= frames.length) { if (!hold) res.end(); return; }
        const f = frames[i++];
        const mid = Math.floor(f.length / 2);
        res.write(f.slice(0, mid));
        setTimeout(() => { res.write(f.slice(mid)); setTimeout(tick, 2); }, 2);
      };
      tick();
    });
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok({ server, requests, port: server.address().port })));
}

