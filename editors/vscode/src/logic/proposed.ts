// Virtual documents for proposed content: cairn-proposed:/<path>?editId=<id>&file=<n>

export const PROPOSED_SCHEME = 'cairn-proposed';

export interface EditFile {
  uri: string;
  path: string;
  current: string;
  proposed: string;
  create?: boolean;
  delete?: boolean;
}

export interface GetEditResult {
  editId: string;
  runId?: string;
  files: EditFile[];
  diff?: string;
  hunks?: Hunk[];
  /** Grows with every cairn.getEdit answer: the larger is the newer state. */
  seq?: number;
}

/** side "current" is the file's text before the edit (used for new files). */
export interface ProposedRef { editId: string; file: number; side: 'proposed' | 'current' }

/** The path and query parts of a proposed document's URI. */
export function proposedUriParts(editId: string, file: number, relPath: string, side: 'proposed' | 'current' = 'proposed'): { path: string; query: string } {
  const clean = relPath.replace(/\\/g, '/').replace(/^\/+/, '') || 'untitled';
  const q = `editId=${encodeURIComponent(editId)}&file=${file}` + (side === 'current' ? '&side=current' : '');
  return { path: '/' + clean, query: q };
}

export function parseProposedQuery(query: string): ProposedRef | undefined {
  const params = new Map<string, string>();
  for (const kv of query.split('&')) {
    const i = kv.indexOf('=');
    if (i > 0) params.set(kv.slice(0, i), decodeURIComponent(kv.slice(i + 1)));
  }
  const editId = params.get('editId');
  const file = Number(params.get('file') ?? '0');
  if (!editId || !Number.isInteger(file) || file < 0) return undefined;
  return { editId, file, side: params.get('side') === 'current' ? 'current' : 'proposed' };
}

/** Title of a diff editor tab. */
export function diffTitle(f: EditFile): string {
  const name = f.path.split('/').pop() || f.path;
  const what = f.create ? 'new file' : f.delete ? 'deleted' : 'proposed';
  return `${name} ↔ Cairn ${what}`;
}

/** Number of changed lines (+added / -removed) between two texts, for labels. */
export function lineDelta(a: string, b: string): { added: number; removed: number } {
  const al = a.split('\n');
  const bl = b.split('\n');
  let s = 0;
  while (s < al.length && s < bl.length && al[s] === bl[s]) s++;
  let ea = al.length - 1;
  let eb = bl.length - 1;
  while (ea >= s && eb >= s && al[ea] === bl[eb]) { ea--; eb--; }
  return { added: Math.max(0, eb - s + 1), removed: Math.max(0, ea - s + 1) };
}

/** The active tab of an editor group, as far as lenses care. */
export type ShownTab =
  | { kind: 'text'; uri: string }
  | { kind: 'diff'; uri: string; original: string }
  | { kind: 'other' };

/**
 * Whether the file uri is on screen in a plain text editor (the active tab
 * of some group), as opposed to only as a side of a diff editor.
 */
export function shownAsText(uri: string, tabs: ShownTab[]): boolean {
  return tabs.some((t) => t.kind === 'text' && t.uri === uri);
}

/** Pending edits, by id, with the files from cairn.getEdit. */
export class EditStore {
  private edits = new Map<string, { result: GetEditResult; state: 'pending' | 'accepted' | 'rejected' }>();
  private order: string[] = [];

  /**
   * Stores an answer of cairn.getEdit unless the store holds a newer one
   * (a larger seq: answers to concurrent fetches can arrive out of order);
   * returns what the store holds after it.
   */
  put(result: GetEditResult): GetEditResult {
    const had = this.edits.get(result.editId);
    if (had && (had.result.seq ?? 0) > (result.seq ?? 0)) return had.result;
    if (!had) this.order.push(result.editId);
    this.edits.set(result.editId, { result, state: had?.state ?? 'pending' });
    return result;
  }
  get(editId: string): GetEditResult | undefined { return this.edits.get(editId)?.result; }
  file(ref: { editId: string; file: number }): EditFile | undefined { return this.edits.get(ref.editId)?.result.files[ref.file]; }
  state(editId: string): string | undefined { return this.edits.get(editId)?.state; }
  settle(editId: string, state: 'accepted' | 'rejected'): void {
    const e = this.edits.get(editId);
    if (e) e.state = state;
  }
  pending(): GetEditResult[] {
    return this.order.filter((id) => this.edits.get(id)?.state === 'pending').map((id) => this.edits.get(id)!.result);
  }
  /** The newest pending edit touching the file uri, if any. */
  pendingFor(uri: string): GetEditResult | undefined {
    const list = this.pending().filter((e) => e.files.some((f) => f.uri === uri));
    return list[list.length - 1];
  }
}

/**
 * The files an accept or undo should save: those it changed that had no
 * unsaved changes before it. A file the user was editing stays unsaved, so
 * Cairn never writes text the user did not mean to save.
 */
export function filesToSave(uris: string[], dirtyBefore: ReadonlySet<string>): string[] {
  return uris.filter((u) => !dirtyBefore.has(u));
}

/** Hunks that became conflicting between two views of an edit. */
export function newConflicts(before: { index: number; state: string }[] | undefined, after: { index: number; state: string }[]): number[] {
  const was = new Map((before ?? []).map((h) => [h.index, h.state]));
  return after.filter((h) => h.state === 'conflict' && was.get(h.index) !== 'conflict').map((h) => h.index);
}

/** One hunk of a proposed edit, as cairn.getEdit lists it. */
export interface Hunk {
  index: number;
  path: string;
  /** 0-based, half-open, in the file's text before the edit (the diff's left side). */
  startLine: number;
  endLine: number;
  /** The same in the proposed text (the right side). */
  proposedStartLine?: number;
  proposedEndLine?: number;
  diff: string;
  /** conflict: the user's own edit overlaps it; redo (cairn.redoHunks) or reject it. */
  state: 'pending' | 'accepted' | 'rejected' | 'conflict' | string;
  /** The checkpoint its accept made, and whether that was undone since. */
  checkpointId?: string;
  undone?: boolean;
}

/** 0-based, inclusive line spans of a hunk's changed lines on both sides. */
export interface HunkSpan { oldStart: number; oldEnd: number; newStart: number; newEnd: number }

/**
 * Where a hunk's changed lines are on the old (current) and new (proposed)
 * side: from the server's line fields (0-based, half-open), else from its
 * unified-diff text, context lines left out.
 */
export function hunkSpan(h: Pick<Hunk, 'diff' | 'startLine' | 'endLine' | 'proposedStartLine' | 'proposedEndLine'>): HunkSpan {
  if (typeof h.proposedStartLine === 'number' && typeof h.proposedEndLine === 'number') {
    return {
      oldStart: h.startLine, oldEnd: Math.max(h.startLine, h.endLine - 1),
      newStart: h.proposedStartLine, newEnd: Math.max(h.proposedStartLine, h.proposedEndLine - 1),
    };
  }
  const lines = (h.diff ?? '').split('\n');
  const hdr = lines.findIndex((l) => /^@@ -\d+(,\d+)? \+\d+(,\d+)? @@/.test(l));
  if (hdr < 0) {
    const s = Math.max(0, h.startLine ?? 0);
    const e = Math.max(s, (h.endLine ?? s + 1) - 1);
    return { oldStart: s, oldEnd: e, newStart: s, newEnd: e };
  }
  const m = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(lines[hdr])!;
  let o = Number(m[1]) - 1;
  let n = Number(m[2]) - 1;
  // A zero-length side's start is the line before the change (unified diff).
  if (/^@@ -\d+,0 /.test(lines[hdr])) o++;
  if (/ \+\d+,0 @@/.test(lines[hdr])) n++;
  let oS = -1, oE = -1, nS = -1, nE = -1;
  for (const l of lines.slice(hdr + 1)) {
    if (l.startsWith('@@')) break;
    if (l.startsWith('\\')) continue;
    if (l.startsWith('-')) {
      if (oS < 0) oS = o;
      oE = o;
      if (nS < 0) nS = nE = n; // a pure deletion sits at this line of the new side
      o++;
    } else if (l.startsWith('+')) {
      if (nS < 0) nS = n;
      nE = n;
      if (oS < 0) oS = oE = o; // a pure insertion sits at this line of the old side
      n++;
    } else if (l.startsWith(' ') || l === '') {
      o++;
      n++;
    }
  }
  if (oS < 0) oS = oE = o;
  if (nS < 0) nS = nE = n;
  return { oldStart: oS, oldEnd: oE, newStart: nS, newEnd: nE };
}

/** The pending hunk of a file at a 0-based line of one side, if the line is in or next to it. */
export function hunkAt<T extends Hunk>(hunks: T[], path: string, line: number, side: 'old' | 'new'): T | undefined {
  let best: T | undefined;
  let bestDist = Infinity;
  for (const h of hunks) {
    if (h.path !== path || h.state !== 'pending') continue;
    const s = hunkSpan(h);
    const [a, b] = side === 'old' ? [s.oldStart, s.oldEnd] : [s.newStart, s.newEnd];
    const d = line < a ? a - line : line > b ? line - b : 0;
    if (d < bestDist) { best = h; bestDist = d; }
  }
  return bestDist <= 3 ? best : undefined;
}

/** The lines a hunk replaces (its old side), read from its unified diff; undefined when the diff does not cover them. */
export function oldLinesOf(h: Pick<Hunk, 'diff' | 'startLine' | 'endLine'>): string[] | undefined {
  const lines = (h.diff ?? '').split('\n');
  const hdr = lines.findIndex((l) => /^@@ -\d+(,\d+)? \+\d+(,\d+)? @@/.test(l));
  if (hdr < 0) return undefined;
  const m = /^@@ -(\d+)(?:,(\d+))? /.exec(lines[hdr])!;
  const a = Number(m[1]);
  const first = m[2] === '0' ? a : a - 1; // 0-based line of the old side's first line
  const old: string[] = [];
  for (let i = hdr + 1; i < lines.length && !lines[i].startsWith('@@'); i++) {
    const l = lines[i];
    if (l.startsWith(' ') || l.startsWith('-')) old.push(l.slice(1));
  }
  const from = h.startLine - first;
  const to = h.endLine - first;
  if (from < 0 || to > old.length || to < from) return undefined;
  return old.slice(from, to);
}

/**
 * What the proposed side of a file's diff shows: the proposed text with each
 * rejected hunk put back to the lines it would have replaced, so a rejected
 * change leaves the diff; and the edit's hunks with this file's proposed
 * lines moved to where they are in that text. (A rejected hunk the server
 * already folded back, an empty new side whose old lines are there, is left.)
 */
export function shownProposed<T extends Hunk>(proposed: string, hunks: T[], path: string): { text: string; hunks: T[] } {
  const mine = hunks
    .filter((h) => h.path === path && typeof h.proposedStartLine === 'number' && typeof h.proposedEndLine === 'number')
    .sort((x, y) => x.proposedStartLine! - y.proposedStartLine!);
  if (!mine.some((h) => h.state === 'rejected')) return { text: proposed, hunks };
  const lines = proposed.split('\n');
  const out: string[] = [];
  const moved = new Map<number, T>();
  let pos = 0;
  let delta = 0;
  for (const h of mine) {
    const s = h.proposedStartLine!;
    const e = h.proposedEndLine!;
    if (s < pos || e > lines.length) return { text: proposed, hunks }; // not the text these hunks describe
    out.push(...lines.slice(pos, s));
    let old = h.state === 'rejected' ? oldLinesOf(h) : undefined;
    if (old && e === s && old.length > 0 && old.every((l, i) => lines[s + i] === l)) old = undefined;
    if (old) {
      out.push(...old);
      moved.set(h.index, { ...h, proposedStartLine: s + delta, proposedEndLine: s + delta + old.length });
      delta += old.length - (e - s);
    } else {
      out.push(...lines.slice(s, e));
      moved.set(h.index, { ...h, proposedStartLine: s + delta, proposedEndLine: e + delta });
    }
    pos = e;
  }
  out.push(...lines.slice(pos));
  return { text: out.join('\n'), hunks: hunks.map((h) => (h.path === path ? moved.get(h.index) ?? h : h)) };
}

/** A Cairn diff tab's title: the file, its undecided changed lines, and how many hunks are left. */
export function diffLabel(f: EditFile, hunks: Hunk[], fallback: { added: number; removed: number }): string {
  const all = hunks.filter((h) => h.path === f.path);
  const open = all.filter((h) => h.state === 'pending' || h.state === 'conflict');
  const d = all.length && all.every((h) => typeof h.proposedEndLine === 'number')
    ? open.reduce((a, h) => ({ added: a.added + (h.proposedEndLine! - h.proposedStartLine!), removed: a.removed + (h.endLine - h.startLine) }), { added: 0, removed: 0 })
    : fallback;
  const count = all.length < 2 ? '' : open.length === all.length ? `, ${all.length} hunks` : `, ${open.length} of ${all.length} hunks left`;
  return `${diffTitle(f)} (+${d.added} −${d.removed}${count})`;
}

/**
 * The first line of the next (dir 1) or previous (dir -1) undecided hunk of
 * a file after or before `line`, wrapping around; side: which side of the
 * diff the line is on. undefined when the file has none.
 */
export function nextHunkLine(hunks: Hunk[], path: string, line: number, side: 'old' | 'new', dir: 1 | -1): number | undefined {
  const starts = hunks
    .filter((h) => h.path === path && (h.state === 'pending' || h.state === 'conflict'))
    .map((h) => (side === 'old' ? hunkSpan(h).oldStart : hunkSpan(h).newStart))
    .sort((a, b) => a - b);
  if (starts.length === 0) return undefined;
  if (dir === 1) return starts.find((s) => s > line) ?? starts[0];
  return [...starts].reverse().find((s) => s < line) ?? starts[starts.length - 1];
}
