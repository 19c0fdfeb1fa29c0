// VS Code diagnostics (plain data) to LSP Diagnostic objects for cairn/didChangeDiagnostics.

export interface PlainPosition { line: number; character: number }
export interface PlainRange { start: PlainPosition; end: PlainPosition }
export interface PlainDiagnostic {
  range: PlainRange;
  message: string;
  /** vscode.DiagnosticSeverity: Error 0, Warning 1, Information 2, Hint 3. */
  severity: number;
  source?: string;
  code?: string | number | { value: string | number; target?: { toString(): string } };
}

export interface LspDiagnostic {
  range: PlainRange;
  message: string;
  severity: 1 | 2 | 3 | 4;
  source?: string;
  code?: string | number;
  codeDescription?: { href: string };
}

export function toLspDiagnostic(d: PlainDiagnostic): LspDiagnostic {
  const out: LspDiagnostic = {
    range: {
      start: { line: d.range.start.line, character: d.range.start.character },
      end: { line: d.range.end.line, character: d.range.end.character },
    },
    message: d.message,
    severity: (Math.min(3, Math.max(0, d.severity)) + 1) as 1 | 2 | 3 | 4,
  };
  if (d.source) out.source = d.source;
  if (d.code !== undefined && d.code !== null) {
    if (typeof d.code === 'object') {
      out.code = d.code.value;
      if (d.code.target) out.codeDescription = { href: d.code.target.toString() };
    } else {
      out.code = d.code;
    }
  }
  return out;
}

/** Diagnostics to forward: everything except Cairn's own (no echo). */
export function forwardable(ds: PlainDiagnostic[]): LspDiagnostic[] {
  return ds.filter((d) => (d.source ?? '').toLowerCase() !== 'cairn').map(toLspDiagnostic);
}

/** True when any diagnostic touches the (inclusive) line span. */
export function touchesLines(ds: { range: PlainRange }[], startLine: number, endLine: number): boolean {
  return ds.some((d) => d.range.start.line <= endLine && d.range.end.line >= startLine);
}
