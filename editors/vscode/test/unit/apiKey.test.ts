import assert from 'node:assert/strict';
import { test } from 'node:test';
import { keyEnv, secretKey } from '../../src/logic/apiKey';

test('stored keys become the variables each provider reads, and only those', async () => {
  const store = new Map([[secretKey('openai'), 'sk-1'], [secretKey('other'), 'x']]);
  assert.deepEqual(await keyEnv(async (k) => store.get(k)), { OPENAI_API_KEY: 'sk-1' });
  store.set(secretKey('anthropic'), 'sk-ant');
  assert.deepEqual(await keyEnv(async (k) => store.get(k)), { OPENAI_API_KEY: 'sk-1', ANTHROPIC_API_KEY: 'sk-ant' });
  assert.deepEqual(await keyEnv(async () => undefined), {});
});
