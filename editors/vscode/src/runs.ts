// Runs: asking about the selection (a new thread each time), the run events
// streamed into the chat view and the log, cancel, resume, the context report.
import * as vscode from 'vscode';
import { endApprovals } from './approvals';
import { exec } from './client';
import { FIX_QUESTION } from './logic/questions';
import { humanError } from './logic/errors';
import { RunEvent, TERMINAL } from './logic/runs';
import { openDiff, refreshEdit } from './review';
import { app, errorText } from './state';
import { updateStatus } from './status';

const REPORT_SCHEME = 'cairn-report';
const reports = new Map<string, string>();
const reportChanged = new vscode.EventEmitter<vscode.Uri>();

/** Context reports are read-only virtual documents (nothing to save when the preview closes). */
export function registerReports(ctx: vscode.ExtensionContext): void {
  ctx.subscriptions.push(
    reportChanged,
    vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, {
      onDidChange: reportChanged.event,
      provideTextDocumentContent: (uri) => reports.get(uri.path) ?? '',
    }),
  );
}

// ---- asking ----

export async function askAboutSelection(): Promise<void> {
  const question = await vscode.window.showInputBox({
    title: 'Ask Cairn',
    prompt: 'Ask about the selection (or the file when nothing is selected)',
    placeHolder: 'e.g. Why does this loop never end?',
    ignoreFocusOut: true,
  });
  if (!question) return;
  await askWith(question);
}

export async function fixDiagnostics(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (editor) app.diagDebouncer.flush(editor.document.uri.toString());
  await askWith(FIX_QUESTION, true);
}

export async function askWith(question: string, wholeLineIfEmpty = false): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor || editor.document.uri.scheme !== 'file') {
    throw new Error('open a file and select some code first.');
  }
  const sel = editor.selection;
  let range: vscode.Range | undefined = sel.isEmpty ? undefined : new vscode.Range(sel.start, sel.end);
  if (!range && wholeLineIfEmpty) range = editor.document.lineAt(sel.active.line).range;
  // A new question from the editor starts a new thread; follow-ups come from the chat view.
  await ask(question, editor.document.uri.toString(), range ? lspRange(range) : undefined, undefined);
}

export interface LspRange { start: { line: number; character: number }; end: { line: number; character: number } }

export function lspRange(r: vscode.Range): LspRange {
  return { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
}

function whereOf(uri: string | undefined, range: LspRange | undefined): string | undefined {
  if (!uri) return undefined;
  let name = uri;
  try {
    name = vscode.workspace.asRelativePath(vscode.Uri.parse(uri));
  } catch { /* keep the uri */ }
  return name + (range ? `:${range.start.line + 1}-${range.end.line + 1}` : '');
}

/** Sends cairn.ask (in threadId's thread, or a new one) and shows the run. */
export async function ask(question: string, uri: string, range: LspRange | undefined, threadId: string | undefined): Promise<void> {
  const res = await exec<{ runId: string; threadId?: string }>('cairn.ask', { uri, range, question, threadId });
  beginRun(res.runId, question, whereOf(uri, range), { threadId: res.threadId ?? threadId, uri, range });
}

// Output of events that arrived before cairn.ask answered with their run id.
const early = new Map<string, string>();
const begun = new Set<string>();

function beginRun(runId: string, question: string, where?: string, meta: { threadId?: string; uri?: string; range?: unknown } = {}): void {
  app.chat.begin(runId, { question, where, ...meta });
  app.chatView.update();
  if (begun.has(runId)) return;
  app.runs.begin(runId, { question, file: where });
  begun.add(runId);
  app.answers.append(app.transcript.header(runId, question, where));
  app.answers.append(early.get(runId) ?? '');
  early.delete(runId);
  app.chatView.reveal(false).catch(() => undefined);
  updateStatus();
}

export function onRunEvent(ev: RunEvent & Record<string, any>): void {
  if (!app.runs.apply(ev)) return;
  // The run ended: an approval it still waited for is denied (before the
  // chat marks the card as withdrawn).
  if (TERMINAL.has(ev.kind)) endApprovals(ev.runId);
  app.chat.apply(ev);
  app.chatView.update();
  const r = app.runs.get(ev.runId)!;
  const out = app.transcript.render(ev, r.tools);
  if (begun.has(ev.runId)) app.answers.append(out);
  else early.set(ev.runId, (early.get(ev.runId) ?? '') + out);
  // A run this window did not start (the lightbulb's code action, another
  // client, a resume): its `started` event says what it is about.
  if (ev.kind === 'started' && typeof ev.threadId === 'string') app.chat.begin(ev.runId, { threadId: ev.threadId });
  if (ev.kind === 'started' && typeof ev.question === 'string' && ev.question) {
    const uri = typeof ev.uri === 'string' ? ev.uri : undefined;
    beginRun(ev.runId, ev.question, whereOf(uri, ev.range), { threadId: ev.threadId, uri, range: ev.range });
  }
  if (ev.kind === 'editProposed' && ev.editId) {
    openDiff(ev.editId).catch((err) => vscode.window.showErrorMessage(`Cairn: cannot show edit ${ev.editId}: ${errorText(err)}`));
  }
  if (ev.kind === 'editUpdated' && ev.editId) {
    refreshEdit(ev.editId).catch((err) => vscode.window.showErrorMessage(`Cairn: cannot refresh a proposed edit: ${errorText(err)}`));
  }
  if (ev.kind === 'failed' && !app.chatView.visible()) {
    // The chat says it in place when it is on screen (a toast would cover its input).
    const h = humanError(ev.class, ev.error);
    const actions = h.setting ? ['Retry', 'Open Settings'] : ['Retry'];
    vscode.window.showErrorMessage(`Cairn: ${h.text}`, ...actions).then((c) => {
      if (c === 'Retry') vscode.commands.executeCommand('cairn.retryRun', ev.runId);
      else if (c === 'Open Settings') vscode.commands.executeCommand('workbench.action.openSettings', h.setting);
    });
  } else if (ev.kind === 'interrupted') {
    vscode.window.showWarningMessage(`Cairn run interrupted: ${ev.error ?? ''}`, 'Resume').then((c) => {
      if (c) vscode.commands.executeCommand('cairn.resumeRun', ev.runId);
    });
  }
  if (ev.kind === 'started' || TERMINAL.has(ev.kind)) updateStatus();
}

// ---- cancel, resume, context report ----

async function pickRun(list: { runId: string; question?: string; file?: string }[], title: string): Promise<string | undefined> {
  if (list.length === 0) return undefined;
  if (list.length === 1) return list[0].runId;
  const item = await vscode.window.showQuickPick(
    list.slice().reverse().map((r) => ({ label: r.question ?? r.runId, description: r.file, detail: r.runId, runId: r.runId })),
    { title },
  );
  return item?.runId;
}

export async function cancelRun(arg?: unknown): Promise<void> {
  const runId = typeof arg === 'string' ? arg : await pickRun(app.runs.running(), 'Cancel which run?');
  if (!runId) {
    vscode.window.showInformationMessage('Cairn: no run is in progress.');
    return;
  }
  await exec('cairn.cancel', { runId });
}

export async function resumeRun(arg?: unknown): Promise<void> {
  let runId = typeof arg === 'string' ? arg : await pickRun(app.runs.interrupted(), 'Resume which run?');
  if (!runId) {
    // Runs interrupted before this session (e.g. the server was restarted).
    try {
      const list = await exec<{ runId: string; question?: string; state?: string }[]>('cairn.listRuns', {});
      const interrupted = (list ?? []).filter((r) => r.state === 'interrupted');
      runId = await pickRun(interrupted, 'Resume which run?');
    } catch {
      /* older server: ask for the id */
    }
  }
  if (!runId) {
    runId = await vscode.window.showInputBox({ title: 'Resume run', prompt: 'Run id of the interrupted run (see `cairn trace list`)' });
  }
  if (!runId) return;
  const res = await exec<{ runId: string }>('cairn.resume', { runId });
  const old = app.runs.get(runId);
  beginRun(res.runId, `resume ${runId}${old?.question ? `: ${old.question}` : ''}`, old?.file);
}

export async function showContextReport(arg?: unknown): Promise<void> {
  const runId = typeof arg === 'string' ? arg : await pickRun(app.runs.all(), 'Context report of which run?');
  if (!runId) {
    vscode.window.showInformationMessage('Cairn: ask something first; the report describes a run.');
    return;
  }
  const res = await exec<{ markdown: string }>('cairn.contextReport', { runId });
  // A read-only virtual document: nothing to save when the preview closes.
  const uri = vscode.Uri.from({ scheme: REPORT_SCHEME, path: `/context-report-${runId}.md` });
  reports.set(uri.path, res.markdown ?? '');
  reportChanged.fire(uri);
  try {
    await vscode.commands.executeCommand('markdown.showPreview', uri);
  } catch {
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri));
  }
}

