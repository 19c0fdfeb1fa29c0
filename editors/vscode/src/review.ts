// Proposed edits: fetched with cairn.getEdit, shown in the native diff editor
// (the proposed side is a virtual document), CodeLenses, accept/reject whole
// or hunk by hunk, redo, undo; accepted files are saved.
import * as vscode from 'vscode';
import { exec } from './client';
import { editState } from './logic/chat';
import {
  diffLabel,
  filesToSave,
  GetEditResult,
  Hunk,
  hunkAt,
  hunkSpan,
  lineDelta,
  newConflicts,
  nextHunkLine,
  parseProposedQuery,
  PROPOSED_SCHEME,
  proposedUriParts,
  ShownTab,
  shownAsText,
  shownProposed,
} from './logic/proposed';
import { app, errorText } from './state';
import { updateStatus } from './status';

/** The proposed documents, the CodeLenses, and their refresh when a tab comes back. */
export function registerReview(ctx: vscode.ExtensionContext): void {
  ctx.subscriptions.push(
    app.proposedChanged,
    app.lensesChanged,
    vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, {
      onDidChange: app.proposedChanged.event,
      provideTextDocumentContent(uri) {
        const ref = parseProposedQuery(uri.query);
        if (!ref) return '';
        const f = app.edits.file(ref);
        if (!f) return '';
        if (ref.side === 'current') return f.current;
        return shownProposed(f.proposed, app.edits.get(ref.editId)?.hunks ?? [], f.path).text;
      },
    }),
    vscode.languages.registerCodeLensProvider([{ scheme: PROPOSED_SCHEME }, { scheme: 'file' }], {
      onDidChangeCodeLenses: app.lensesChanged.event,
      provideCodeLenses: (doc) => codeLenses(doc),
    }),
    // A file's lenses depend on what is on screen (shownAsText): when its tab
    // becomes active, ask again, in case the request outran the tab news.
    vscode.window.tabGroups.onDidChangeTabs((e) => {
      const back = [...e.opened, ...e.changed].some((t) =>
        t.isActive && t.input instanceof vscode.TabInputText && app.edits.pendingFor(t.input.uri.toString()) !== undefined);
      if (back) app.lensesChanged.fire();
    }),
  );
}

function proposedUri(editId: string, i: number, relPath: string, side: 'proposed' | 'current' = 'proposed'): vscode.Uri {
  const p = proposedUriParts(editId, i, relPath, side);
  return vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: p.path, query: p.query });
}

/**
 * Fetches an edit's files and hunks (cairn.getEdit) into the store and the
 * chat view; beforeChat runs in between (the diff tabs settle before the
 * card says the decision is done).
 */
export async function fetchEdit(editId: string, beforeChat?: (res: GetEditResult) => Promise<void>): Promise<GetEditResult> {
  const got = await exec<GetEditResult>('cairn.getEdit', { editId });
  if (!got.editId) got.editId = editId;
  const res = app.edits.put(got);
  if (beforeChat) await beforeChat(res);
  const hunks = res.hunks ?? [];
  const state = editState(hunks);
  if (hunks.length && state !== 'pending' && state !== 'conflict') app.edits.settle(editId, state === 'rejected' ? 'rejected' : 'accepted');
  app.chat.setEdit({
    editId, state: hunks.length ? state : (app.edits.state(editId) as 'pending' | 'accepted' | 'rejected') ?? 'pending',
    files: res.files.map((f) => f.path),
    hunks: hunks.map((h) => ({ index: h.index, path: h.path, startLine: h.startLine, endLine: h.endLine, state: h.state, undone: !!h.undone })),
  });
  app.chatView.update();
  app.lensesChanged.fire();
  for (let i = 0; i < res.files.length; i++) app.proposedChanged.fire(proposedUri(editId, i, res.files[i].path));
  updateStatus();
  return res;
}

export async function openDiff(editId: string, focus = false): Promise<void> {
  const res = await fetchEdit(editId);
  for (let i = 0; i < res.files.length; i++) {
    const f = res.files[i];
    const right = proposedUri(editId, i, f.path);
    const left = f.create ? proposedUri(editId, i, f.path, 'current') : vscode.Uri.parse(f.uri);
    // Changed lines: from the hunks where the server lists them (exact), else a rough count.
    await vscode.commands.executeCommand('vscode.diff', left, right, diffLabel(f, res.hunks ?? [], lineDelta(f.current, f.proposed)), {
      preview: false,
      preserveFocus: !focus && i > 0,
    });
  }
}

function hunkLabel(h: Hunk): string {
  return `hunk ${h.index + 1}`;
}

function codeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
  const top = new vscode.Range(0, 0, 0, 0);
  if (doc.uri.scheme === PROPOSED_SCHEME) {
    const ref = parseProposedQuery(doc.uri.query);
    if (!ref || ref.side !== 'proposed' || app.edits.state(ref.editId) !== 'pending') return [];
    const res = app.edits.get(ref.editId);
    const file = res?.files[ref.file];
    const path = file?.path;
    // Where the hunks are in the text on screen (rejected ones taken out).
    const shown = file ? shownProposed(file.proposed, res?.hunks ?? [], file.path).hunks : [];
    const pending = shown.filter((h) => h.state === 'pending');
    const lenses = [
      new vscode.CodeLens(top, { title: '$(check-all) Accept all', command: 'cairn.acceptProposedEdit', arguments: [ref.editId] }),
      new vscode.CodeLens(top, { title: '$(close-all) Reject all', command: 'cairn.rejectProposedEdit', arguments: [ref.editId] }),
    ];
    // One pair per hunk of this file, on its first changed line.
    if (pending.length > 1 || (res?.hunks ?? []).length > 1) {
      for (const h of pending.filter((x) => x.path === path)) {
        const at = new vscode.Range(hunkSpan(h).newStart, 0, hunkSpan(h).newStart, 0);
        lenses.push(
          new vscode.CodeLens(at, { title: `$(check) Accept ${hunkLabel(h)}`, command: 'cairn.acceptHunk', arguments: [ref.editId, h.index] }),
          new vscode.CodeLens(at, { title: `$(close) Reject ${hunkLabel(h)}`, command: 'cairn.rejectHunk', arguments: [ref.editId, h.index] }),
        );
      }
    }
    return lenses;
  }
  // A file's lenses belong to its own editor, not to the left side of a
  // diff editor showing the same file (with "diffEditor.codeLens" on, the
  // proposed side has the lenses already). VS Code caches the lenses of a
  // URI, command-less, and paints that copy first when the file's tab comes
  // back: a copy made by the diff's left side turns into a dead title above
  // line 1, scrolled out of view, that the fresh lenses never replace.
  if (!shownAsText(doc.uri.toString(), activeTabs())) return [];
  const e = app.edits.pendingFor(doc.uri.toString());
  if (!e) return [];
  return [
    new vscode.CodeLens(top, { title: 'Cairn proposed an edit: review', command: 'cairn.showProposedEdit', arguments: [e.editId] }),
    new vscode.CodeLens(top, { title: 'Accept', command: 'cairn.acceptProposedEdit', arguments: [e.editId] }),
    new vscode.CodeLens(top, { title: 'Reject', command: 'cairn.rejectProposedEdit', arguments: [e.editId] }),
  ];
}

/** The active tab of each editor group: what is on screen. */
function activeTabs(): ShownTab[] {
  return vscode.window.tabGroups.all.map((g): ShownTab => {
    const input = g.activeTab?.input;
    if (input instanceof vscode.TabInputText) return { kind: 'text', uri: input.uri.toString() };
    if (input instanceof vscode.TabInputTextDiff) return { kind: 'diff', uri: input.modified.toString(), original: input.original.toString() };
    return { kind: 'other' };
  });
}

/** The pending hunk under the cursor of the active editor (either side of a diff). */
function hunkAtCursor(): { editId: string; hunk: Hunk } | undefined {
  const ed = vscode.window.activeTextEditor;
  if (!ed) return undefined;
  const line = ed.selection.active.line;
  if (ed.document.uri.scheme === PROPOSED_SCHEME) {
    const ref = parseProposedQuery(ed.document.uri.query);
    const res = ref && app.edits.get(ref.editId);
    const file = res?.files[ref!.file];
    const h = res && file ? hunkAt(shownProposed(file.proposed, res.hunks ?? [], file.path).hunks, file.path, line, 'new') : undefined;
    return h ? { editId: ref!.editId, hunk: h } : undefined;
  }
  const res = app.edits.pendingFor(ed.document.uri.toString());
  const f = res?.files.find((x) => vscode.Uri.parse(x.uri).toString() === ed.document.uri.toString());
  const h = res && f ? hunkAt(res.hunks ?? [], f.path, line, 'old') : undefined;
  return h ? { editId: res!.editId, hunk: h } : undefined;
}

/** Accepts or rejects one hunk: by arguments (CodeLens), else the hunk at the cursor. */
export async function settleHunk(how: 'accept' | 'reject', editId?: string, index?: number): Promise<void> {
  if (typeof editId !== 'string' || typeof index !== 'number') {
    const at = hunkAtCursor();
    if (!at) {
      vscode.window.showInformationMessage('Cairn: put the cursor on a change of a proposed edit (in its diff editor) to accept or reject that hunk.');
      return;
    }
    editId = at.editId;
    index = at.hunk.index;
  }
  if (how === 'accept') {
    const files = (app.edits.get(editId)?.files ?? []).map((f) => f.uri);
    const dirty = dirtyUris(files);
    const res = await exec<{ applied: boolean; checkpointId?: string; reason?: string }>('cairn.acceptEdit', { editId, hunks: [index] });
    if (!res || !res.applied) {
      vscode.window.showErrorMessage(`Cairn: hunk ${index + 1} was not applied${res?.reason ? `: ${res.reason}` : '.'}`);
      return;
    }
    await saveFiles(files, dirty);
    if (res.checkpointId) app.checkpoints.push({ checkpointId: res.checkpointId, editId, files });
    app.answers.appendLine(`✓ accepted hunk ${index + 1} of edit ${editId}${res.checkpointId ? ` (checkpoint ${res.checkpointId})` : ''}`);
  } else {
    await exec('cairn.rejectEdit', { editId, hunks: [index] });
    app.answers.appendLine(`✗ rejected hunk ${index + 1} of edit ${editId}`);
  }
  const after = await fetchEdit(editId, async (res) => {
    if ((res.hunks ?? []).some((h) => h.state === 'pending' || h.state === 'conflict')) await retitleDiffs(res);
  });
  if (!(after.hunks ?? []).some((h) => h.state === 'pending' || h.state === 'conflict')) {
    await closeDiffs(editId);
    const first = after.files[0]?.uri;
    if (first) await vscode.window.showTextDocument(vscode.Uri.parse(first), { preview: false });
  }
}

/**
 * Gives an edit's diff tabs on screen their current titles (hunks left). A
 * tab's title is fixed when it opens, and opening the same two sides again
 * only reveals it: a tab whose title is out of date is closed and opened
 * anew. Only the tab showing in its group: reopening a tab behind another
 * would bring it to the front, over what the user moved on to.
 */
async function retitleDiffs(res: GetEditResult): Promise<void> {
  for (const g of vscode.window.tabGroups.all) {
    for (const t of g.tabs) {
      const input = t.input;
      if (!(input instanceof vscode.TabInputTextDiff) || input.modified.scheme !== PROPOSED_SCHEME) continue;
      const ref = parseProposedQuery(input.modified.query);
      const f = ref && ref.editId === res.editId ? res.files[ref.file] : undefined;
      if (!f) continue;
      const title = diffLabel(f, res.hunks ?? [], lineDelta(f.current, f.proposed));
      if (t.label === title || !t.isActive) continue;
      await vscode.window.tabGroups.close(t, true);
      await vscode.commands.executeCommand('vscode.diff', input.original, input.modified, title, {
        preview: false, viewColumn: g.viewColumn, preserveFocus: !g.isActive,
      });
    }
  }
}

/** Moves the cursor to the next (1) or previous (-1) undecided hunk of the proposed edit in the active diff. */
export async function gotoHunk(dir: 1 | -1): Promise<void> {
  const ed = vscode.window.activeTextEditor;
  if (!ed) return;
  const line = ed.selection.active.line;
  let target: number | undefined;
  if (ed.document.uri.scheme === PROPOSED_SCHEME) {
    const ref = parseProposedQuery(ed.document.uri.query);
    const res = ref && app.edits.get(ref.editId);
    const file = res?.files[ref!.file];
    if (res && file) target = nextHunkLine(shownProposed(file.proposed, res.hunks ?? [], file.path).hunks, file.path, line, 'new', dir);
  } else {
    const res = app.edits.pendingFor(ed.document.uri.toString());
    const f = res?.files.find((x) => vscode.Uri.parse(x.uri).toString() === ed.document.uri.toString());
    if (res && f) target = nextHunkLine(res.hunks ?? [], f.path, line, 'old', dir);
  }
  if (target === undefined) {
    vscode.window.setStatusBarMessage('Cairn: no undecided hunk in this file', 3000);
    return;
  }
  const pos = new vscode.Position(target, 0);
  ed.selection = new vscode.Selection(pos, pos);
  ed.revealRange(new vscode.Range(pos, pos), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/**
 * Re-fetches an edit the server changed without a decision (editUpdated: the
 * user typed into its file): the diff's proposed side re-renders from the
 * current buffer plus the hunks carried onto it. Hunks that now overlap the
 * user's edits are named, with Redo and Reject.
 */
export async function refreshEdit(editId: string): Promise<void> {
  const before = app.edits.get(editId)?.hunks;
  const res = await fetchEdit(editId);
  const fresh = newConflicts(before, res.hunks ?? []);
  if (fresh.length === 0) return;
  const where = (res.hunks ?? []).filter((h) => fresh.includes(h.index))
    .map((h) => `${h.path}:${h.startLine + 1}${h.endLine > h.startLine + 1 ? `-${h.endLine}` : ''}`).join(', ');
  const choice = await vscode.window.showWarningMessage(
    `Cairn: your edit overlaps the proposed change to ${where}. Redo it against your text, or reject it.`, 'Redo', 'Reject');
  if (choice === 'Redo') await redoEdit(editId);
  else if (choice === 'Reject') {
    await exec('cairn.rejectEdit', { editId, hunks: fresh });
    await fetchEdit(editId);
  }
}

/** Redoes an edit's conflicting hunks against the current text (cairn.redoHunks). */
export async function redoEdit(editId: string): Promise<void> {
  const res = await exec<{ recomputed: number[]; conflicting: number[]; runId?: string; reason?: string }>('cairn.redoHunks', { editId });
  await fetchEdit(editId);
  if (res?.reason) vscode.window.showWarningMessage(`Cairn: ${res.reason}`);
  else if (res?.runId) vscode.window.setStatusBarMessage('Cairn: asking again for the changes your edits overlap…', 5000);
}

/** The files among uris open with unsaved changes. */
function dirtyUris(uris: string[]): Set<string> {
  const out = new Set<string>();
  for (const d of vscode.workspace.textDocuments) {
    const u = d.uri.toString();
    if (d.isDirty && uris.includes(u)) out.add(u);
  }
  return out;
}

/**
 * Saves the files an accepted edit or an undo changed, so the disk matches
 * the checkpoint; a file that had unsaved changes before (dirtyBefore) stays
 * unsaved: the user's own text is never saved behind their back.
 */
async function saveFiles(uris: string[], dirtyBefore: ReadonlySet<string> = new Set()): Promise<void> {
  for (const u of filesToSave(uris, dirtyBefore)) {
    try {
      const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(u));
      if (doc.isDirty) await doc.save();
    } catch (err) {
      vscode.window.showWarningMessage(`Cairn: could not save ${u}: ${errorText(err)}`);
    }
  }
}

/** Which edit a command means: an id, a proposed document's URI, the active diff, or a pick. */
async function pickEdit(arg: unknown): Promise<string | undefined> {
  if (typeof arg === 'string' && arg) return arg;
  const fromUri = (u: vscode.Uri | undefined) =>
    u && u.scheme === PROPOSED_SCHEME ? parseProposedQuery(u.query)?.editId : undefined;
  if (arg instanceof vscode.Uri) {
    const id = fromUri(arg);
    if (id) return id;
  }
  const active = fromUri(vscode.window.activeTextEditor?.document.uri);
  if (active && app.edits.state(active) === 'pending') return active;
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  if (tab && tab.input instanceof vscode.TabInputTextDiff) {
    const id = fromUri(tab.input.modified);
    if (id && app.edits.state(id) === 'pending') return id;
  }
  const pending = app.edits.pending();
  if (pending.length === 0) {
    vscode.window.showInformationMessage('Cairn: no proposed edit is waiting.');
    return undefined;
  }
  if (pending.length === 1) return pending[0].editId;
  const item = await vscode.window.showQuickPick(
    pending.map((e) => ({ label: e.editId, description: e.files.map((f) => f.path).join(', ') })),
    { title: 'Which proposed edit?' },
  );
  return item?.label;
}

async function closeDiffs(editId: string): Promise<void> {
  const tabs: vscode.Tab[] = [];
  for (const g of vscode.window.tabGroups.all) {
    for (const t of g.tabs) {
      const input = t.input;
      const uri = input instanceof vscode.TabInputTextDiff ? input.modified : input instanceof vscode.TabInputText ? input.uri : undefined;
      if (uri && uri.scheme === PROPOSED_SCHEME && parseProposedQuery(uri.query)?.editId === editId) tabs.push(t);
    }
  }
  if (tabs.length) await vscode.window.tabGroups.close(tabs);
}

export async function settleEdit(arg: unknown, how: 'accept' | 'reject'): Promise<void> {
  const editId = await pickEdit(arg);
  if (!editId) return;
  const e = app.edits.get(editId);
  if (how === 'reject') {
    await exec('cairn.rejectEdit', { editId });
    app.edits.settle(editId, 'rejected');
    app.answers.appendLine(`✗ rejected edit ${editId}`);
    await closeDiffs(editId);
  } else {
    const files = e ? e.files.map((f) => f.uri) : [];
    const dirty = dirtyUris(files);
    const res = await exec<{ applied: boolean; checkpointId?: string; reason?: string }>('cairn.acceptEdit', { editId });
    if (!res || !res.applied) {
      vscode.window.showErrorMessage(`Cairn: the edit was not applied${res?.reason ? `: ${res.reason}` : '.'}`);
      return;
    }
    const after = await fetchEdit(editId).catch(() => undefined);
    if (!after || !(after.hunks ?? []).some((h) => h.state === 'conflict')) app.edits.settle(editId, 'accepted');
    await saveFiles(files, dirty);
    if (res.checkpointId) app.checkpoints.push({ checkpointId: res.checkpointId, editId, files });
    app.answers.appendLine(`✓ accepted edit ${editId}${res.checkpointId ? ` (checkpoint ${res.checkpointId}; "Cairn: Undo Last Accepted Edit" restores)` : ''}`);
    await closeDiffs(editId);
    if (files[0]) await vscode.window.showTextDocument(vscode.Uri.parse(files[0]), { preview: false });
    vscode.window.setStatusBarMessage(`Cairn: applied edit ${editId}`, 5000);
  }
  try {
    await fetchEdit(editId);
  } catch {
    // An older server without hunks: the local state is all there is.
    const v = app.chat.edit(editId);
    if (v) app.chat.setEdit({ ...v, state: how === 'accept' ? 'accepted' : 'rejected' });
    app.chatView.update();
  }
  app.lensesChanged.fire();
  updateStatus();
}

export async function undoLastEdit(): Promise<void> {
  const last = app.checkpoints[app.checkpoints.length - 1];
  if (!last) {
    vscode.window.showInformationMessage('Cairn: no accepted edit to undo in this session.');
    return;
  }
  const dirty = dirtyUris(last.files);
  const res = await exec<{ applied: boolean; restored?: string[]; alreadyUndone?: string[]; reason?: string }>('cairn.undo', { checkpointId: last.checkpointId });
  const why = res?.reason ?? '';
  if (res && !res.applied && (res.alreadyUndone?.length || /already undone/i.test(why))) {
    // The editor's own undo already put the text back; write it, so the disk is undone too.
    app.checkpoints.pop();
    await saveFiles(last.files); // the buffers hold exactly the text from before the accept
    app.answers.appendLine(`↶ edit ${last.editId} was already undone`);
    vscode.window.showInformationMessage('Cairn: already undone: the files are back at their pre-edit text.');
    return;
  }
  if (!res || !res.applied) {
    vscode.window.showErrorMessage(`Cairn: the undo was not applied${why ? `: ${why}` : '.'}`);
    return;
  }
  app.checkpoints.pop();
  await saveFiles(last.files, dirty);
  app.answers.appendLine(`↶ undid edit ${last.editId}${res.restored?.length ? `: restored ${res.restored.join(', ')}` : ''}${res.alreadyUndone?.length ? `; already undone: ${res.alreadyUndone.join(', ')}` : ''}`);
  if (last.files[0]) await vscode.window.showTextDocument(vscode.Uri.parse(last.files[0]), { preview: false });
  // The edit card shows what was undone (the server marks the hunks).
  const after = await fetchEdit(last.editId).catch(() => undefined);
  const undone = (after?.hunks ?? []).filter((h) => h.checkpointId === last.checkpointId && h.undone);
  const what = undone.length
    ? undone.map((h) => `hunk ${h.index + 1} (${h.path}:${h.startLine + 1}${h.endLine > h.startLine + 1 ? `-${h.endLine}` : ''})`).join(', ')
    : (res.restored ?? []).join(', ') || 'the edit';
  vscode.window.setStatusBarMessage(`Cairn: undid ${what}`, 8000);
}
