import assert from 'node:assert/strict';
import { test } from 'node:test';
import { humanError } from '../../src/logic/errors';

test('a 401 is one sentence naming where the key comes from, with its setting, without the doubled prefix', () => {
  const e = humanError('auth', 'auth (HTTP 401): openai: authentication failed (Incorrect API key provided); check OPENAI_API_KEY and model.baseURL');
  assert.match(e.text, /^The model provider refused the API key \(HTTP 401\): set the key with "Cairn: Set API Key"/);
  assert.deepEqual(e.fix, { command: 'cairn.setApiKey', label: 'Set API Key' });
  assert.ok(!/auth \(HTTP/.test(e.text), e.text);
  assert.equal(e.setting, 'cairn.model');
  assert.match(e.detail, /Incorrect API key/);
});

test('network errors point at the endpoint setting; rate limits only retry', () => {
  assert.equal(humanError('network', 'network: dial tcp 127.0.0.1:1: connect: connection refused').setting, 'cairn.model.baseURL');
  const r = humanError('rate_limit', 'rate_limit (HTTP 429): openai: slow down');
  assert.equal(r.setting, undefined);
  assert.equal(r.fix, undefined);
  assert.match(r.text, /HTTP 429/);
});

test('an unclassified error keeps only its innermost message, as a sentence', () => {
  assert.equal(humanError('other', 'other: tool loop: something broke.').text, 'The run failed: Something broke.');
  assert.equal(humanError(undefined, '').text, 'The run failed: No reason was given.');
});
