// The Cairn chat view: a webview view in Cairn's own view container (the
// activity bar; movable to the secondary side bar) that shows the current
// thread (questions, streamed Markdown answers, tool calls, approvals, edit
// cards) and takes follow-ups. State lives in the extension (ChatModel); the
// page only renders it and posts the user's actions back.
import * as crypto from 'crypto';
import * as vscode from 'vscode';
import { ChatModel } from './logic/chat';
import { chatCSP } from './logic/csp';

export type ChatAction =
  | { type: 'ready' }
  | { type: 'ask'; question: string; threadId?: string }
  | { type: 'cancel'; runId: string }
  | { type: 'resume'; runId: string }
  | { type: 'review' | 'accept' | 'reject' | 'redo'; editId: string }
  | { type: 'selectThread'; threadId: string }
  | { type: 'newThread' }
  | { type: 'listThreads' }
  | { type: 'copyCode' | 'insertCode'; code: string }
  | { type: 'retry'; runId: string }
  | { type: 'openSettings'; setting: string }
  | { type: 'approve'; id: string; title: string }
  | { type: 'openContext'; path: string; startLine?: number; endLine?: number }
  | { type: 'contextReport'; runId: string }
  | { type: 'applyCode'; code: string; runId?: string }
  | { type: 'setApiKey' }
  | { type: 'selectModel'; model: string }
  | { type: 'listModels' };

export class ChatViewProvider implements vscode.WebviewViewProvider {
  static readonly viewType = 'cairn.chat';
  private view?: vscode.WebviewView;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly model: ChatModel,
    private readonly onAction: (a: ChatAction) => Promise<void>,
  ) {}

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    view.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'dist')] };
    view.webview.html = this.html(view.webview);
    view.webview.onDidReceiveMessage(async (a: ChatAction) => {
      try {
        if (a.type === 'ready') this.post();
        else await this.onAction(a);
      } catch (err) {
        vscode.window.showErrorMessage(`Cairn: ${err instanceof Error ? err.message : String((err as any)?.message ?? err)}`);
      }
    });
    view.onDidChangeVisibility(() => { if (view.visible) this.post(); });
    view.onDidDispose(() => { this.view = undefined; });
  }

  /** Whether the chat is on screen (then a failed run is told there, not in a toast). */
  visible(): boolean { return !!this.view?.visible; }

  /** Shows the view (opening the panel) without taking focus from the editor unless asked. */
  async reveal(focusInput = false): Promise<void> {
    if (!this.view) {
      await vscode.commands.executeCommand(`${ChatViewProvider.viewType}.focus`);
      if (!focusInput) await vscode.commands.executeCommand('workbench.action.focusActiveEditorGroup');
    } else {
      this.view.show(!focusInput);
    }
    if (focusInput) this.view?.webview.postMessage({ type: 'focusInput' });
  }

  /** Re-renders soon: streamed deltas arrive many per second, the page redraws at most every 50 ms. */
  update(): void {
    if (this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.post();
    }, 50);
  }

  private post(): void {
    this.view?.webview.postMessage({ type: 'state', state: this.model.view() });
  }

  private html(webview: vscode.Webview): string {
    const nonce = crypto.randomBytes(16).toString('base64');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'dist', 'webview.js'));
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${chatCSP(webview.cspSource, nonce)}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<style nonce="${nonce}">${CSS}</style>
</head>
<body>
<div id="app">
  <details id="thread-box">
    <summary>Threads (<span id="thread-count">0</span>)</summary>
    <div class="thread-tools">
      <button type="button" id="new-thread" title="Start a new thread with the next question">New thread</button>
      <button type="button" id="refresh" title="List the server's threads (cairn.listThreads)">Refresh</button>
    </div>
    <div id="threads" role="listbox" aria-label="Threads"></div>
  </details>
  <div id="model-bar">
    <label for="model">Model</label>
    <select id="model" title="The model Cairn asks (cairn.model.name, set for this workspace)"></select>
  </div>
  <main id="conversation" tabindex="0" aria-label="Conversation"></main>
  <form id="ask">
    <label for="input" class="sr-only">Question</label>
    <textarea id="input" rows="2" aria-label="Follow-up question"></textarea>
    <button type="button" id="send" class="primary" title="Send (Enter)">Send</button>
  </form>
</div>
<script nonce="${nonce}" src="${script}"></script>
</body>
</html>`;
  }
}

const CSS = `
:root { color-scheme: light dark; }
body { margin: 0; padding: 0; color: var(--vscode-foreground); background: var(--vscode-sideBar-background, var(--vscode-panel-background));
  font-family: var(--vscode-font-family); font-size: var(--vscode-font-size); }
#app { display: flex; flex-direction: column; height: 100vh; }
#thread-box { border-bottom: 1px solid var(--vscode-panel-border, transparent); padding: 4px 8px; }
#thread-box summary { cursor: pointer; color: var(--vscode-descriptionForeground); }
.thread-tools { display: flex; gap: 6px; margin: 6px 0; }
#threads { display: flex; flex-direction: column; gap: 2px; max-height: 30vh; overflow: auto; }
.thread { display: flex; justify-content: space-between; text-align: left; background: transparent; color: var(--vscode-foreground); border: 1px solid transparent; padding: 3px 6px; }
.thread.current { background: var(--vscode-list-activeSelectionBackground); color: var(--vscode-list-activeSelectionForeground); }
.thread:hover { background: var(--vscode-list-hoverBackground); }
.t-count { color: var(--vscode-descriptionForeground); margin-left: 8px; }
#conversation { flex: 1; overflow: auto; padding: 8px 12px; }
#model-bar { display: flex; align-items: center; gap: 6px; padding: 3px 8px; border-bottom: 1px solid var(--vscode-panel-border, transparent); color: var(--vscode-descriptionForeground); }
#model { flex: 1; min-width: 0; color: var(--vscode-dropdown-foreground); background: var(--vscode-dropdown-background); border: 1px solid var(--vscode-dropdown-border, transparent); padding: 2px 4px; font-family: inherit; font-size: inherit; }
.plan-card { margin: 6px 0; }
.plan { margin: 2px 0 0; padding-left: 1.2em; list-style: none; }
.plan li.plan-completed { opacity: 0.7; text-decoration: line-through; }
.plan li.plan-in_progress { font-weight: 600; }
.approval { border: 1px solid var(--vscode-editorWarning-foreground, var(--vscode-panel-border)); border-radius: 4px; padding: 6px 8px; margin: 6px 0; background: var(--vscode-editorWidget-background); }
.approval.answered, .approval.cancelled { border-color: var(--vscode-panel-border, var(--vscode-widget-border)); }
.ap-head { font-weight: 600; }
.ap-line { font-family: var(--vscode-editor-font-family); margin: 4px 0; white-space: pre-wrap; word-break: break-all; }
.ap-commands { margin: 4px 0; padding-left: 4px; list-style: none; font-family: var(--vscode-editor-font-family); font-size: 0.92em; }
.ap-commands li { margin: 2px 0; white-space: pre-wrap; word-break: break-all; }
.risk { display: inline-block; min-width: 5.5em; font-family: var(--vscode-font-family); font-size: 0.85em; padding: 0 4px; margin-right: 6px; border-radius: 3px; text-align: center;
  background: var(--vscode-badge-background); color: var(--vscode-badge-foreground); }
.risk.r-read { background: transparent; color: var(--vscode-descriptionForeground); border: 1px solid var(--vscode-panel-border, currentColor); }
.risk.r-destructive, .risk.r-install, .risk.r-network { background: var(--vscode-inputValidation-errorBackground, var(--vscode-badge-background)); color: var(--vscode-errorForeground); }
.ap-why { color: var(--vscode-descriptionForeground); }
.ap-outcome { margin-top: 4px; font-style: italic; }
.ap-outcome.good { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
.ap-outcome.bad { color: var(--vscode-errorForeground); }
.run-meta { color: var(--vscode-descriptionForeground); font-size: 0.9em; margin-top: 4px; display: flex; flex-wrap: wrap; gap: 4px 10px; align-items: baseline; }
.context-files { display: flex; flex-wrap: wrap; gap: 2px 8px; align-items: baseline; }
.run-meta a, .context-files a { color: var(--vscode-textLink-foreground); cursor: pointer; text-decoration: none; font-family: var(--vscode-editor-font-family); }
.run-meta a:hover, .context-files a:hover { text-decoration: underline; }
#conversation:focus { outline: 1px solid var(--vscode-focusBorder); outline-offset: -1px; }
.run { margin-bottom: 14px; }
.question { background: var(--vscode-textBlockQuote-background, var(--vscode-editor-inactiveSelectionBackground)); border-left: 3px solid var(--vscode-textLink-foreground); padding: 6px 8px; border-radius: 2px; }
.q-text { font-weight: 600; white-space: pre-wrap; }
.where { color: var(--vscode-descriptionForeground); font-family: var(--vscode-editor-font-family); font-size: 0.9em; margin-top: 2px; }
.answer { padding: 4px 2px; }
.md p { margin: 6px 0; }
.md code { font-family: var(--vscode-editor-font-family); background: var(--vscode-textCodeBlock-background); padding: 0 3px; border-radius: 3px; }
.md pre { background: var(--vscode-textCodeBlock-background); padding: 6px 8px; overflow: auto; border-radius: 3px; tab-size: 4; -moz-tab-size: 4; }
.md pre code { background: none; padding: 0; }
.codeblock { margin: 6px 0; }
.codeblock pre { margin: 0; border-top-left-radius: 0; border-top-right-radius: 0; }
.code-tools { display: flex; align-items: center; gap: 4px; padding: 2px 4px 2px 8px; background: var(--vscode-editorGroupHeader-tabsBackground, var(--vscode-textCodeBlock-background));
  border-radius: 3px 3px 0 0; font-size: 0.85em; }
.code-lang { flex: 1; color: var(--vscode-descriptionForeground); font-family: var(--vscode-editor-font-family); }
.code-tools button { padding: 1px 6px; }
.hljs-keyword, .hljs-meta .hljs-keyword, .hljs-selector-tag, .hljs-doctag { color: var(--vscode-symbolIcon-keywordForeground, var(--vscode-textLink-foreground)); }
.hljs-string, .hljs-regexp, .hljs-addition, .hljs-attribute { color: var(--vscode-debugTokenExpression-string, var(--vscode-charts-orange)); }
.hljs-number, .hljs-literal, .hljs-symbol { color: var(--vscode-debugTokenExpression-number, var(--vscode-charts-green)); }
.hljs-comment, .hljs-quote { color: var(--vscode-descriptionForeground); font-style: italic; }
.hljs-title, .hljs-section, .hljs-name { color: var(--vscode-symbolIcon-functionForeground, var(--vscode-charts-yellow)); }
.hljs-type, .hljs-built_in, .hljs-class .hljs-title, .hljs-title.class_ { color: var(--vscode-symbolIcon-classForeground, var(--vscode-charts-blue)); }
.hljs-variable, .hljs-params, .hljs-attr, .hljs-property { color: var(--vscode-symbolIcon-variableForeground, var(--vscode-foreground)); }
.hljs-deletion { color: var(--vscode-errorForeground); }
.hljs-meta { color: var(--vscode-descriptionForeground); }
.hljs-emphasis { font-style: italic; }
.hljs-strong { font-weight: bold; }
.md a { color: var(--vscode-textLink-foreground); }
details.tool { margin: 3px 0; font-family: var(--vscode-editor-font-family); font-size: 0.92em; }
details.tool summary { cursor: pointer; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; color: var(--vscode-descriptionForeground); }
details.tool summary:focus-visible, button:focus-visible, .thread:focus-visible { outline: 1px solid var(--vscode-focusBorder); }
.detail { margin: 4px 0 4px 18px; }
.detail pre { margin: 2px 0 6px; white-space: pre-wrap; background: var(--vscode-textCodeBlock-background); padding: 4px 6px; max-height: 220px; overflow: auto; }
.label { color: var(--vscode-descriptionForeground); font-size: 0.85em; }
.mark.good, .decision.good { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
.mark.bad, .decision.bad { color: var(--vscode-errorForeground); }
.decision { margin-left: 6px; font-style: italic; }
.edit { border: 1px solid var(--vscode-panel-border, var(--vscode-widget-border)); border-radius: 4px; padding: 6px 8px; margin: 6px 0; background: var(--vscode-editorWidget-background); }
.edit-head .files { font-family: var(--vscode-editor-font-family); }
.edit .state { color: var(--vscode-descriptionForeground); }
.edit.accepted .state { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
.edit.rejected .state { color: var(--vscode-errorForeground); }
.hunks { margin: 4px 0; padding-left: 18px; font-family: var(--vscode-editor-font-family); font-size: 0.9em; }
.hunks .accepted { color: var(--vscode-testing-iconPassed, var(--vscode-charts-green)); }
.hunks .rejected-count, .hunks .undone, .edit.undone .state { color: var(--vscode-descriptionForeground); }
.hunks .undone { text-decoration: line-through; }
.actions { display: flex; gap: 6px; margin-top: 6px; }
button { font-family: inherit; font-size: inherit; cursor: pointer; border: 1px solid var(--vscode-button-border, transparent); padding: 3px 10px; border-radius: 2px;
  background: var(--vscode-button-secondaryBackground); color: var(--vscode-button-secondaryForeground); }
button:hover { background: var(--vscode-button-secondaryHoverBackground); }
button.primary { background: var(--vscode-button-background); color: var(--vscode-button-foreground); }
button.primary:hover { background: var(--vscode-button-hoverBackground); }
.run-status { color: var(--vscode-descriptionForeground); font-size: 0.9em; display: flex; align-items: center; gap: 6px; }
.run-status.failed, .run-status.interrupted { color: var(--vscode-errorForeground); flex-wrap: wrap; }
.run-status .error-detail { flex-basis: 100%; color: var(--vscode-descriptionForeground); font-family: var(--vscode-editor-font-family); font-size: 0.9em; }
.run-status .error-detail pre { white-space: pre-wrap; margin: 2px 0; }
.spinner { width: 10px; height: 10px; border: 2px solid var(--vscode-descriptionForeground); border-top-color: transparent; border-radius: 50%; animation: spin 1s linear infinite; display: inline-block; }
@keyframes spin { to { transform: rotate(360deg); } }
@media (prefers-reduced-motion: reduce) { .spinner { animation: none; } }
.muted { color: var(--vscode-descriptionForeground); }
#ask { display: flex; gap: 6px; padding: 6px 8px; border-top: 1px solid var(--vscode-panel-border, transparent); }
#input { flex: 1; resize: vertical; font-family: inherit; font-size: inherit; color: var(--vscode-input-foreground); background: var(--vscode-input-background);
  border: 1px solid var(--vscode-input-border, transparent); padding: 4px 6px; }
#input:focus { outline: 1px solid var(--vscode-focusBorder); }
.sr-only { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); }
`;
