import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ChatModel, editState, toolTitle } from '../../src/logic/chat';
import { hunkAt, hunkSpan } from '../../src/logic/proposed';

const ev = (runId: string, seq: number, kind: string, extra: Record<string, unknown> = {}) => ({ runId, seq, kind, ...extra });

test('a run streams into one text item; tools, approvals and edits attach in order', () => {
  const m = new ChatModel();
  m.begin('r1', { threadId: 't1', question: 'why?', where: 'a.go:1-2', uri: 'file:///a.go' });
  m.apply(ev('r1', 1, 'started'));
  m.apply(ev('r1', 2, 'text', { delta: 'Look' }));
  m.apply(ev('r1', 3, 'text', { delta: 'ing.' }));
  m.apply(ev('r1', 4, 'toolCall', { callId: 'c1', tool: 'run_command', input: { command: 'go test ./...' } }));
  m.apply(ev('r1', 5, 'approval', { callId: 'c1', decision: 'allow_once' }));
  m.apply(ev('r1', 6, 'toolResult', { callId: 'c1', ok: true, summary: 'PASS' }));
  assert.equal(m.apply(ev('r1', 6, 'toolResult', { callId: 'c1', ok: false })), false, 'duplicate seq');
  m.apply(ev('r1', 7, 'editProposed', { editId: 'e1' }));
  m.apply(ev('r1', 8, 'text', { delta: 'Done.' }));
  m.apply(ev('r1', 9, 'finished', { answer: 'Looking. Done.', usage: { inputTokens: 5, outputTokens: 2 } }));
  const v = m.view();
  assert.equal(v.current, 't1');
  assert.equal(v.runs.length, 1);
  const r = v.runs[0];
  assert.equal(r.status, 'finished');
  assert.deepEqual(r.items.map((i) => i.kind), ['text', 'tool', 'edit', 'text']);
  assert.equal((r.items[0] as { text: string }).text, 'Looking.');
  const tool = r.items[1] as { title: string; decision?: string; ok?: boolean; summary?: string };
  assert.equal(tool.title, 'run_command go test ./...');
  assert.equal(tool.decision, 'allow_once');
  assert.equal(tool.ok, true);
  assert.equal(tool.summary, 'PASS');
  assert.equal(v.edits.e1.state, 'pending');
});

test('follow-ups join the thread; a run seen only through started is shown', () => {
  const m = new ChatModel();
  m.begin('r1', { threadId: 't1', question: 'first', uri: 'file:///a.go' });
  m.begin('r2', { threadId: 't1', question: 'second' });
  // A code-action run: the started event comes first and says what it is.
  m.apply(ev('r3', 1, 'started', { threadId: 't2' }));
  m.begin('r3', { threadId: 't2', question: 'Explain', uri: 'file:///b.go' });
  let v = m.view();
  assert.equal(v.current, 't2');
  assert.deepEqual(v.runs.map((r) => r.question), ['Explain']);
  assert.deepEqual(v.threads.map((t) => [t.threadId, t.runs]), [['t2', 1], ['t1', 2]]);
  m.select('t1');
  v = m.view();
  assert.deepEqual(v.runs.map((r) => r.question), ['first', 'second']);
  assert.equal(m.anchor('t1')?.uri, 'file:///a.go', 'follow-ups ask about the thread\'s file');
  // The server's list adds runs this window never saw.
  m.mergeThreads([{ threadId: 't1', title: 'first', runs: ['r0', 'r1', 'r2'] }, { threadId: 't9', title: 'old', runs: ['x'] }]);
  v = m.view();
  assert.equal(v.unseen, 1);
  assert.ok(v.threads.some((t) => t.threadId === 't9'));
});

test('a run without streamed text shows its final answer', () => {
  const m = new ChatModel();
  m.begin('r1', { threadId: 't', question: 'q' });
  m.apply(ev('r1', 1, 'finished', { answer: 'All good.' }));
  assert.deepEqual(m.view().runs[0].items, [{ kind: 'text', text: 'All good.' }]);
});

test('a finished run keeps the index sources that were not ready', () => {
  const m = new ChatModel();
  m.begin('r1', { threadId: 't', question: 'q' });
  m.apply(ev('r1', 1, 'finished', { answer: 'ok', notReady: ['repo map', 'search'] }));
  assert.deepEqual(m.view().runs[0].notReady, ['repo map', 'search']);
});

test('editState from hunks', () => {
  assert.equal(editState([]), 'pending');
  assert.equal(editState([{ state: 'conflict' }, { state: 'accepted' }]), 'conflict');
  assert.equal(editState([{ state: 'conflict' }, { state: 'pending' }]), 'pending');
  assert.equal(editState([{ state: 'accepted' }, { state: 'pending' }]), 'pending');
  assert.equal(editState([{ state: 'accepted' }, { state: 'rejected' }]), 'partial');
  assert.equal(editState([{ state: 'rejected' }, { state: 'rejected' }]), 'rejected');
  assert.equal(editState([{ state: 'accepted' }]), 'accepted');
});

test('toolTitle picks the telling field', () => {
  assert.equal(toolTitle('read_file', { path: 'a.go', startLine: 1 }), 'read_file a.go');
  assert.equal(toolTitle('mcp__x__y', { a: 1 }), 'mcp__x__y {"a":1}');
});

test('hunkSpan from the server fields, else from the diff text', () => {
  assert.deepEqual(hunkSpan({ diff: '', startLine: 3, endLine: 4, proposedStartLine: 3, proposedEndLine: 5 }),
    { oldStart: 3, oldEnd: 3, newStart: 3, newEnd: 4 });
  const diff = '--- a/x\n+++ b/x\n@@ -2,5 +2,5 @@\n a\n b\n-c\n+C\n d\n e\n';
  assert.deepEqual(hunkSpan({ diff, startLine: 0, endLine: 0 }), { oldStart: 3, oldEnd: 3, newStart: 3, newEnd: 3 });
});

test('hunkAt finds the pending hunk at or next to a line, on either side', () => {
  const hunks = [
    { index: 0, path: 'two.go', startLine: 3, endLine: 4, proposedStartLine: 3, proposedEndLine: 4, diff: '', state: 'pending' },
    { index: 1, path: 'two.go', startLine: 7, endLine: 8, proposedStartLine: 7, proposedEndLine: 9, diff: '', state: 'pending' },
  ];
  assert.equal(hunkAt(hunks, 'two.go', 3, 'new')?.index, 0);
  assert.equal(hunkAt(hunks, 'two.go', 8, 'new')?.index, 1);
  assert.equal(hunkAt(hunks, 'two.go', 8, 'old')?.index, 1);
  assert.equal(hunkAt(hunks, 'other.go', 3, 'new'), undefined);
  assert.equal(hunkAt(hunks, 'two.go', 30, 'new'), undefined, 'far from every hunk');
  hunks[0].state = 'accepted';
  assert.equal(hunkAt(hunks, 'two.go', 3, 'new'), undefined, 'decided hunks are skipped');
  assert.equal(hunkAt(hunks, 'two.go', 5, 'new')?.index, 1, 'the nearest pending one within 3 lines');
});

test('an edit whose accepted hunks were all undone is undone; rejected ones do not count', () => {
  assert.equal(editState([{ state: 'accepted', undone: true }, { state: 'rejected' }]), 'undone');
  // One hunk is still applied: the edit still counts as accepted.
  assert.equal(editState([{ state: 'accepted', undone: true }, { state: 'accepted' }]), 'accepted');
  assert.equal(editState([{ state: 'accepted' }, { state: 'rejected' }]), 'partial');
  assert.equal(editState([{ state: 'rejected' }]), 'rejected');
});

test('an inline approval waits in its run until answered; a run that ends withdraws it', () => {
  const m = new ChatModel();
  m.begin('r1', { threadId: 't1', question: 'q' });
  m.apply(ev('r1', 1, 'toolCall', { callId: 'c1', tool: 'run_command', input: { command: 'touch a' } }));
  const a = m.addApproval('r1', { id: 'a1', callId: 'c1', tool: 'run_command', risk: 'write', message: 'm', commands: [{ text: 'touch a', risk: 'write' }], actions: ['Deny', 'Allow once'] });
  assert.equal(a.state, 'pending');
  assert.equal(m.view().runs[0].items[1].kind, 'approval');
  assert.equal(m.answerApproval('a1', 'Allow once'), true);
  assert.equal(m.answerApproval('a1', 'Deny'), false, 'answered once only');
  assert.equal(m.approval('a1')!.answer, 'Allow once');
  m.addApproval('r1', { id: 'a2', tool: 'run_command', risk: 'write', message: 'm', commands: [], actions: ['Deny'] });
  m.apply(ev('r1', 2, 'cancelled', { error: 'by user' }));
  assert.equal(m.approval('a2')!.state, 'cancelled');
  assert.deepEqual(m.cancelApprovals({ runId: 'r1' }), [], 'nothing left pending');
});

test('the context event lists the prompt\'s files under the answer; usage keeps cached tokens and cost', () => {
  const m = new ChatModel();
  m.begin('r1', { threadId: 't1', question: 'q' });
  m.apply(ev('r1', 1, 'context', { context: [{ path: 'a.go', startLine: 3, endLine: 9, tokens: 40, source: 'selection' }, { bad: true }] }));
  m.apply(ev('r1', 2, 'finished', { usage: { inputTokens: 100, outputTokens: 5, cachedInputTokens: 60, costUSD: 0.0012 } }));
  const r = m.view().runs[0];
  assert.deepEqual(r.context, [{ path: 'a.go', startLine: 3, endLine: 9, tokens: 40, source: 'selection' }]);
  assert.equal(r.usage!.cachedInputTokens, 60);
  assert.equal(r.usage!.costUSD, 0.0012);
});

test('a plan shows once per run, replaced by each plan event; the update_plan call is not a tool line', () => {
  const m = new ChatModel();
  m.begin('r1', { threadId: 't1', question: 'q' });
  m.apply(ev('r1', 1, 'toolCall', { callId: 'c1', tool: 'update_plan', input: { entries: [] } }));
  m.apply(ev('r1', 2, 'plan', { plan: [{ content: 'Read a.go', status: 'in_progress', priority: 'high' }, { content: 'Fix it', status: 'pending' }] }));
  m.apply(ev('r1', 3, 'text', { delta: 'Reading.' }));
  m.apply(ev('r1', 4, 'plan', { plan: [{ content: 'Read a.go', status: 'completed' }, { content: 'Fix it', status: 'in_progress' }, { bad: 1 }] }));
  const items = m.view().runs[0].items;
  assert.deepEqual(items.map((i) => i.kind), ['plan', 'text']);
  assert.deepEqual((items[0] as { entries: unknown }).entries, [{ content: 'Read a.go', status: 'completed' }, { content: 'Fix it', status: 'in_progress' }]);
});

test('a thread shows its total usage: the server\'s total plus runs finished here, each counted once', () => {
  const m = new ChatModel();
  m.mergeThreads([{ threadId: 't1', title: 'Why?', runs: ['r0'], usage: { inputTokens: 1000, outputTokens: 10, cachedInputTokens: 0, costUSD: 0.01 } }]);
  m.begin('r1', { threadId: 't1', question: 'and then?' });
  m.apply(ev('r1', 1, 'finished', { usage: { inputTokens: 2000, outputTokens: 20, cachedInputTokens: 1500, costUSD: 0.002 } }));
  m.apply(ev('r1', 2, 'finished', { usage: { inputTokens: 2000, outputTokens: 20, costUSD: 0.002 } })); // stale duplicate: dropped by seq
  let t = m.view().threads.find((x) => x.threadId === 't1')!;
  assert.equal(t.usage!.inputTokens, 3000);
  assert.equal(t.usage!.cachedInputTokens, 1500);
  assert.ok(Math.abs(t.usage!.costUSD! - 0.012) < 1e-9);
  // The server's next list counts r1 in its own total: not added again.
  m.mergeThreads([{ threadId: 't1', title: 'Why?', runs: ['r0', 'r1'], usage: { inputTokens: 3000, outputTokens: 30, cachedInputTokens: 1500, costUSD: 0.012 } }]);
  t = m.view().threads.find((x) => x.threadId === 't1')!;
  assert.equal(t.usage!.inputTokens, 3000);
});
