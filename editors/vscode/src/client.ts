// The server's lifecycle: start `cairn serve` (one per window, for its
// workspace folders), stop, restart, send commands and settings.
import * as fs from 'fs';
import * as os from 'os';
import * as vscode from 'vscode';
import {
  CancellationToken,
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
import { keyEnv } from './logic/apiKey';
import { MACHINE_KEYS, memoryKey, resolveMachineSetting, suggestionPrompt } from './logic/machineSettings';
import { RunEvent } from './logic/runs';
import { resolveServerPath } from './logic/serverPath';
import { settings, settingValue } from './settings';
import { app, errorText } from './state';
import { updateStatus } from './status';

/** What the rest of the extension does with the server's messages. */
export interface ServerHooks {
  onRunEvent(ev: RunEvent): void;
  onShowMessageRequest(params: ShowMessageRequestParams, token: CancellationToken): Promise<MessageActionItem | null>;
  /** The server runs: forward what it should know already (diagnostics). */
  onRunning(): void;
}

/** Declares a Cairn client: the server then streams cairn/runEvent instead of showDocument. */
const cairnClientFeature: StaticFeature = {
  fillClientCapabilities(caps) {
    // approvalDetail: approvals carry their structured detail, shown inline in the chat.
    caps.experimental = { ...(caps.experimental as object | undefined), cairn: { runEvents: true, approvalDetail: true } };
  },
  initialize() { /* nothing to set up */ },
  getState: () => ({ kind: 'static' }),
  clear() { /* nothing to release */ },
};

/** Suggestions asked about in this window (a dismissed question is not repeated). */
const suggestionsAsked = new Set<string>();

/**
 * Asks, once per workspace and value, about each workspace value of a
 * machine setting; an accepted one is sent to the server (or, for the server
 * path, offered as a restart).
 */
export async function askWorkspaceSuggestions(): Promise<void> {
  const memory = app.workspaceMemory;
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
  const client = app.client;
  if (changed && client && client.state === State.Running) {
    client.sendNotification(DidChangeConfigurationNotification.type, { settings: { cairn: settings() } });
    updateStatus();
  }
}

export async function startClient(ctx: vscode.ExtensionContext, hooks: ServerHooks): Promise<void> {
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
    // Keys set with "Cairn: Set API Key" reach the server only here, in its environment.
    options: { env: { ...process.env, ...(await keyEnv((k) => ctx.secrets.get(k))) } },
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: 'file' }],
    initializationOptions: settings(),
    outputChannelName: 'Cairn Server',
  };
  const c = new LanguageClient('cairn', 'Cairn', serverOptions, clientOptions);
  c.registerFeature(cairnClientFeature);
  app.client = c;
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
    c.onNotification('cairn/runEvent', (ev: RunEvent) => hooks.onRunEvent(ev)),
    // Approvals: a card in the chat (a modal for a server without Cairn's
    // detail); the token is cancelled when the server stops waiting.
    c.onRequest(ShowMessageRequest.type, (params, token) => hooks.onShowMessageRequest(params, token)),
  );
  hooks.onRunning();
  updateStatus();
}

export async function stopClient(): Promise<void> {
  const c = app.client;
  app.client = undefined;
  if (c) {
    try {
      await c.stop();
    } catch {
      /* already gone */
    }
  }
}

/** The client when its server runs. */
export function runningClient(): LanguageClient | undefined {
  const c = app.client;
  return c && c.state === State.Running ? c : undefined;
}

function running(): LanguageClient {
  const c = runningClient();
  if (!c) {
    throw new Error('the Cairn server is not running (see the "Cairn Server" output, or run "Cairn: Restart Server").');
  }
  return c;
}

/** Calls a server command (workspace/executeCommand with one argument). */
export async function exec<T>(command: string, arg: unknown): Promise<T> {
  return (await running().sendRequest(ExecuteCommandRequest.type, { command, arguments: [arg] })) as T;
}

export function onConfigChange(e: vscode.ConfigurationChangeEvent): void {
  if (!e.affectsConfiguration('cairn')) return;
  app.diagDebouncer.setDelay(vscode.workspace.getConfiguration('cairn').get<number>('diagnostics.debounceMs', 300));
  if (e.affectsConfiguration('cairn.serverPath')) {
    vscode.window.showInformationMessage('Cairn: the server path changed.', 'Restart Server').then((c) => {
      if (c) vscode.commands.executeCommand('cairn.restartServer');
    });
  }
  runningClient()?.sendNotification(DidChangeConfigurationNotification.type, { settings: { cairn: settings() } });
  updateStatus();
  if (e.affectsConfiguration('cairn.model')) {
    // The chat's model picker follows the setting (the server may list other models for it).
    void vscode.commands.executeCommand('cairn.refreshModels');
  }
  void askWorkspaceSuggestions();
}
