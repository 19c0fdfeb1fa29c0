// Cairn for VS Code: starts `cairn serve`, streams runs into the chat view (and
// a log), shows proposed edits in the native diff editor, accepts/rejects them
// whole or hunk by hunk, undoes.
import * as fs from 'fs';
import * as os from 'os';
import * as vscode from 'vscode';
import {
  DidChangeConfigurationNotification,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  MessageActionItem,
  ServerOptions,
  ShowMessageRequest,
  ShowMessageRequestParams,
  State,
  StaticFeature,
  TransportKind,
} from 'vscode-languageclient/node';
import { ChatAction, ChatViewProvider } from './chatView';
import { ChatModel, editState } from './logic/chat';
import { approvalAnswer, approvalPrompt, denyFirst, isApproval } from './logic/approval';
import { KeyedDebouncer } from './logic/debounce';
import { forwardable, PlainDiagnostic } from './logic/diagnostics';
import {
  diffTitle,
  EditStore,
  filesToSave,
  GetEditResult,
  Hunk,
  hunkAt,
  hunkSpan,
  lineDelta,
  newConflicts,
  parseProposedQuery,
  PROPOSED_SCHEME,
  proposedUriParts,
  ShownTab,
  shownAsText,
} from './logic/proposed';
import { EXPLAIN_QUESTION, FIX_QUESTION } from './logic/questions';
import { RunEvent, RunTracker, TERMINAL, Transcript } from './logic/runs';
import { resolveServerPath } from './logic/serverPath';
import { buildSettings, modelLabel } from './logic/settings';
import { isMachineKey, MACHINE_KEYS, memoryKey, resolveMachineSetting, suggestionPrompt } from './logic/machineSettings';


let client: LanguageClient | undefined;
let answers: vscode.OutputChannel;
let status: vscode.StatusBarItem;
const runs = new RunTracker();
const transcript = new Transcript();
const edits = new EditStore();
const checkpoints: { checkpointId: string; editId: string; files: string[] }[] = [];
let diagDebouncer: KeyedDebouncer<string>;
const proposedChanged = new vscode.EventEmitter<vscode.Uri>();
const REPORT_SCHEME = 'cairn-report';
const reports = new Map<string, string>();
const reportChanged = new vscode.EventEmitter<vscode.Uri>();
const lensesChanged = new vscode.EventEmitter<void>();
const chat = new ChatModel();
let chatView: ChatViewProvider;

/** Declares a Cairn client: the server then streams cairn/runEvent instead of showDocument. */
const cairnClientFeature: StaticFeature = {
  fillClientCapabilities(caps) {
    caps.experimental = { ...(caps.experimental as object | undefined), cairn: { runEvents: true } };
  },
  initialize() { /* nothing to set up */ },
  getState: () => ({ kind: 'static' }),
  clear() { /* nothing to release */ },
};

let workspaceMemory: vscode.Memento | undefined;
/** Suggestions asked about in this window (a dismissed question is not repeated). */
const suggestionsAsked = new Set<string>();

/**
 * One cairn.* setting. The settings that start processes or decide where
 * code and keys go (logic/machineSettings) come from user or machine scope
 * only; a workspace's value counts once the user accepted it.
 */
function settingValue(key: string): unknown {
  const cfg = vscode.workspace.getConfiguration('cairn');
  if (isMachineKey(key)) {
    return resolveMachineSetting(key, cfg.inspect(key), workspaceMemory ?? { get: () => undefined }).value;
  }
  return cfg.get(key);
}

function settings(): Record<string, unknown> {
  return buildSettings(settingValue);
}

/**
 * Asks, once per workspace and value, about each workspace value of a
 * machine setting; an accepted one is sent to the server (or, for the server
 * path, offered as a restart).
 */
async function askWorkspaceSuggestions(): Promise<void> {
  const memory = workspaceMemory;
  if (!memory) return;
  const cfg = vscode.workspace.getConfiguration('cairn');
  let changed = false;
  for (const key of MACHINE_KEYS) {
    const s = resolveMachineSetting(key, cfg.inspect(key), memory).suggestion;
    if (!s) continue;
    const mk = memoryKey(key, s.value);
    if (suggestionsAsked.has(mk)) continue;
    suggestionsAsked.add(mk);
    const { message, detail } = suggestionPrompt(s);
    const use = 'Use It';
    const keep = 'Keep My Setting';
    const choice = await vscode.window.showWarningMessage(message, { modal: true, detail }, keep, use);
    if (choice === undefined) continue; // dismissed: asked again in a new window
    await memory.update(mk, choice === use ? 'accepted' : 'declined');
    if (choice !== use) continue;
    if (key === 'serverPath') {
      vscode.commands.executeCommand('cairn.restartServer');
    } else {
      changed = true;
    }
  }
  if (changed && client && client.state === State.Running) {
    client.sendNotification(DidChangeConfigurationNotification.type, { settings: { cairn: settings() } });
    updateStatus();
  }
}

export async function activate(ctx: vscode.ExtensionContext): Promise<void> {
  workspaceMemory = ctx.workspaceState;
  answers = vscode.window.createOutputChannel('Cairn Answers');
  status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 50);
  status.name = 'Cairn';
  ctx.subscriptions.push(answers, status, proposedChanged, lensesChanged, reportChanged);
  chatView = new ChatViewProvider(ctx.extensionUri, chat, onChatAction);
  ctx.subscriptions.push(vscode.window.registerWebviewViewProvider(ChatViewProvider.viewType, chatView, {
    webviewOptions: { retainContextWhenHidden: true },
  }));

  const delay = () => vscode.workspace.getConfiguration('cairn').get<number>('diagnostics.debounceMs', 300);
  diagDebouncer = new KeyedDebouncer<string>(delay(), (uri) => sendDiagnostics(uri));
  ctx.subscriptions.push({ dispose: () => diagDebouncer.dispose() });

  ctx.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider(PROPOSED_SCHEME, {
      onDidChange: proposedChanged.event,
      provideTextDocumentContent(uri) {
        const ref = parseProposedQuery(uri.query);
        if (!ref) return '';
        const f = edits.file(ref);
        if (!f) return '';
        return ref.side === 'current' ? f.current : f.proposed;
      },
    }),
    vscode.workspace.registerTextDocumentContentProvider(REPORT_SCHEME, {
      onDidChange: reportChanged.event,
      provideTextDocumentContent: (uri) => reports.get(uri.path) ?? '',
    }),
    vscode.languages.registerCodeLensProvider([{ scheme: PROPOSED_SCHEME }, { scheme: 'file' }], {
      onDidChangeCodeLenses: lensesChanged.event,
      provideCodeLenses: (doc) => codeLenses(doc),
    }),
    // A file's lenses depend on what is on screen (shownAsText): when its tab
    // becomes active, ask again, in case the request outran the tab news.
    vscode.window.tabGroups.onDidChangeTabs((e) => {
      const back = [...e.opened, ...e.changed].some((t) =>
        t.isActive && t.input instanceof vscode.TabInputText && edits.pendingFor(t.input.uri.toString()) !== undefined);
      if (back) lensesChanged.fire();
    }),
    vscode.languages.onDidChangeDiagnostics((e) => {
      for (const uri of e.uris) if (uri.scheme === 'file') diagDebouncer.trigger(uri.toString());
    }),
    vscode.workspace.onDidChangeConfiguration((e) => onConfigChange(e)),
  );

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
  reg('cairn.followUp', () => chatView.reveal(true));
  reg('cairn.showThreads', listThreads);
  reg('cairn.showProposedEdit', (editId: string) => openDiff(editId));
  reg('cairn.undoLastEdit', undoLastEdit);
  reg('cairn.resumeRun', resumeRun);
  reg('cairn.showOutput', () => chatView.reveal(true));
  reg('cairn.showLog', () => answers.show(true));
  reg('cairn.restartServer', async () => { await stopClient(); await startClient(ctx); });

  await startClient(ctx);
  void askWorkspaceSuggestions();
}

export async function deactivate(): Promise<void> {
  await stopClient();
}

// ---- server lifecycle ----

async function startClient(ctx: vscode.ExtensionContext): Promise<void> {
  const configured = settingValue('serverPath');
  const setting = typeof configured === 'string' ? configured : '';
  const resolved = resolveServerPath(setting, {
    pathEnv: process.env.PATH,
    pathExt: process.env.PATHEXT,
    platform: process.platform,
    home: os.homedir(),
    isExecutable: (f) => {
      try {
        fs.accessSync(f, fs.constants.X_OK);
        return fs.statSync(f).isFile();
      } catch {
        return false;
      }
    },
  });
  if (!resolved.ok) {
    updateStatus('missing');
    const choice = await vscode.window.showErrorMessage(resolved.message, 'Open Settings');
    if (choice === 'Open Settings') vscode.commands.executeCommand('workbench.action.openSettings', 'cairn.serverPath');
    return;
  }
  const serverOptions: ServerOptions = {
    command: resolved.path,
    args: ['serve'],
    transport: TransportKind.stdio,
    options: { env: process.env },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }],
    initializationOptions: settings(),
    outputChannelName: 'Cairn Server',
  };
  const c = new LanguageClient('cairn', 'Cairn', serverOptions, clientOptions);
  c.registerFeature(cairnClientFeature);
  client = c;
  c.onDidChangeState((e) => {
    if (e.newState === State.Running) updateStatus();
    else if (e.newState === State.Stopped) updateStatus('stopped');
  });
  updateStatus('starting');
  try {
    await c.start();
  } catch (err) {
    updateStatus('stopped');
    vscode.window.showErrorMessage(`Cairn: the server (${resolved.path}) did not start: ${errorText(err)}`);
    return;
  }
  ctx.subscriptions.push(
    c.onNotification('cairn/runEvent', (ev: RunEvent) => onRunEvent(ev)),
    // Approvals: a modal that shows the whole message (the command text).
    c.onRequest(ShowMessageRequest.type, (params) => showMessageRequest(params)),
  );
  // Diagnostics already present when the server starts.
  for (const [uri] of vscode.languages.getDiagnostics()) {
    if (uri.scheme === 'file') diagDebouncer.trigger(uri.toString());
  }
  updateStatus();
}

async function stopClient(): Promise<void> {
  const c = client;
  client = undefined;
  if (c) {
    try {
      await c.stop();
    } catch {
      /* already gone */
    }
  }
}

function running(): LanguageClient {
  if (!client || client.state !== State.Running) {
    throw new Error('the Cairn server is not running (see the "Cairn Server" output, or run "Cairn: Restart Server").');
  }
  return client;
}

async function exec<T>(command: string, arg: unknown): Promise<T> {
  return (await running().sendRequest(ExecuteCommandRequest.type, { command, arguments: [arg] })) as T;
}

function onConfigChange(e: vscode.ConfigurationChangeEvent): void {
  if (!e.affectsConfiguration('cairn')) return;
  diagDebouncer.setDelay(vscode.workspace.getConfiguration('cairn').get<number>('diagnostics.debounceMs', 300));
  if (e.affectsConfiguration('cairn.serverPath')) {
    vscode.window.showInformationMessage('Cairn: the server path changed.', 'Restart Server').then((c) => {
      if (c) vscode.commands.executeCommand('cairn.restartServer');
    });
  }
  if (client && client.state === State.Running) {
    client.sendNotification(DidChangeConfigurationNotification.type, { settings: { cairn: settings() } });
  }
  updateStatus();
  void askWorkspaceSuggestions();
}

// ---- status bar ----

function updateStatus(state?: 'starting' | 'stopped' | 'missing'): void {
  // Shows the hunk actions on a diff editor's title bar while an edit waits for review.
  vscode.commands.executeCommand('setContext', 'cairn.reviewing', edits.pending().length > 0);
  const label = modelLabel(settings());
  const active = runs.running();
  if (state === 'missing') {
    status.text = '$(error) Cairn: no server';
    status.tooltip = 'The cairn binary was not found. Set "cairn.serverPath".';
    status.command = { title: 'Settings', command: 'workbench.action.openSettings', arguments: ['cairn.serverPath'] };
  } else if (state === 'stopped') {
    status.text = '$(debug-disconnect) Cairn: stopped';
    status.tooltip = 'The Cairn server is not running. Click to restart.';
    status.command = 'cairn.restartServer';
  } else if (state === 'starting') {
    status.text = '$(loading~spin) Cairn: starting';
    status.tooltip = 'Starting the Cairn server';
    status.command = 'cairn.showOutput';
  } else if (active.length > 0) {
    status.text = `$(sync~spin) Cairn: running${active.length > 1 ? ` (${active.length})` : ''} $(debug-stop)`;
    status.tooltip = `${label}: ${active.map((r) => r.question ?? r.runId).join('; ')}. Click to cancel.`;
    status.command = 'cairn.cancelRun';
  } else {
    const pending = edits.pending().length;
    status.text = `$(comment-discussion) Cairn: ${label}${pending ? ` · ${pending} edit${pending > 1 ? 's' : ''} to review` : ''}`;
    status.tooltip = 'Cairn: show the answer view';
    status.command = 'cairn.showOutput';
  }
  status.show();
}

// ---- asking ----

async function askAboutSelection(): Promise<void> {
  const question = await vscode.window.showInputBox({
    title: 'Ask Cairn',
    prompt: 'Ask about the selection (or the file when nothing is selected)',
    placeHolder: 'e.g. Why does this loop never end?',
    ignoreFocusOut: true,
  });
  if (!question) return;
  await askWith(question);
}

async function fixDiagnostics(): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (editor) diagDebouncer.flush(editor.document.uri.toString());
  await askWith(FIX_QUESTION, true);
}

async function askWith(question: string, wholeLineIfEmpty = false): Promise<void> {
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

interface LspRange { start: { line: number; character: number }; end: { line: number; character: number } }

function lspRange(r: vscode.Range): LspRange {
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
async function ask(question: string, uri: string, range: LspRange | undefined, threadId: string | undefined): Promise<void> {
  const res = await exec<{ runId: string; threadId?: string }>('cairn.ask', { uri, range, question, threadId });
  beginRun(res.runId, question, whereOf(uri, range), { threadId: res.threadId ?? threadId, uri, range });
}

// Output of events that arrived before cairn.ask answered with their run id.
const early = new Map<string, string>();
const begun = new Set<string>();

function beginRun(runId: string, question: string, where?: string, meta: { threadId?: string; uri?: string; range?: unknown } = {}): void {
  chat.begin(runId, { question, where, ...meta });
  chatView.update();
  if (begun.has(runId)) return;
  runs.begin(runId, { question, file: where });
  begun.add(runId);
  answers.append(transcript.header(runId, question, where));
  answers.append(early.get(runId) ?? '');
  early.delete(runId);
  chatView.reveal(false).catch(() => undefined);
  updateStatus();
}

function onRunEvent(ev: RunEvent & Record<string, any>): void {
  if (!runs.apply(ev)) return;
  chat.apply(ev);
  chatView.update();
  const r = runs.get(ev.runId)!;
  const out = transcript.render(ev, r.tools);
  if (begun.has(ev.runId)) answers.append(out);
  else early.set(ev.runId, (early.get(ev.runId) ?? '') + out);
  // A run this window did not start (the lightbulb's code action, another
  // client, a resume): its `started` event says what it is about.
  if (ev.kind === 'started' && typeof ev.threadId === 'string') chat.begin(ev.runId, { threadId: ev.threadId });
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
  if (ev.kind === 'failed') {
    vscode.window.showErrorMessage(`Cairn run failed${ev.class ? ` (${ev.class})` : ''}: ${ev.error ?? ''}`);
  } else if (ev.kind === 'interrupted') {
    vscode.window.showWarningMessage(`Cairn run interrupted: ${ev.error ?? ''}`, 'Resume').then((c) => {
      if (c) vscode.commands.executeCommand('cairn.resumeRun', ev.runId);
    });
  }
  if (ev.kind === 'started' || TERMINAL.has(ev.kind)) updateStatus();
}

// ---- the chat view's actions ----

async function onChatAction(a: ChatAction): Promise<void> {
  switch (a.type) {
    case 'ask': {
      const anchor = chat.anchor(a.threadId);
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
      chat.select(a.threadId);
      chatView.update();
      return;
    case 'newThread':
      chat.select(undefined);
      chatView.update();
      chatView.reveal(true);
      return;
    case 'listThreads': return listThreads();
  }
}

async function listThreads(): Promise<void> {
  const list = await exec<{ threadId: string; title: string; runs: string[]; updated?: string }[]>('cairn.listThreads', {});
  chat.mergeThreads(list ?? []);
  chatView.update();
  await chatView.reveal(false);
}

// ---- proposed edits ----

function proposedUri(editId: string, i: number, relPath: string, side: 'proposed' | 'current' = 'proposed'): vscode.Uri {
  const p = proposedUriParts(editId, i, relPath, side);
  return vscode.Uri.from({ scheme: PROPOSED_SCHEME, path: p.path, query: p.query });
}

/** Fetches an edit's files and hunks (cairn.getEdit) into the store and the chat view. */
async function fetchEdit(editId: string): Promise<GetEditResult> {
  const res = await exec<GetEditResult>('cairn.getEdit', { editId });
  if (!res.editId) res.editId = editId;
  edits.put(res);
  const hunks = res.hunks ?? [];
  const state = editState(hunks);
  if (hunks.length && state !== 'pending' && state !== 'conflict') edits.settle(editId, state === 'rejected' ? 'rejected' : 'accepted');
  chat.setEdit({
    editId, state: hunks.length ? state : (edits.state(editId) as 'pending' | 'accepted' | 'rejected') ?? 'pending',
    files: res.files.map((f) => f.path),
    hunks: hunks.map((h) => ({ index: h.index, path: h.path, startLine: h.startLine, endLine: h.endLine, state: h.state })),
  });
  chatView.update();
  lensesChanged.fire();
  for (let i = 0; i < res.files.length; i++) proposedChanged.fire(proposedUri(editId, i, res.files[i].path));
  updateStatus();
  return res;
}

async function openDiff(editId: string, focus = false): Promise<void> {
  const res = await fetchEdit(editId);
  for (let i = 0; i < res.files.length; i++) {
    const f = res.files[i];
    const right = proposedUri(editId, i, f.path);
    const left = f.create ? proposedUri(editId, i, f.path, 'current') : vscode.Uri.parse(f.uri);
    const fileHunks = (res.hunks ?? []).filter((h) => h.path === f.path);
    const n = fileHunks.length;
    // Changed lines: from the hunks where the server lists them (exact), else a rough count.
    const d = n && fileHunks.every((h) => typeof h.proposedEndLine === 'number')
      ? fileHunks.reduce((a, h) => ({ added: a.added + (h.proposedEndLine! - h.proposedStartLine!), removed: a.removed + (h.endLine - h.startLine) }), { added: 0, removed: 0 })
      : lineDelta(f.current, f.proposed);
    await vscode.commands.executeCommand('vscode.diff', left, right, `${diffTitle(f)} (+${d.added} −${d.removed}${n > 1 ? `, ${n} hunks` : ''})`, {
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
    if (!ref || ref.side !== 'proposed' || edits.state(ref.editId) !== 'pending') return [];
    const res = edits.get(ref.editId);
    const path = res?.files[ref.file]?.path;
    const pending = (res?.hunks ?? []).filter((h) => h.state === 'pending');
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
  const e = edits.pendingFor(doc.uri.toString());
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
    const res = ref && edits.get(ref.editId);
    const path = res?.files[ref!.file]?.path;
    const h = res && path !== undefined ? hunkAt(res.hunks ?? [], path, line, 'new') : undefined;
    return h ? { editId: ref!.editId, hunk: h } : undefined;
  }
  const res = edits.pendingFor(ed.document.uri.toString());
  const f = res?.files.find((x) => vscode.Uri.parse(x.uri).toString() === ed.document.uri.toString());
  const h = res && f ? hunkAt(res.hunks ?? [], f.path, line, 'old') : undefined;
  return h ? { editId: res!.editId, hunk: h } : undefined;
}

/** Accepts or rejects one hunk: by arguments (CodeLens), else the hunk at the cursor. */
async function settleHunk(how: 'accept' | 'reject', editId?: string, index?: number): Promise<void> {
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
    const files = (edits.get(editId)?.files ?? []).map((f) => f.uri);
    const dirty = dirtyUris(files);
    const res = await exec<{ applied: boolean; checkpointId?: string; reason?: string }>('cairn.acceptEdit', { editId, hunks: [index] });
    if (!res || !res.applied) {
      vscode.window.showErrorMessage(`Cairn: hunk ${index + 1} was not applied${res?.reason ? `: ${res.reason}` : '.'}`);
      return;
    }
    await saveFiles(files, dirty);
    if (res.checkpointId) checkpoints.push({ checkpointId: res.checkpointId, editId, files });
    answers.appendLine(`✓ accepted hunk ${index + 1} of edit ${editId}${res.checkpointId ? ` (checkpoint ${res.checkpointId})` : ''}`);
  } else {
    await exec('cairn.rejectEdit', { editId, hunks: [index] });
    answers.appendLine(`✗ rejected hunk ${index + 1} of edit ${editId}`);
  }
  const after = await fetchEdit(editId);
  if (!(after.hunks ?? []).some((h) => h.state === 'pending' || h.state === 'conflict')) {
    await closeDiffs(editId);
    const first = after.files[0]?.uri;
    if (first) await vscode.window.showTextDocument(vscode.Uri.parse(first), { preview: false });
  }
}

/**
 * Re-fetches an edit the server changed without a decision (editUpdated: the
 * user typed into its file): the diff's proposed side re-renders from the
 * current buffer plus the hunks carried onto it. Hunks that now overlap the
 * user's edits are named, with Redo and Reject.
 */
async function refreshEdit(editId: string): Promise<void> {
  const before = edits.get(editId)?.hunks;
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
async function redoEdit(editId: string): Promise<void> {
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
  if (active && edits.state(active) === 'pending') return active;
  const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
  if (tab && tab.input instanceof vscode.TabInputTextDiff) {
    const id = fromUri(tab.input.modified);
    if (id && edits.state(id) === 'pending') return id;
  }
  const pending = edits.pending();
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

async function settleEdit(arg: unknown, how: 'accept' | 'reject'): Promise<void> {
  const editId = await pickEdit(arg);
  if (!editId) return;
  const e = edits.get(editId);
  if (how === 'reject') {
    await exec('cairn.rejectEdit', { editId });
    edits.settle(editId, 'rejected');
    answers.appendLine(`✗ rejected edit ${editId}`);
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
    if (!after || !(after.hunks ?? []).some((h) => h.state === 'conflict')) edits.settle(editId, 'accepted');
    await saveFiles(files, dirty);
    if (res.checkpointId) checkpoints.push({ checkpointId: res.checkpointId, editId, files });
    answers.appendLine(`✓ accepted edit ${editId}${res.checkpointId ? ` (checkpoint ${res.checkpointId}; "Cairn: Undo Last Accepted Edit" restores)` : ''}`);
    await closeDiffs(editId);
    if (files[0]) await vscode.window.showTextDocument(vscode.Uri.parse(files[0]), { preview: false });
    vscode.window.setStatusBarMessage(`Cairn: applied edit ${editId}`, 5000);
  }
  try {
    await fetchEdit(editId);
  } catch {
    // An older server without hunks: the local state is all there is.
    const v = chat.edit(editId);
    if (v) chat.setEdit({ ...v, state: how === 'accept' ? 'accepted' : 'rejected' });
    chatView.update();
  }
  lensesChanged.fire();
  updateStatus();
}

async function undoLastEdit(): Promise<void> {
  const last = checkpoints[checkpoints.length - 1];
  if (!last) {
    vscode.window.showInformationMessage('Cairn: no accepted edit to undo in this session.');
    return;
  }
  const dirty = dirtyUris(last.files);
  const res = await exec<{ applied: boolean; restored?: string[]; alreadyUndone?: string[]; reason?: string }>('cairn.undo', { checkpointId: last.checkpointId });
  const why = res?.reason ?? '';
  if (res && !res.applied && (res.alreadyUndone?.length || /already undone/i.test(why))) {
    // The editor's own undo already put the text back; write it, so the disk is undone too.
    checkpoints.pop();
    await saveFiles(last.files); // the buffers hold exactly the text from before the accept
    answers.appendLine(`↶ edit ${last.editId} was already undone`);
    vscode.window.showInformationMessage('Cairn: already undone: the files are back at their pre-edit text.');
    return;
  }
  if (!res || !res.applied) {
    vscode.window.showErrorMessage(`Cairn: the undo was not applied${why ? `: ${why}` : '.'}`);
    return;
  }
  checkpoints.pop();
  await saveFiles(last.files, dirty);
  answers.appendLine(`↶ undid edit ${last.editId}${res.restored?.length ? `: restored ${res.restored.join(', ')}` : ''}${res.alreadyUndone?.length ? `; already undone: ${res.alreadyUndone.join(', ')}` : ''}`);
  if (last.files[0]) await vscode.window.showTextDocument(vscode.Uri.parse(last.files[0]), { preview: false });
  vscode.window.setStatusBarMessage('Cairn: restored the files', 5000);
}

// ---- runs ----

async function pickRun(list: { runId: string; question?: string; file?: string }[], title: string): Promise<string | undefined> {
  if (list.length === 0) return undefined;
  if (list.length === 1) return list[0].runId;
  const item = await vscode.window.showQuickPick(
    list.slice().reverse().map((r) => ({ label: r.question ?? r.runId, description: r.file, detail: r.runId, runId: r.runId })),
    { title },
  );
  return item?.runId;
}

async function cancelRun(arg?: unknown): Promise<void> {
  const runId = typeof arg === 'string' ? arg : await pickRun(runs.running(), 'Cancel which run?');
  if (!runId) {
    vscode.window.showInformationMessage('Cairn: no run is in progress.');
    return;
  }
  await exec('cairn.cancel', { runId });
}

async function resumeRun(arg?: unknown): Promise<void> {
  let runId = typeof arg === 'string' ? arg : await pickRun(runs.interrupted(), 'Resume which run?');
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
  const old = runs.get(runId);
  beginRun(res.runId, `resume ${runId}${old?.question ? `: ${old.question}` : ''}`, old?.file);
}

async function showContextReport(arg?: unknown): Promise<void> {
  const runId = typeof arg === 'string' ? arg : await pickRun(runs.all(), 'Context report of which run?');
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

// ---- approvals and diagnostics ----

async function showMessageRequest(params: ShowMessageRequestParams): Promise<MessageActionItem | null> {
  const actions = params.actions ?? [];
  if (isApproval(actions)) {
    const p = approvalPrompt(params.message);
    answers.appendLine(`⚖ approval asked: ${params.message.replace(/\s+/g, ' ')}`);
    // Deny is the first button, the modal's default (Enter); dismissing the
    // modal (Escape, its Cancel button) also denies.
    const ordered = denyFirst(actions);
    const choice = await vscode.window.showWarningMessage(p.message, { modal: true, detail: p.detail }, ...ordered);
    return approvalAnswer(choice, ordered);
  }
  const show = params.type === 1 ? vscode.window.showErrorMessage : params.type === 2 ? vscode.window.showWarningMessage : vscode.window.showInformationMessage;
  const choice = await show(params.message, ...actions);
  return choice ?? null;
}

function sendDiagnostics(uri: string): void {
  if (!client || client.state !== State.Running) return;
  const ds = vscode.languages.getDiagnostics(vscode.Uri.parse(uri)) as unknown as PlainDiagnostic[];
  client.sendNotification('cairn/didChangeDiagnostics', { uri, diagnostics: forwardable(ds) });
}

function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err && typeof err === 'object' && 'message' in err) return String((err as { message: unknown }).message);
  return String(err);
}
