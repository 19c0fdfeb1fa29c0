// Forwards every language server's diagnostics of a file to Cairn
// (cairn/didChangeDiagnostics), debounced per file.
import * as vscode from 'vscode';
import { runningClient } from './client';
import { KeyedDebouncer } from './logic/debounce';
import { forwardable, PlainDiagnostic } from './logic/diagnostics';
import { app } from './state';

function sendDiagnostics(uri: string): void {
  const client = runningClient();
  if (!client) return;
  const ds = vscode.languages.getDiagnostics(vscode.Uri.parse(uri)) as unknown as PlainDiagnostic[];
  client.sendNotification('cairn/didChangeDiagnostics', { uri, diagnostics: forwardable(ds) });
}

export function registerDiagnostics(ctx: vscode.ExtensionContext): void {
  const delay = () => vscode.workspace.getConfiguration('cairn').get<number>('diagnostics.debounceMs', 300);
  app.diagDebouncer = new KeyedDebouncer<string>(delay(), (uri) => sendDiagnostics(uri));
  ctx.subscriptions.push(
    { dispose: () => app.diagDebouncer.dispose() },
    vscode.languages.onDidChangeDiagnostics((e) => {
      for (const uri of e.uris) if (uri.scheme === 'file') app.diagDebouncer.trigger(uri.toString());
    }),
  );
}

/** Diagnostics already present when the server starts. */
export function forwardAllDiagnostics(): void {
  for (const [uri] of vscode.languages.getDiagnostics()) {
    if (uri.scheme === 'file') app.diagDebouncer.trigger(uri.toString());
  }
}
