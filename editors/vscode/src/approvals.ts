// window/showMessageRequest: approvals of risky tool calls in a modal, Deny
// first (the default button); the server's other questions as messages.
import * as vscode from 'vscode';
import { MessageActionItem, ShowMessageRequestParams } from 'vscode-languageclient/node';
import { approvalAnswer, approvalPrompt, denyFirst, isApproval } from './logic/approval';
import { app } from './state';

export async function showMessageRequest(params: ShowMessageRequestParams): Promise<MessageActionItem | null> {
  const actions = params.actions ?? [];
  if (isApproval(actions)) {
    const p = approvalPrompt(params.message);
    app.answers.appendLine(`⚖ approval asked: ${params.message.replace(/\s+/g, ' ')}`);
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
