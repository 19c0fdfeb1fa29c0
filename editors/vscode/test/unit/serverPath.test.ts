import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resolveServerPath } from '../../src/logic/serverPath';

const env = (files: string[], pathEnv = '/usr/local/bin:/usr/bin', platform = 'linux') => ({
  pathEnv,
  platform,
  home: '/home/u',
  isExecutable: (f: string) => files.includes(f),
});

test('the setting wins when it points at an executable', () => {
  const r = resolveServerPath('/opt/cairn/bin/cairn', env(['/opt/cairn/bin/cairn', '/usr/bin/cairn']));
  assert.deepEqual(r, { ok: true, path: '/opt/cairn/bin/cairn', source: 'setting' });
});

test('a ~ in the setting is the home directory', () => {
  const r = resolveServerPath('~/go/bin/cairn', env(['/home/u/go/bin/cairn']));
  assert.equal(r.ok && r.path, '/home/u/go/bin/cairn');
});

test('empty setting: first match on PATH', () => {
  const r = resolveServerPath('  ', env(['/usr/bin/cairn']));
  assert.deepEqual(r, { ok: true, path: '/usr/bin/cairn', source: 'PATH' });
});

test('a bare name in the setting is looked up on PATH', () => {
  const r = resolveServerPath('cairn-dev', env(['/usr/local/bin/cairn-dev']));
  assert.equal(r.ok && r.path, '/usr/local/bin/cairn-dev');
});

test('a wrong setting says so and how to install', () => {
  const r = resolveServerPath('/nope/cairn', env(['/usr/bin/cairn']));
  assert.equal(r.ok, false);
  assert.match(!r.ok ? r.message : '', /cairn\.serverPath.*\/nope\/cairn.*go install/s);
});

test('nothing found: a clear install message', () => {
  const r = resolveServerPath(undefined, env([]));
  assert.equal(r.ok, false);
  assert.match(!r.ok ? r.message : '', /not found on PATH.*go install \.\/cmd\/cairn/);
});

test('windows: PATHEXT and ; separators', () => {
  const r = resolveServerPath('', { ...env(['C:\\tools\\cairn.EXE'], 'C:\\bin;C:\\tools', 'win32'), pathExt: '.COM;.EXE' });
  assert.equal(r.ok && r.path, 'C:\\tools\\cairn.EXE');
});
