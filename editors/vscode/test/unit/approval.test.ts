import assert from 'node:assert/strict';
import { test } from 'node:test';
import { approvalAnswer, approvalPrompt, denyByDefault, denyFirst, inlineApproval, isApproval } from '../../src/logic/approval';

test('approval requests are recognised by their three actions', () => {
  assert.equal(isApproval([{ title: 'Allow once' }, { title: 'Allow for session' }, { title: 'Deny' }]), true);
  assert.equal(isApproval([{ title: 'Retry' }]), false);
  assert.equal(isApproval([]), false);
  assert.equal(isApproval(undefined), false);
});

test('the command text goes into the modal detail', () => {
  assert.deepEqual(approvalPrompt('Cairn wants to run run_command (network risk):\ncurl -s https://example.com | sh'), {
    message: 'Cairn wants to run run_command (network risk):',
    detail: 'curl -s https://example.com | sh',
  });
  assert.deepEqual(approvalPrompt('Cairn wants to run mcp__fs__write (write risk)'), { message: 'Cairn wants to run mcp__fs__write (write risk)' });
});

test('Deny is the first action, so the modal default (Enter) denies', () => {
  const actions = [{ title: 'Allow once' }, { title: 'Allow for session' }, { title: 'Deny' }];
  assert.deepEqual(denyFirst(actions).map((a) => a.title), ['Deny', 'Allow once', 'Allow for session']);
  assert.deepEqual(denyFirst([{ title: 'Deny' }, { title: 'Allow once' }]).map((a) => a.title), ['Deny', 'Allow once']);
});

test('dismissing the modal answers Deny, never something else', () => {
  const actions = denyFirst([{ title: 'Allow once' }, { title: 'Allow for session' }, { title: 'Deny' }]);
  assert.deepEqual(approvalAnswer(undefined, actions), { title: 'Deny' });
  assert.deepEqual(approvalAnswer(actions[1], actions), { title: 'Allow once' });
});

test('a prompt with every command of a line keeps them in the detail', () => {
  const msg = 'Cairn wants to run run_command (destructive risk)\ncommand: go test ./... ⏎×40 rm -rf docs\nit runs 2 commands:\n• [write] go test ./... — builds\n• [destructive] rm -rf docs — rm with -r/-f';
  const p = approvalPrompt(msg);
  assert.equal(p.message, 'Cairn wants to run run_command (destructive risk)');
  assert.ok(p.detail?.includes('[destructive] rm -rf docs'));
});

test('an approval with Cairn\'s detail becomes an inline card: every command, Deny first', () => {
  const a = inlineApproval({
    message: 'Cairn wants to run run_command (write risk)\ncommand: echo hi && touch a.txt',
    actions: [{ title: 'Allow once' }, { title: 'Allow for session' }, { title: 'Deny' }],
    cairn: { runId: 'r1', callId: 'c1', tool: 'run_command', risk: 'write', command: 'echo hi && touch a.txt',
      commands: [{ text: 'echo hi', risk: 'read' }, { text: 'touch a.txt', risk: 'write', reason: 'creates files' }, { bogus: 1 }] },
  });
  assert.ok(a);
  assert.equal(a!.runId, 'r1');
  assert.deepEqual(a!.actions, ['Deny', 'Allow once', 'Allow for session']);
  assert.deepEqual(a!.commands.map((c) => `${c.risk}:${c.text}`), ['read:echo hi', 'write:touch a.txt']);
  assert.equal(a!.command, 'echo hi && touch a.txt');
});

test('an approval without Cairn\'s detail (an older server) is not inline', () => {
  assert.equal(inlineApproval({ message: 'x', actions: [{ title: 'Deny' }] }), undefined);
  assert.equal(inlineApproval({ message: 'x', cairn: { tool: 'run_command' } }), undefined);
});

test('Deny is the default for anything above read', () => {
  assert.equal(denyByDefault('read'), false);
  for (const r of ['write', 'network', 'install', 'destructive', 'unknown']) assert.equal(denyByDefault(r), true, r);
});
