// Approvals arrive as window/showMessageRequest with these three actions.
export const APPROVAL_ACTIONS: ReadonlySet<string> = new Set(['Allow once', 'Allow for session', 'Deny']);

export const DENY = 'Deny';

export function isApproval(actions: { title: string }[] | undefined): boolean {
  return !!actions && actions.length > 0 && actions.every((a) => APPROVAL_ACTIONS.has(a.title));
}

/**
 * Orders an approval's actions with Deny first: VS Code's modal makes the
 * first button the default one (Enter), so a stray Enter denies. The server
 * sends Deny first already; this holds for any server.
 */
export function denyFirst<T extends { title: string }>(actions: T[]): T[] {
  return [...actions.filter((a) => a.title === DENY), ...actions.filter((a) => a.title !== DENY)];
}

/**
 * The answer to send for the modal's choice: dismissing it (Escape, the
 * modal's own Cancel button) is Deny, never anything else.
 */
export function approvalAnswer<T extends { title: string }>(choice: T | undefined, actions: T[]): T | null {
  if (choice) return choice;
  return actions.find((a) => a.title === DENY) ?? null;
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

/** The structured detail the server sends beside an approval's message (protocol/README.md). */
export interface ApprovalDetail {
  runId: string;
  callId?: string;
  tool: string;
  risk: string;
  command?: string;
  commands?: { text: string; risk: string; reason?: string; via?: string; redirection?: boolean; whole?: boolean }[];
}

/**
 * The inline card's content for an approval request, or undefined when the
 * request lacks Cairn's detail (an older server: the modal shows it).
 */
export function inlineApproval(params: { message: string; actions?: { title: string }[]; cairn?: unknown }):
  { runId: string; callId?: string; tool: string; risk: string; message: string; command?: string; commands: NonNullable<ApprovalDetail['commands']>; actions: string[] } | undefined {
  const d = params.cairn as Partial<ApprovalDetail> | undefined;
  if (!d || typeof d !== 'object' || typeof d.runId !== 'string' || !d.runId) return undefined;
  const commands = Array.isArray(d.commands)
    ? d.commands.filter((c) => c && typeof c.text === 'string' && typeof c.risk === 'string')
    : [];
  return {
    runId: d.runId,
    callId: typeof d.callId === 'string' ? d.callId : undefined,
    tool: typeof d.tool === 'string' ? d.tool : 'tool',
    risk: typeof d.risk === 'string' ? d.risk : 'unknown',
    message: params.message,
    command: typeof d.command === 'string' && d.command ? d.command : undefined,
    commands,
    actions: denyFirst(params.actions ?? []).map((a) => a.title),
  };
}

/** Whether an approval's default (focused) answer must be Deny: anything above read. */
export function denyByDefault(risk: string): boolean {
  return risk !== 'read';
}
