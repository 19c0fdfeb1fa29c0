import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

// vscode-languageclient registers every command the server advertises as a VS
// Code command; an extension command with the same id makes the client's start
// fail ("command already exists"). The server's ids are in protocol/protocol.go.
test('no extension command id is also a server command id', () => {
  const root = path.resolve(__dirname, '..', '..', '..');
  const protocol = fs.readFileSync(path.resolve(root, '..', '..', 'protocol', 'protocol.go'), 'utf8');
  const server = new Set([...protocol.matchAll(/"(cairn\.[A-Za-z]+)"/g)].map((m) => m[1]));
  assert.ok(server.has('cairn.ask') && server.has('cairn.acceptEdit'), 'found the server commands');
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
  const src = fs.readFileSync(path.join(root, 'src', 'extension.ts'), 'utf8');
  const ours = new Set<string>([
    ...pkg.contributes.commands.map((c: { command: string }) => c.command),
    ...[...src.matchAll(/reg\('(cairn\.[A-Za-z]+)'/g)].map((m) => m[1]),
  ]);
  const clash = [...ours].filter((id) => server.has(id));
  assert.deepEqual(clash, []);
});
