import assert from 'node:assert/strict';
import { test } from 'node:test';
import { buildSettings, modelLabel } from '../../src/logic/settings';

test('settings nest by their dotted keys and skip empty values', () => {
  const values: Record<string, unknown> = {
    'model.provider': 'scripted',
    'model.name': '  ',
    'model.baseURL': 'http://127.0.0.1:8080/v1 ',
    'model.contextWindow': 8192,
    'model.maxOutputTokens': null,
    'scripted.path': '/tmp/s.yaml',
    'approval.mode': 'ask',
    mcpServers: {},
    'trace.otlpEndpoint': '',
    serverPath: '/usr/bin/cairn',
  };
  assert.deepEqual(buildSettings((k) => values[k]), {
    model: { provider: 'scripted', baseURL: 'http://127.0.0.1:8080/v1', contextWindow: 8192 },
    scripted: { path: '/tmp/s.yaml' },
    approval: { mode: 'ask' },
  });
});

test('mcpServers pass through whole', () => {
  const mcp = { fs: { command: 'npx', args: ['-y', 'x'], trust: 'untrusted' } };
  assert.deepEqual(buildSettings((k) => (k === 'mcpServers' ? mcp : undefined)), { mcpServers: mcp });
});

test('nothing set gives an empty object (server env fallbacks apply)', () => {
  assert.deepEqual(buildSettings(() => undefined), {});
});

test('model label', () => {
  assert.equal(modelLabel({ model: { provider: 'openai', name: 'gpt-4o' } }), 'openai/gpt-4o');
  assert.equal(modelLabel({ model: { provider: 'scripted' } }), 'scripted');
  assert.equal(modelLabel({}), 'default model');
});
