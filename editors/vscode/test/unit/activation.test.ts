import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

// Each VS Code window that activates the extension starts a server that
// indexes its workspace: the extension activates when it is used (its
// commands, its chat view) or in a workspace that has a .cairn folder, never
// in every window at startup.
const root = path.resolve(__dirname, '..', '..', '..');
const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));

test('no activation at startup in every window', () => {
  const events: string[] = pkg.activationEvents ?? [];
  assert.ok(!events.includes('*'), 'activates on *');
  assert.ok(!events.includes('onStartupFinished'), 'activates on onStartupFinished');
  assert.deepEqual(events.filter((e) => !e.startsWith('onCommand:') && !e.startsWith('onView:')), ['workspaceContains:.cairn']);
});

test('the engine infers onCommand and onView from contributes (VS Code 1.74+)', () => {
  const m = /^\^?(\d+)\.(\d+)/.exec(pkg.engines.vscode);
  assert.ok(m, pkg.engines.vscode);
  const [major, minor] = [Number(m![1]), Number(m![2])];
  assert.ok(major > 1 || minor >= 74, `engines.vscode ${pkg.engines.vscode} is older than 1.74`);
  assert.ok(pkg.contributes.views.cairn.some((v: { id: string }) => v.id === 'cairn.chat'), 'the chat view is contributed');
});

test('every contributed command is registered at activation', () => {
  const src = fs.readFileSync(path.join(root, 'src', 'extension.ts'), 'utf8');
  const registered = new Set([...src.matchAll(/reg\('(cairn\.[A-Za-z]+)'/g)].map((m) => m[1]));
  const missing = pkg.contributes.commands.map((c: { command: string }) => c.command).filter((id: string) => !registered.has(id));
  assert.deepEqual(missing, []);
});
