import assert from 'node:assert/strict';
import { test } from 'node:test';
import { forwardable, toLspDiagnostic, touchesLines } from '../../src/logic/diagnostics';

const r = (a: number, b: number) => ({ start: { line: a, character: 1 }, end: { line: b, character: 4 } });

test('severity maps from VS Code (0-based) to LSP (1-based)', () => {
  for (const [vs, lsp] of [[0, 1], [1, 2], [2, 3], [3, 4]]) {
    assert.equal(toLspDiagnostic({ range: r(0, 0), message: 'm', severity: vs }).severity, lsp);
  }
});

test('code objects become code + codeDescription', () => {
  const d = toLspDiagnostic({ range: r(2, 3), message: 'unused', severity: 1, source: 'go', code: { value: 'U1000', target: { toString: () => 'https://x/U1000' } } });
  assert.deepEqual(d, { range: r(2, 3), message: 'unused', severity: 2, source: 'go', code: 'U1000', codeDescription: { href: 'https://x/U1000' } });
});

test("Cairn's own diagnostics are not echoed back", () => {
  const out = forwardable([
    { range: r(0, 0), message: 'a', severity: 0, source: 'gopls' },
    { range: r(0, 0), message: 'b', severity: 0, source: 'Cairn' },
    { range: r(0, 0), message: 'c', severity: 0 },
  ]);
  assert.deepEqual(out.map((d) => d.message), ['a', 'c']);
});

test('touchesLines', () => {
  assert.equal(touchesLines([{ range: r(5, 6) }], 6, 9), true);
  assert.equal(touchesLines([{ range: r(5, 6) }], 7, 9), false);
});
