import assert from 'node:assert/strict';
import { test } from 'node:test';
import { diffTitle, EditStore, filesToSave, lineDelta, newConflicts, parseProposedQuery, proposedUriParts, shownAsText } from '../../src/logic/proposed';

test('proposed URIs round-trip the edit id, file index and side', () => {
  const p = proposedUriParts('edit/1&x', 2, 'pkg/a b.go');
  assert.equal(p.path, '/pkg/a b.go');
  assert.deepEqual(parseProposedQuery(p.query), { editId: 'edit/1&x', file: 2, side: 'proposed' });
  const c = proposedUriParts('e', 0, '\\win\\new.go', 'current');
  assert.equal(c.path, '/win/new.go');
  assert.deepEqual(parseProposedQuery(c.query), { editId: 'e', file: 0, side: 'current' });
  assert.equal(parseProposedQuery('file=1'), undefined);
  assert.equal(parseProposedQuery('editId=e&file=-1'), undefined);
});

test('diff titles', () => {
  assert.equal(diffTitle({ uri: 'file:///w/a/b.go', path: 'a/b.go', current: '', proposed: '' }), 'b.go ↔ Cairn proposed');
  assert.equal(diffTitle({ uri: 'file:///w/n.go', path: 'n.go', current: '', proposed: 'x', create: true }), 'n.go ↔ Cairn new file');
});

test('lineDelta counts the changed middle', () => {
  assert.deepEqual(lineDelta('a\nb\nc\n', 'a\nB\nB2\nc\n'), { added: 2, removed: 1 });
  assert.deepEqual(lineDelta('same', 'same'), { added: 0, removed: 0 });
  assert.deepEqual(lineDelta('', 'x\ny'), { added: 2, removed: 1 });
});

test('edit store: pending, settle, by file', () => {
  const s = new EditStore();
  const f = (uri: string) => ({ uri, path: uri.slice(8), current: 'a', proposed: 'b' });
  s.put({ editId: 'e1', files: [f('file:///a.go')] });
  s.put({ editId: 'e2', files: [f('file:///a.go'), f('file:///b.go')] });
  assert.deepEqual(s.pending().map((e) => e.editId), ['e1', 'e2']);
  assert.equal(s.pendingFor('file:///a.go')?.editId, 'e2');
  assert.equal(s.file({ editId: 'e2', file: 1 })?.uri, 'file:///b.go');
  s.settle('e2', 'accepted');
  assert.equal(s.state('e2'), 'accepted');
  assert.equal(s.pendingFor('file:///a.go')?.editId, 'e1');
  assert.equal(s.pendingFor('file:///b.go'), undefined);
});

test('a file gets its lenses only where it is shown in a plain text editor', () => {
  const file = 'file:///w/hello.go';
  const diff = { kind: 'diff' as const, uri: 'cairn-proposed:/hello.go?editId%3De%26file%3D0', original: file };
  // The proposed diff is on screen: its left side is the file, but not a text tab.
  assert.equal(shownAsText(file, [diff]), false);
  assert.equal(shownAsText(file, [{ kind: 'other' }, diff]), false);
  // The file's own tab is active (in this group or another one).
  assert.equal(shownAsText(file, [{ kind: 'text', uri: file }]), true);
  assert.equal(shownAsText(file, [diff, { kind: 'text', uri: file }]), true);
  // Another file's tab does not count.
  assert.equal(shownAsText(file, [{ kind: 'text', uri: 'file:///w/two.go' }]), false);
  assert.equal(shownAsText(file, []), false);
});

test('an accept saves only the files that had no unsaved changes before it', () => {
  const uris = ['file:///w/a.go', 'file:///w/b.go'];
  assert.deepEqual(filesToSave(uris, new Set()), uris);
  assert.deepEqual(filesToSave(uris, new Set(['file:///w/a.go'])), ['file:///w/b.go']);
});

test('newConflicts names the hunks that just became conflicting', () => {
  const before = [{ index: 0, state: 'pending' }, { index: 1, state: 'conflict' }];
  const after = [{ index: 0, state: 'conflict' }, { index: 1, state: 'conflict' }, { index: 2, state: 'pending' }];
  assert.deepEqual(newConflicts(before, after), [0]);
  assert.deepEqual(newConflicts(undefined, after), [0, 1]);
  assert.deepEqual(newConflicts(after, after), []);
});
