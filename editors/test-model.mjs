// A model endpoint for the editor suites: an HTTP server speaking OpenAI's
// Chat Completions wire format (Server-Sent Events, tool calls streamed in
// pieces, usage in the last chunk). It answers each request with the next
// turn of a script and records every request body, so a suite can check
// what the model was sent (e.g. that a follow-up carries the first exchange).
//
//   node editors/test-model.mjs TURNS.json REQUESTS.jsonl PORTFILE
//
// TURNS.json: [{ "text"?: string, "toolCalls"?: [{ "name", "arguments": {} }], "delayMs"?: n }]
// or an error turn: { "status": 401, "error"?: "message" } answers with that HTTP error.
// A turn with "wantKey": "K" is served only to a request carrying
// "Authorization: Bearer K"; any other request gets a 401 and the turn waits.
// env TEST_MODEL_LIST: comma-separated ids GET /models lists (default test-model).
// Each request appends one line (its JSON body) to REQUESTS.jsonl; the port
// is written to PORTFILE once the server listens. Runs until killed.
import fs from 'node:fs';
import { createServer } from 'node:http';

const [turnsPath, requestsPath, portFile] = process.argv.slice(2);
if (!turnsPath || !requestsPath || !portFile) {
  console.error('usage: node test-model.mjs TURNS.json REQUESTS.jsonl PORTFILE');
  process.exit(2);
}
const turns = JSON.parse(fs.readFileSync(turnsPath, 'utf8'));
fs.writeFileSync(requestsPath, '');
let served = 0;

/** The SSE chunks of one turn: text in word-sized pieces, then each tool call in pieces. */
function chunks(turn, n) {
  const id = `chatcmpl-${n}`;
  const out = [];
  const words = (turn.text ?? '').match(/\S+\s*|\s+/g) ?? [];
  for (const w of words) out.push({ id, choices: [{ index: 0, delta: { content: w } }] });
  (turn.toolCalls ?? []).forEach((tc, i) => {
    const args = JSON.stringify(tc.arguments ?? {});
    out.push({ id, choices: [{ index: 0, delta: { role: 'assistant', tool_calls: [{ index: i, id: `call_${n}_${i}`, type: 'function', function: { name: tc.name, arguments: '' } }] } }] });
    for (let k = 0; k < args.length; k += 16) {
      out.push({ id, choices: [{ index: 0, delta: { tool_calls: [{ index: i, function: { arguments: args.slice(k, k + 16) } }] } }] });
    }
  });
  out.push({ id, choices: [{ index: 0, delta: {}, finish_reason: (turn.toolCalls ?? []).length ? 'tool_calls' : 'stop' }] });
  out.push({ id, choices: [], usage: { prompt_tokens: 100 + n, completion_tokens: 10 } });
  return out;
}

const server = createServer((req, res) => {
  let body = '';
  req.on('data', (d) => { body += d; });
  req.on('end', () => {
    if (req.method === 'GET' && req.url.endsWith('/models')) {
      // What a health check probes; not a model request.
      res.writeHead(200, { 'Content-Type': 'application/json' });
      const ids = (process.env.TEST_MODEL_LIST || 'test-model').split(',').filter(Boolean);
      res.end(JSON.stringify({ object: 'list', data: ids.map((id) => ({ id, object: 'model' })) }));
      return;
    }
    fs.appendFileSync(requestsPath, body.replace(/\n/g, ' ') + '\n');
    if (req.method !== 'POST' || !req.url.endsWith('/chat/completions')) {
      res.writeHead(404, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `no route ${req.method} ${req.url}` } }));
      return;
    }
    if (turns[served]?.wantKey && req.headers.authorization !== `Bearer ${turns[served].wantKey}`) {
      // A provider that refuses the key (or its absence); the turn waits for the right one.
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } }));
      return;
    }
    const turn = turns[served++];
    if (!turn) {
      res.writeHead(500, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { message: `the script has ${turns.length} turns; this is request ${served}` } }));
      return;
    }
    if (turn.status) {
      // An error turn: the provider's HTTP error, as OpenAI sends it.
      res.writeHead(turn.status, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ error: { message: turn.error ?? `HTTP ${turn.status}`, type: 'test_error' } }));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    const frames = chunks(turn, served).map((c) => `data: ${JSON.stringify(c)}\n\n`).concat(['data: [DONE]\n\n']);
    let i = 0;
    let closed = false;
    res.on('close', () => { closed = true; });
    const next = () => {
      if (closed) return;
      if (i >= frames.length) { res.end(); return; }
      res.write(frames[i++]);
      setTimeout(next, turn.delayMs ?? 0);
    };
    next();
  });
});
server.listen(0, '127.0.0.1', () => {
  fs.writeFileSync(portFile, String(server.address().port));
});
for (const sig of ['SIGTERM', 'SIGINT']) process.on(sig, () => server.close(() => process.exit(0)));
