import assert from 'node:assert/strict';
import { test } from 'node:test';
import { approvalAnswer, approvalPrompt, denyFirst, isApproval } from '../../src/logic/approval';

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
