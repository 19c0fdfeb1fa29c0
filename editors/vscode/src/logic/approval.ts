// Approvals arrive as window/showMessageRequest with these three actions.
export const APPROVAL_ACTIONS: ReadonlySet<string> = new Set(['Allow once', 'Allow for session', 'Deny']);

export function isApproval(actions: { title: string }[] | undefined): boolean {
  return !!actions && actions.length > 0 && actions.every((a) => APPROVAL_ACTIONS.has(a.title));
}

/**
 * Splits the server's message for a modal: the first line is the title, the
 * rest (the exact command, packages or file) the detail shown under it.
 */
export function approvalPrompt(message: string): { message: string; detail?: string } {
  const [first, ...rest] = message.split('\n');
  const detail = rest.join('\n').trim();
  return detail ? { message: first, detail } : { message: first };
}
