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

/** Pending edits, by id, with the files from cairn.getEdit. */
export class EditStore {
  private edits = new Map<string, { result: GetEditResult; state: 'pending' | 'accepted' | 'rejected' }>();
  private order: string[] = [];

  put(result: GetEditResult): void {
    if (!this.edits.has(result.editId)) this.order.push(result.editId);
    this.edits.set(result.editId, { result, state: 'pending' });
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
