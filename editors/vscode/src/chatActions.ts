// The chat view's actions (the webview posts them): ask or follow up, cancel,
// resume, review/accept/reject/redo an edit, switch threads.
import * as vscode from 'vscode';
import { ChatAction } from './chatView';
import { exec } from './client';
import { redoEdit, openDiff, settleEdit } from './review';
import { answerApproval } from './approvals';
import { ask, cancelRun, lspRange, LspRange, resumeRun, showContextReport } from './runs';
import { settingValue } from './settings';
import { app } from './state';
import type { ThreadSummary } from './logic/chat';

export async function onChatAction(a: ChatAction): Promise<void> {
  switch (a.type) {
    case 'ask': {
      const anchor = app.chat.anchor(a.threadId);
      const active = vscode.window.activeTextEditor;
      const editor = active?.document.uri.scheme === 'file' ? active : undefined;
      // Focus in the chat or in a non-text editor (Settings): the file the
      // user last worked in, without a selection.
      const uri = anchor?.uri ?? editor?.document.uri.toString() ?? (app.lastFile ?? openFileTab())?.toString();
      if (!uri) throw new Error('open a file first: a question is asked about a file.');
      await ask(a.question, uri, a.threadId ? undefined : (editor && !editor.selection.isEmpty ? lspRange(editor.selection) : undefined), a.threadId);
      return;
    }
    case 'cancel': return cancelRun(a.runId);
    case 'resume': return resumeRun(a.runId);
    case 'review': return openDiff(a.editId, true);
    case 'accept': return settleEdit(a.editId, 'accept');
    case 'reject': return settleEdit(a.editId, 'reject');
    case 'redo': return redoEdit(a.editId);
    case 'selectThread':
      app.chat.select(a.threadId);
      app.chatView.update();
      return;
    case 'newThread':
      app.chat.select(undefined);
      app.chatView.update();
      app.chatView.reveal(true);
      return;
    case 'listThreads': return listThreads();
    case 'copyCode':
      await vscode.env.clipboard.writeText(a.code);
      vscode.window.setStatusBarMessage('Cairn: code copied', 3000);
      return;
    case 'insertCode': return insertCode(a.code);
    case 'retry': return retryRun(a.runId);
    case 'openSettings':
      await vscode.commands.executeCommand('workbench.action.openSettings', a.setting);
      return;
    case 'approve': return answerApproval(a.id, a.title);
    case 'openContext': return openContext(a.path, a.startLine, a.endLine);
    case 'contextReport': return showContextReport(a.runId);
    case 'applyCode': return applyCode(a.code, a.runId);
    case 'setApiKey':
      await vscode.commands.executeCommand('cairn.setApiKey');
      return;
    case 'selectModel': return selectModel(a.model);
    case 'listModels': return listModels();
  }
}

/** Opens a file of a run's context at its lines (path relative to the workspace root). */
async function openContext(rel: string, startLine?: number, endLine?: number): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (!folder) throw new Error('no workspace folder is open.');
  const uri = vscode.Uri.joinPath(folder.uri, ...rel.split('/'));
  const doc = await vscode.workspace.openTextDocument(uri);
  let selection: vscode.Range | undefined;
  if (startLine && startLine >= 1) {
    const last = Math.min(Math.max(endLine ?? startLine, startLine), doc.lineCount) - 1;
    selection = new vscode.Range(startLine - 1, 0, last, doc.lineAt(last).text.length);
  }
  const editor = await vscode.window.showTextDocument(doc, { selection, preview: true });
  if (selection) editor.revealRange(selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
}

/**
 * Apply: the code block becomes a proposal (cairn.proposeEdit), reviewed in
 * the diff editor hunk by hunk like any of Cairn's edits; nothing is
 * written to disk here. It replaces the selection the question was asked
 * about, else the active editor's selection (at the cursor when empty).
 */
async function applyCode(code: string, runId?: string): Promise<void> {
  const run = runId ? app.chat.run(runId) : undefined;
  let uri: string | undefined;
  let range: LspRange | undefined;
  if (run?.uri && run.range) {
    uri = run.uri;
    range = run.range as LspRange;
  } else {
    const isFile = (e: vscode.TextEditor | undefined) => !!e && e.document.uri.scheme === 'file';
    const active = vscode.window.activeTextEditor;
    const editor = isFile(active) ? active : vscode.window.visibleTextEditors.find(isFile);
    if (!editor) throw new Error('select the code to replace in a file first (Apply proposes the block in its place).');
    uri = editor.document.uri.toString();
    range = lspRange(editor.selection);
  }
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
  const r = new vscode.Range(range.start.line, range.start.character, range.end.line, range.end.character);
  // A fenced block ends with a newline; a selection that does not keeps its own end.
  const newText = code.endsWith('\n') && !r.isEmpty && !doc.getText(r).endsWith('\n') ? code.slice(0, -1) : code;
  await exec('cairn.proposeEdit', { uri, range, newText, threadId: run?.threadId });
}

/** A file open in a tab of the active editor group (the active tab first), else of any group. */
function openFileTab(): vscode.Uri | undefined {
  const groups = [vscode.window.tabGroups.activeTabGroup, ...vscode.window.tabGroups.all];
  for (const g of groups) {
    for (const t of [g.activeTab, ...g.tabs]) {
      if (t?.input instanceof vscode.TabInputText && t.input.uri.scheme === 'file') return t.input.uri;
    }
  }
  return undefined;
}

/** Fills the chat's model picker (cairn.models); the setting's model when the server lists none. */
export async function listModels(): Promise<void> {
  const res = await exec<{ current: string; available: string[] }>('cairn.models', {});
  // The setting is what the next run asks (the server may not have applied a change yet).
  const configured = settingValue('model.name');
  const current = typeof configured === 'string' && configured.trim() ? configured.trim() : res?.current ?? '';
  app.chat.models = { current, available: Array.isArray(res?.available) ? res.available : [] };
  app.chatView.update();
}

/** The model picker's choice: the workspace's cairn.model.name (the server follows the setting). */
async function selectModel(model: string): Promise<void> {
  const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await vscode.workspace.getConfiguration('cairn').update('model.name', model, target);
  if (app.chat.models) app.chat.models = { ...app.chat.models, current: model };
  app.chatView.update();
  vscode.window.setStatusBarMessage(`Cairn: model ${model}`, 5000);
}

/**
 * Inserts a chat code block at the cursor (replacing the selection) of the
 * text editor the user last worked in: the active one, else the first
 * visible one; never a read-only proposed side of a Cairn diff.
 */
async function insertCode(code: string): Promise<void> {
  const writable = (e: vscode.TextEditor | undefined) => !!e && (e.document.uri.scheme === 'file' || e.document.uri.scheme === 'untitled');
  const active = vscode.window.activeTextEditor;
  const editor = writable(active) ? active : vscode.window.visibleTextEditors.find(writable);
  if (!editor) throw new Error('open a file to insert the code into.');
  const ok = await editor.edit((b) => { for (const s of editor.selections) b.replace(s, code); });
  if (!ok) throw new Error(`could not insert the code into ${vscode.workspace.asRelativePath(editor.document.uri)}.`);
  await vscode.window.showTextDocument(editor.document, { viewColumn: editor.viewColumn, preserveFocus: false });
}

/** Asks a failed run's question again, about the same file and range, in its thread. */
export async function retryRun(runId: string): Promise<void> {
  const r = app.chat.run(runId);
  if (!r || !r.question) throw new Error('that run is not known in this window.');
  const uri = r.uri ?? app.chat.anchor(r.threadId)?.uri;
  if (!uri) throw new Error('the run has no file to ask about.');
  await ask(r.question, uri, r.range as LspRange | undefined, r.threadId);
  await app.chatView.reveal(false);
}

/** Merges the server's thread list into the chat view; reveal: also show the view. */
export async function listThreads(reveal = true): Promise<void> {
  const list = await exec<ThreadSummary[]>('cairn.listThreads', {});
  app.chat.mergeThreads(list ?? []);
  app.chatView.update();
  if (reveal) await app.chatView.reveal(false);
}

