// The status bar item: the server's state, a run at work (click: cancel), or
// edits waiting for review.
import * as vscode from 'vscode';
import { modelLabel } from './logic/settings';
import { settings } from './settings';
import { app } from './state';

export function updateStatus(state?: 'starting' | 'stopped' | 'missing'): void {
  const status = app.status;
  // Shows the hunk actions on a diff editor's title bar while an edit waits for review.
  vscode.commands.executeCommand('setContext', 'cairn.reviewing', app.edits.pending().length > 0);
  const label = modelLabel(settings());
  const active = app.runs.running();
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
    const pending = app.edits.pending().length;
    status.text = `$(comment-discussion) Cairn: ${label}${pending ? ` · ${pending} edit${pending > 1 ? 's' : ''} to review` : ''}`;
    status.tooltip = 'Cairn: show the answer view';
    status.command = 'cairn.showOutput';
  }
  status.show();
}
