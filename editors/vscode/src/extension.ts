// Cairn for VS Code: starts `cairn serve`, streams runs into the chat view (and
// a log), shows proposed edits in the native diff editor, accepts/rejects them
// whole or hunk by hunk, undoes. This file activates the extension and
// registers its commands; the parts live beside it:
//   state        what the parts share
//   client       the server's lifecycle, settings sent to it
//   runs         asking, run events, cancel, resume, context report
//   chatActions  the chat view's buttons and input box
//   review       diff editors, CodeLenses, accept/reject/redo, undo
//   approvals    window/showMessageRequest (inline cards in the chat)
//   apiKey       "Cairn: Set API Key" (SecretStorage → the server's environment)
//   diagnostics  forwarding diagnostics
//   status       the status bar item
//
// Activation (package.json): on the extension's commands and its chat view
// (VS Code infers both from `contributes`), and at startup only in a
// workspace with a `.cairn` folder: a window that never uses Cairn starts no
// server and indexes nothing.
import * as vscode from 'vscode';
import { showMessageRequest } from './approvals';
import { setApiKey } from './apiKey';
import { onChatAction, listModels, listThreads, retryRun } from './chatActions';
import { ChatViewProvider } from './chatView';
import { askWorkspaceSuggestions, onConfigChange, startClient, stopClient } from './client';
import { forwardAllDiagnostics, registerDiagnostics } from './diagnostics';
import { EXPLAIN_QUESTION } from './logic/questions';
import { gotoHunk, openDiff, registerReview, settleEdit, settleHunk, undoLastEdit } from './review';
import { askAboutSelection, askWith, cancelRun, fixDiagnostics, onRunEvent, registerReports, resumeRun, showContextReport } from './runs';
import { app, errorText } from './state';

const hooks = {
  onRunEvent,
  onShowMessageRequest: showMessageRequest,
  onRunning: () => {
    forwardAllDiagnostics();
    // The thread list is the server's (it survives reloads): load it whenever
    // the server starts, so the chat view never shows "Threads (0)" until Refresh.
    listThreads(false).catch((err) => app.answers.appendLine(`could not list threads: ${errorText(err)}`));
    listModels().catch((err) => app.answers.appendLine(`could not list models: ${errorText(err)}`));
  },
};

/** "Cairn: Choose Model": the chat's model picker as a Quick Pick. */
async function chooseModel(): Promise<void> {
  await listModels();
  const m = app.chat.models;
  const pick = await vscode.window.showQuickPick((m?.available ?? []).map((id) => ({ label: id, description: id === m?.current ? 'current' : undefined })), {
    title: 'Cairn: model for this workspace',
  });
  if (pick) await onChatAction({ type: 'selectModel', model: pick.label });
}

export async function activate(ctx: vscode.ExtensionContext): Promise<void> {
  app.workspaceMemory = ctx.workspaceState;
  app.answers = vscode.window.createOutputChannel('Cairn Answers');
  app.status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  app.status.name = 'Cairn';
  ctx.subscriptions.push(app.answers, app.status);
  app.chatView = new ChatViewProvider(ctx.extensionUri, app.chat, onChatAction);
  ctx.subscriptions.push(vscode.window.registerWebviewViewProvider(ChatViewProvider.viewType, app.chatView, {
    webviewOptions: { retainContextWhenHidden: true },
  }));
  registerDiagnostics(ctx);
  registerReview(ctx);
  registerReports(ctx);
  ctx.subscriptions.push(vscode.workspace.onDidChangeConfiguration((e) => onConfigChange(e)));
  const noteFile = (e: vscode.TextEditor | undefined) => {
    if (e?.document.uri.scheme === 'file') app.lastFile = e.document.uri;
  };
  noteFile(vscode.window.activeTextEditor);
  ctx.subscriptions.push(vscode.window.onDidChangeActiveTextEditor(noteFile));

  const reg = (id: string, fn: (...args: any[]) => unknown) =>
    ctx.subscriptions.push(vscode.commands.registerCommand(id, async (...args: any[]) => {
      try {
        await fn(...args);
      } catch (err) {
        vscode.window.showErrorMessage(`Cairn: ${errorText(err)}`);
      }
    }));
  reg('cairn.askAboutSelection', askAboutSelection);
  reg('cairn.explainSelection', () => askWith(EXPLAIN_QUESTION));
  reg('cairn.fixDiagnostics', fixDiagnostics);
  reg('cairn.cancelRun', cancelRun);
  reg('cairn.showContextReport', showContextReport);
  reg('cairn.acceptProposedEdit', (arg?: unknown) => settleEdit(arg, 'accept'));
  reg('cairn.rejectProposedEdit', (arg?: unknown) => settleEdit(arg, 'reject'));
  reg('cairn.acceptHunk', (editId?: string, index?: number) => settleHunk('accept', editId, index));
  reg('cairn.rejectHunk', (editId?: string, index?: number) => settleHunk('reject', editId, index));
  reg('cairn.retryRun', (runId: string) => retryRun(runId));
  reg('cairn.nextHunk', () => gotoHunk(1));
  reg('cairn.previousHunk', () => gotoHunk(-1));
  reg('cairn.followUp', () => app.chatView.reveal(true));
  reg('cairn.showThreads', () => listThreads());
  reg('cairn.showProposedEdit', (editId: string) => openDiff(editId));
  reg('cairn.undoLastEdit', undoLastEdit);
  reg('cairn.resumeRun', resumeRun);
  reg('cairn.showOutput', () => app.chatView.reveal(true));
  reg('cairn.showLog', () => app.answers.show(true));
  reg('cairn.restartServer', async () => { await stopClient(); await startClient(ctx, hooks); });
  reg('cairn.setApiKey', () => setApiKey(ctx.secrets, async () => { await stopClient(); await startClient(ctx, hooks); }));
  reg('cairn.chooseModel', chooseModel);
  reg('cairn.refreshModels', () => listModels().catch(() => undefined));

  await startClient(ctx, hooks);
  void askWorkspaceSuggestions();
}

export async function deactivate(): Promise<void> {
  await stopClient();
}
