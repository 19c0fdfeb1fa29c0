import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RunEvent, RunTracker, summarizeInput, Transcript } from '../../src/logic/runs';

const ev = (seq: number, kind: string, extra: Partial<RunEvent> = {}): RunEvent => ({ runId: 'r1', seq, kind, ...extra });

test('tracker follows a run to its end and skips duplicates', () => {
  const t = new RunTracker();
  assert.ok(t.apply(ev(1, 'started')));
  assert.ok(t.apply(ev(2, 'text', { delta: 'Hel' })));
  assert.ok(t.apply(ev(3, 'text', { delta: 'lo' })));
  assert.equal(t.apply(ev(3, 'text', { delta: 'lo' })), false, 'duplicate seq');
  assert.equal(t.apply(ev(2, 'text', { delta: 'x' })), false, 'stale seq');
  assert.deepEqual(t.running().map((r) => r.runId), ['r1']);
  t.apply(ev(4, 'editProposed', { editId: 'e1', edit: {} }));
  t.apply(ev(5, 'checkpoint', { checkpointId: 'c1', step: 1 }));
  t.apply(ev(6, 'finished', { answer: 'Hello', usage: { inputTokens: 10, outputTokens: 2 } }));
  const r = t.get('r1')!;
  assert.equal(r.text, 'Hello');
  assert.equal(r.status, 'finished');
  assert.deepEqual(r.edits, ['e1']);
  assert.deepEqual(r.checkpoints, ['c1']);
  assert.equal(t.running().length, 0);
});

test('events before begin() are kept; begin() adds the question', () => {
  const t = new RunTracker();
  t.apply(ev(1, 'started'));
  t.apply(ev(2, 'text', { delta: 'a' }));
  const r = t.begin('r1', { question: 'why?', file: 'x.go:1-2' });
  assert.equal(r.text, 'a');
  assert.equal(r.question, 'why?');
  assert.equal(t.latest()?.runId, 'r1');
});

test('interrupted and failed runs', () => {
  const t = new RunTracker();
  t.apply({ runId: 'a', seq: 1, kind: 'interrupted', error: 'server stopped' });
  t.apply({ runId: 'b', seq: 1, kind: 'failed', error: 'boom', class: 'provider' });
  assert.deepEqual(t.interrupted().map((r) => r.runId), ['a']);
  assert.equal(t.get('b')!.errorClass, 'provider');
});

test('transcript: deltas inline, everything else on its own line', () => {
  const t = new Transcript();
  const tools = new Map([['c1', 'read_file']]);
  let out = t.header('r1', 'Why?', 'a.go:1-3');
  out += t.render(ev(1, 'started'));
  out += t.render(ev(2, 'text', { delta: 'Reading ' }));
  out += t.render(ev(3, 'text', { delta: 'the file.' }));
  out += t.render(ev(4, 'toolCall', { callId: 'c1', tool: 'read_file', input: { path: 'a.go' } }), tools);
  out += t.render(ev(5, 'toolResult', { callId: 'c1', ok: true, summary: '12 lines' }), tools);
  out += t.render(ev(6, 'approval', { callId: 'c1', decision: 'allow_once' }), tools);
  out += t.render(ev(7, 'editProposed', { editId: 'e1' }));
  out += t.render(ev(8, 'text', { delta: 'Done.' }));
  out += t.render(ev(9, 'finished', { usage: { inputTokens: 5, outputTokens: 3 } }));
  assert.equal(out, [
    '━━ Why?  (a.go:1-3)  [r1]',
    'Reading the file.',
    '▸ read_file {"path":"a.go"}',
    '✓ read_file: 12 lines',
    '⚖ read_file allowed once',
    '✎ proposed edit e1: review it in the diff editor (Accept / Reject)',
    'Done.',
    '■ finished · 5 in / 3 out tokens',
    '',
    '',
  ].join('\n'));
});

test('transcript: failure shows class and error', () => {
  const t = new Transcript();
  assert.equal(t.render(ev(1, 'failed', { error: 'rate limited', class: 'provider' })), '■ failed (provider): rate limited\n\n');
});

test('summarizeInput shortens long inputs', () => {
  const s = summarizeInput({ command: 'x'.repeat(500) }, 40);
  assert.equal(s.length, 40);
  assert.ok(s.endsWith('…'));
  assert.equal(summarizeInput(undefined), '');
});
