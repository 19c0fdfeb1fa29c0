// window/showMessageRequest: approvals of risky tool calls inline in the chat
// (a card in the run's thread, Deny focused for anything above read; it
// waits for the user without blocking the editor); the server's other
// questions as messages. An approval without Cairn's detail (an older
// server) falls back to a modal, Deny first (the default button).
import * as vscode from 'vscode';
import { CancellationToken, MessageActionItem, ShowMessageRequestParams } from 'vscode-languageclient/node';
import { approvalAnswer, approvalPrompt, DENY, denyFirst, inlineApproval, isApproval } from './logic/approval';
import { app } from './state';

/** Pending inline approvals: id → what answers the server's request. */
const pending = new Map<string, (title: string | null) => void>();
let nextId = 1;

export async function showMessageRequest(params: ShowMessageRequestParams, token?: CancellationToken): Promise<MessageActionItem | null> {
  const actions = params.actions ?? [];
  if (isApproval(actions)) {
    app.answers.appendLine(`⚖ approval asked: ${params.message.replace(/\s+/g, ' ')}`);
    const inline = inlineApproval(params as ShowMessageRequestParams & { cairn?: unknown });
    // Inline only where the chat shows the run (it has its question); else the modal.
    if (inline && app.chat.run(inline.runId)?.question) return askInline(inline, actions, token);
    const p = approvalPrompt(params.message);
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

function askInline(a: NonNullable<ReturnType<typeof inlineApproval>>, actions: MessageActionItem[], token?: CancellationToken): Promise<MessageActionItem | null> {
  const id = `approval-${nextId++}`;
  const { runId, ...card } = a;
  app.chat.addApproval(runId, { id, ...card });
  app.chatView.update();
  // The chat shows the card; it does not take the focus from the editor.
  app.chatView.reveal(false).catch(() => undefined);
  return new Promise((resolve) => {
    const done = (title: string | null) => {
      pending.delete(id);
      const chosen = title ? actions.find((x) => x.title === title) : undefined;
      // No answer (run cancelled, request withdrawn) is Deny, never anything else.
      resolve(chosen ?? actions.find((x) => x.title === DENY) ?? null);
    };
    pending.set(id, done);
    token?.onCancellationRequested(() => {
      app.chat.cancelApprovals({ id });
      app.chatView.update();
      done(null);
    });
  });
}

/** The user's answer from the chat's card. */
export function answerApproval(id: string, title: string): void {
  const done = pending.get(id);
  if (!done || !app.chat.answerApproval(id, title)) return;
  app.answers.appendLine(`⚖ ${title}`);
  app.chatView.update();
  done(title);
}

/** A run ended: its approvals still pending are denied (the server stopped waiting). */
export function endApprovals(runId: string): void {
  for (const id of app.chat.cancelApprovals({ runId })) pending.get(id)?.(null);
}
