// What the extension's parts share: one instance, filled in at activation.
import * as vscode from 'vscode';
import type { LanguageClient } from 'vscode-languageclient/node';
import type { ChatViewProvider } from './chatView';
import { ChatModel } from './logic/chat';
import type { KeyedDebouncer } from './logic/debounce';
import { EditStore } from './logic/proposed';
import { RunTracker, Transcript } from './logic/runs';

export interface Checkpoint { checkpointId: string; editId: string; files: string[] }

class Shared {
  /** The language client while one exists (running or not: check its state). */
  client: LanguageClient | undefined;
  answers!: vscode.OutputChannel;
  status!: vscode.StatusBarItem;
  chatView!: ChatViewProvider;
  diagDebouncer!: KeyedDebouncer<string>;
  /** The workspace's memory of accepted/declined suggestions of machine settings. */
  workspaceMemory: vscode.Memento | undefined;
  readonly runs = new RunTracker();
  readonly transcript = new Transcript();
  readonly edits = new EditStore();
  /** Accepted edits, newest last: what "Undo Last Accepted Edit" takes back. */
  readonly checkpoints: Checkpoint[] = [];
  readonly chat = new ChatModel();
  /**
   * The file the user last had in a text editor: what a chat question is
   * about when the focus is elsewhere (the chat, Settings, a terminal).
   */
  lastFile: vscode.Uri | undefined;
  readonly proposedChanged = new vscode.EventEmitter<vscode.Uri>();
  readonly lensesChanged = new vscode.EventEmitter<void>();
}

export const app = new Shared();

export function errorText(err: unknown): string {
  if (err instanceof Error) return err.message;
  if (err && typeof err === 'object' && 'message' in err) return String((err as { message: unknown }).message);
  return String(err);
}
