import assert from 'node:assert/strict';
import { test } from 'node:test';
import { diffLabel, diffTitle, EditStore, filesToSave, Hunk, lineDelta, newConflicts, nextHunkLine, oldLinesOf, parseProposedQuery, proposedUriParts, shownAsText, shownProposed } from '../../src/logic/proposed';

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

test('edit store: an answer older than the one held (smaller seq) is not stored', () => {
  const s = new EditStore();
  const f = (proposed: string) => ({ uri: 'file:///a.go', path: 'a.go', current: 'a', proposed });
  s.put({ editId: 'e', files: [f('first')], seq: 1 });
  // The answer to a later fetch arrives before the answer to an earlier one.
  assert.equal(s.put({ editId: 'e', files: [f('mine\n')], seq: 5 }).files[0].proposed, 'mine\n');
  assert.equal(s.put({ editId: 'e', files: [f('m')], seq: 3 }).files[0].proposed, 'mine\n');
  assert.equal(s.get('e')?.files[0].proposed, 'mine\n');
  assert.equal(s.put({ editId: 'e', files: [f('mine\nx')], seq: 6 }).files[0].proposed, 'mine\nx');
  assert.deepEqual(s.pending().map((e) => e.editId), ['e']);
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

// two.go with "one"→"uno" (hunk 0) and "two"→"dos" (hunk 1), as the server sends them.
const TWO = 'package main\n\nfunc one() string {\n\treturn "one"\n}\n\nfunc two() string {\n\treturn "two"\n}\n';
const TWO_PROPOSED = TWO.replace('"one"', '"uno"').replace('"two"', '"dos"');
const twoHunks = (s0: string, s1: string): Hunk[] => [
  { index: 0, path: 'two.go', startLine: 3, endLine: 4, proposedStartLine: 3, proposedEndLine: 4, state: s0,
    diff: '--- a/two.go\n+++ b/two.go\n@@ -1,7 +1,7 @@\n package main\n \n func one() string {\n-\treturn "one"\n+\treturn "uno"\n }\n \n func two() string {\n' },
  { index: 1, path: 'two.go', startLine: 7, endLine: 8, proposedStartLine: 7, proposedEndLine: 8, state: s1,
    diff: '--- a/two.go\n+++ b/two.go\n@@ -5,5 +5,5 @@\n }\n \n func two() string {\n-\treturn "two"\n+\treturn "dos"\n }\n' },
];

test('oldLinesOf reads the replaced lines from the hunk diff', () => {
  const [h0, h1] = twoHunks('pending', 'pending');
  assert.deepEqual(oldLinesOf(h0), ['\treturn "one"']);
  assert.deepEqual(oldLinesOf(h1), ['\treturn "two"']);
  assert.equal(oldLinesOf({ ...h1, startLine: 40, endLine: 41 }), undefined);
});

test('a rejected hunk leaves the proposed side; the others keep their place', () => {
  const none = shownProposed(TWO_PROPOSED, twoHunks('pending', 'pending'), 'two.go');
  assert.equal(none.text, TWO_PROPOSED);
  const r = shownProposed(TWO_PROPOSED, twoHunks('pending', 'rejected'), 'two.go');
  assert.equal(r.text, TWO.replace('"one"', '"uno"'));
  assert.equal(r.hunks[0].proposedStartLine, 3);
  // A rejected deletion puts the lines back and moves the hunks below it.
  const del: Hunk[] = [
    { index: 0, path: 'f', startLine: 1, endLine: 3, proposedStartLine: 1, proposedEndLine: 1, state: 'rejected', diff: '@@ -1,4 +1,2 @@\n a\n-b\n-c\n d\n' },
    { index: 1, path: 'f', startLine: 5, endLine: 6, proposedStartLine: 3, proposedEndLine: 4, state: 'pending', diff: '@@ -5,2 +3,2 @@\n e\n-f\n+F\n' },
  ];
  const d = shownProposed('a\nd\ne\nF\n', del, 'f');
  assert.equal(d.text, 'a\nb\nc\nd\ne\nF\n');
  assert.equal(d.hunks[1].proposedStartLine, 5);
  assert.equal(d.hunks[1].proposedEndLine, 6);
});

test('the diff title counts the hunks left and their lines', () => {
  const f = { uri: 'file:///w/two.go', path: 'two.go', current: TWO, proposed: TWO_PROPOSED };
  assert.equal(diffLabel(f, twoHunks('pending', 'pending'), { added: 0, removed: 0 }), 'two.go ↔ Cairn proposed (+2 −2, 2 hunks)');
  assert.equal(diffLabel(f, twoHunks('pending', 'rejected'), { added: 0, removed: 0 }), 'two.go ↔ Cairn proposed (+1 −1, 1 of 2 hunks left)');
});

test('next and previous hunk wrap around the undecided hunks', () => {
  const hs = twoHunks('pending', 'pending');
  assert.equal(nextHunkLine(hs, 'two.go', 0, 'new', 1), 3);
  assert.equal(nextHunkLine(hs, 'two.go', 3, 'new', 1), 7);
  assert.equal(nextHunkLine(hs, 'two.go', 7, 'new', 1), 3);
  assert.equal(nextHunkLine(hs, 'two.go', 7, 'new', -1), 3);
  assert.equal(nextHunkLine(hs, 'two.go', 3, 'new', -1), 7);
  assert.equal(nextHunkLine(twoHunks('rejected', 'pending'), 'two.go', 8, 'new', 1), 7);
  assert.equal(nextHunkLine(twoHunks('rejected', 'accepted'), 'two.go', 0, 'new', 1), undefined);
});
