// The chat view's actions (the webview posts them): ask or follow up, cancel,
// resume, review/accept/reject/redo an edit, switch threads.
import * as vscode from 'vscode';
import { ChatAction } from './chatView';
import { exec } from './client';
import { redoEdit, openDiff, settleEdit } from './review';
import { ask, cancelRun, lspRange, LspRange, resumeRun } from './runs';
import { app } from './state';

export async function onChatAction(a: ChatAction): Promise<void> {
  switch (a.type) {
    case 'ask': {
      const anchor = app.chat.anchor(a.threadId);
      const editor = vscode.window.activeTextEditor;
      const uri = anchor?.uri ?? (editor?.document.uri.scheme === 'file' ? editor.document.uri.toString() : undefined);
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
  }
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
  const list = await exec<{ threadId: string; title: string; runs: string[]; updated?: string }[]>('cairn.listThreads', {});
  app.chat.mergeThreads(list ?? []);
  app.chatView.update();
  if (reveal) await app.chatView.reveal(false);
}

