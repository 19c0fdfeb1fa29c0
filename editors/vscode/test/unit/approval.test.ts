import assert from 'node:assert/strict';
import { test } from 'node:test';
import { approvalPrompt, isApproval } from '../../src/logic/approval';

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
