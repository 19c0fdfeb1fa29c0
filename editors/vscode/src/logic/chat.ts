// The chat view's model: threads, their runs, and each run's items (streamed
// text, tool calls with their results and approvals, proposed edits), built
// from cairn/runEvent. Pure: the webview renders what view() returns.
import { ContextItem, RunEvent, summarizeInput, TERMINAL, Usage } from './runs';

/** Adds b to a thread's total; cost stays known only while every part has one. */
function addUsage(a: Usage | undefined, b: Usage): Usage {
  if (!a) return { ...b };
  const cost = typeof a.costUSD === 'number' && typeof b.costUSD === 'number' ? a.costUSD + b.costUSD : a.costUSD ?? b.costUSD;
  return {
    inputTokens: a.inputTokens + b.inputTokens, outputTokens: a.outputTokens + b.outputTokens,
    cachedInputTokens: (a.cachedInputTokens ?? 0) + (b.cachedInputTokens ?? 0),
    ...(cost !== undefined ? { costUSD: cost } : {}),
  };
}

export interface ToolItem {
  kind: 'tool';
  callId: string;
  tool: string;
  /** One line: the tool and a short form of its input. */
  title: string;
  /** The whole input, pretty-printed, for the expandable detail. */
  input: string;
  ok?: boolean;
  summary?: string;
  decision?: string;
}
export interface TextItem { kind: 'text'; text: string }
export interface EditItem { kind: 'edit'; editId: string }
/** One command of an approval's line, with its own risk (the server's window/showMessageRequest `cairn.commands`). */
export interface ApprovalCommand { text: string; risk: string; reason?: string; via?: string; redirection?: boolean; whole?: boolean }
/**
 * An approval asked inline in the run's thread. pending: the server waits
 * for the answer; answered: the user chose `answer`; cancelled: the run
 * ended (or the server withdrew the request) before an answer: denied.
 */
export interface ApprovalItem {
  kind: 'approval';
  id: string;
  callId?: string;
  tool: string;
  risk: string;
  /** The server's whole message: what the modal would have shown. */
  message: string;
  command?: string;
  commands: ApprovalCommand[];
  /** The actions offered, Deny first. */
  actions: string[];
  state: 'pending' | 'answered' | 'cancelled';
  answer?: string;
}
/** One step of the agent's plan (the `plan` event, from its update_plan tool). */
export interface PlanEntry { content: string; status: string; priority?: string }
/** The run's plan: one per run, replaced by each `plan` event where it first appeared. */
export interface PlanItem { kind: 'plan'; entries: PlanEntry[] }
export type Item = TextItem | ToolItem | EditItem | ApprovalItem | PlanItem;

/**
 * conflict: every undecided hunk overlaps the user's own edits (redo or
 * reject them); undone: every accepted hunk was undone since.
 */
export type EditState = 'pending' | 'accepted' | 'rejected' | 'partial' | 'conflict' | 'undone';
export interface HunkView { index: number; path: string; startLine: number; endLine: number; state: string; undone?: boolean }
export interface EditView { editId: string; state: EditState; files: string[]; hunks: HunkView[]; checkpointId?: string }

export interface ChatRun {
  runId: string;
  threadId?: string;
  question: string;
  /** "path:line-line", for the header. */
  where?: string;
  uri?: string;
  range?: unknown;
  status: 'running' | 'finished' | 'failed' | 'cancelled' | 'interrupted';
  items: Item[];
  usage?: Usage;
  /** The files and lines of the prompt (the last `context` event). */
  context?: ContextItem[];
  /** Index sources not ready when the question went ahead (finished). */
  notReady?: string[];
  error?: string;
  /** The failed event's error class (auth, network, …), for a human sentence. */
  errorClass?: string;
  lastSeq: number;
}

export interface ThreadSummary {
  threadId: string; title: string; runs: string[]; updated?: string;
  /** The thread's usage: the server's total (cairn.listThreads) plus the runs finished here since. */
  usage?: Usage;
  /** Runs whose usage is in `usage` (so a run is never counted twice). */
  counted?: string[];
}

export interface ViewState {
  threads: { threadId: string; title: string; runs: number; updated?: string; current: boolean; usage?: Usage }[];
  current?: string;
  /** Runs of the current thread the server reported but this window never saw. */
  unseen: number;
  runs: ChatRun[];
  edits: Record<string, EditView>;
  /** The model picker: the current model and the choices (cairn.models). */
  models?: { current: string; available: string[] };
}

export const DECISION_TEXT: Record<string, string> = {
  allow_once: 'allowed once',
  allow_session: 'allowed for the session',
  deny: 'denied',
  policy_allow: 'allowed by policy',
  policy_deny: 'denied by policy',
};

function pretty(input: unknown): string {
  if (input === undefined || input === null) return '';
  if (typeof input === 'string') return input;
  try {
    return JSON.stringify(input, null, 2);
  } catch {
    return String(input);
  }
}

/** A one-line label for a tool call: the most telling input field, else the JSON. */
export function toolTitle(tool: string, input: unknown): string {
  if (input && typeof input === 'object') {
    const o = input as Record<string, unknown>;
    for (const k of ['command', 'path', 'query', 'glob']) {
      if (typeof o[k] === 'string' && o[k]) return `${tool} ${summarizeInput(o[k], 80)}`;
    }
  }
  return `${tool} ${summarizeInput(input, 80)}`.trimEnd();
}

/** The thread a run belongs to, and the chat view's state. */
export class ChatModel {
  private runs = new Map<string, ChatRun>();
  private threads = new Map<string, ThreadSummary>();
  private threadOrder: string[] = [];
  private editViews = new Map<string, EditView>();
  current?: string;

  run(runId: string): ChatRun | undefined { return this.runs.get(runId); }

  private ensure(runId: string): ChatRun {
    let r = this.runs.get(runId);
    if (!r) {
      r = { runId, question: '', status: 'running', items: [], lastSeq: 0 };
      this.runs.set(runId, r);
    }
    return r;
  }

  private addToThread(threadId: string, runId: string, title: string): void {
    let t = this.threads.get(threadId);
    if (!t) {
      t = { threadId, title: title || threadId, runs: [] };
      this.threads.set(threadId, t);
    }
    if (!t.runs.includes(runId)) t.runs.push(runId);
    if (!t.title || t.title === threadId) t.title = title || t.title;
    this.threadOrder = [threadId, ...this.threadOrder.filter((id) => id !== threadId)];
  }

  /**
   * Registers a run with what is known of it (from cairn.ask's answer or a
   * `started` event); later calls fill in what earlier ones lacked. The run's
   * thread becomes the current one.
   */
  begin(runId: string, meta: { threadId?: string; question?: string; where?: string; uri?: string; range?: unknown }): ChatRun {
    const r = this.ensure(runId);
    if (meta.question && !r.question) r.question = meta.question;
    if (meta.where && !r.where) r.where = meta.where;
    if (meta.uri && !r.uri) r.uri = meta.uri;
    if (meta.range && !r.range) r.range = meta.range;
    if (meta.threadId) r.threadId = meta.threadId;
    if (r.threadId) {
      this.addToThread(r.threadId, runId, r.question);
      this.current = r.threadId;
    }
    return r;
  }

  /** Applies one event; false for a duplicate or stale one. */
  apply(ev: RunEvent & Record<string, unknown>): boolean {
    if (!ev || typeof ev.runId !== 'string') return false;
    const r = this.ensure(ev.runId);
    if (typeof ev.seq === 'number') {
      if (ev.seq <= r.lastSeq) return false;
      r.lastSeq = ev.seq;
    }
    const last = r.items[r.items.length - 1];
    switch (ev.kind) {
      case 'started':
        r.status = 'running';
        break;
      case 'text':
        if (last && last.kind === 'text') last.text += ev.delta ?? '';
        else if (ev.delta) r.items.push({ kind: 'text', text: ev.delta });
        break;
      case 'toolCall':
        // The plan tool shows as the plan itself (the `plan` event), not as a call.
        if (ev.tool === 'update_plan') break;
        r.items.push({
          kind: 'tool', callId: ev.callId ?? '', tool: ev.tool ?? 'tool',
          title: toolTitle(ev.tool ?? 'tool', ev.input), input: pretty(ev.input),
        });
        break;
      case 'toolResult': {
        const t = this.tool(r, ev.callId);
        if (t) {
          t.ok = ev.ok !== false;
          t.summary = ev.summary;
        }
        break;
      }
      case 'approval': {
        const t = this.tool(r, ev.callId);
        if (t) t.decision = ev.decision;
        break;
      }
      case 'editProposed':
        if (ev.editId && !r.items.some((i) => i.kind === 'edit' && i.editId === ev.editId)) {
          r.items.push({ kind: 'edit', editId: ev.editId });
          if (!this.editViews.has(ev.editId)) this.editViews.set(ev.editId, { editId: ev.editId, state: 'pending', files: [], hunks: [] });
        }
        break;
      case 'plan': {
        if (!Array.isArray(ev.plan)) break;
        const entries = (ev.plan as PlanEntry[]).filter((e) => e && typeof e.content === 'string')
          .map((e) => ({ content: e.content, status: typeof e.status === 'string' ? e.status : 'pending', ...(e.priority ? { priority: e.priority } : {}) }));
        const shown = r.items.find((i): i is PlanItem => i.kind === 'plan');
        if (shown) shown.entries = entries;
        else r.items.push({ kind: 'plan', entries });
        break;
      }
      case 'context':
        if (Array.isArray(ev.context)) r.context = (ev.context as ContextItem[]).filter((c) => c && typeof c.path === 'string');
        break;
      case 'finished': {
        r.status = 'finished';
        r.usage = ev.usage;
        const t = r.threadId ? this.threads.get(r.threadId) : undefined;
        if (t && ev.usage && typeof ev.usage.inputTokens === 'number' && !(t.counted ?? []).includes(r.runId)) {
          t.usage = addUsage(t.usage, ev.usage);
          t.counted = [...(t.counted ?? []), r.runId];
        }
        if (Array.isArray(ev.notReady) && ev.notReady.length > 0) r.notReady = ev.notReady.filter((s) => typeof s === 'string');
        // A run whose text never streamed still shows its answer.
        if (ev.answer && !r.items.some((i) => i.kind === 'text')) r.items.push({ kind: 'text', text: ev.answer });
        break;
      }
      default:
        if (TERMINAL.has(ev.kind)) {
          for (const i of r.items) if (i.kind === 'approval' && i.state === 'pending') i.state = 'cancelled';
          r.status = ev.kind as ChatRun['status'];
          r.error = ev.error;
          if (typeof ev.class === 'string') r.errorClass = ev.class;
        }
    }
    return true;
  }

  private tool(r: ChatRun, callId?: string): ToolItem | undefined {
    for (let i = r.items.length - 1; i >= 0; i--) {
      const it = r.items[i];
      if (it.kind === 'tool' && it.callId === callId) return it;
    }
    return undefined;
  }

  /** Shows an approval inline in its run (registering the run if needed). */
  addApproval(runId: string, a: Omit<ApprovalItem, 'kind' | 'state'>): ApprovalItem {
    const r = this.ensure(runId);
    const item: ApprovalItem = { kind: 'approval', state: 'pending', ...a };
    r.items.push(item);
    return item;
  }

  /** Records the user's answer; false when the approval is no longer pending. */
  answerApproval(id: string, answer: string): boolean {
    const a = this.approval(id);
    if (!a || a.state !== 'pending') return false;
    a.state = 'answered';
    a.answer = answer;
    return true;
  }

  /** Withdraws pending approvals (of one run, or the one with that id); returns their ids. */
  cancelApprovals(match: { runId?: string; id?: string }): string[] {
    const out: string[] = [];
    for (const r of this.runs.values()) {
      if (match.runId && r.runId !== match.runId) continue;
      for (const i of r.items) {
        if (i.kind === 'approval' && i.state === 'pending' && (!match.id || i.id === match.id)) {
          i.state = 'cancelled';
          out.push(i.id);
        }
      }
    }
    return out;
  }

  approval(id: string): ApprovalItem | undefined {
    for (const r of this.runs.values()) for (const i of r.items) if (i.kind === 'approval' && i.id === id) return i;
    return undefined;
  }

  /** Records an edit's files and hunks (from cairn.getEdit) and what the user decided. */
  setEdit(v: EditView): void {
    this.editViews.set(v.editId, v);
  }
  edit(editId: string): EditView | undefined { return this.editViews.get(editId); }

  /** Merges the server's thread list (cairn.listThreads), which survives restarts. */
  mergeThreads(list: ThreadSummary[]): void {
    for (const t of list) {
      const have = this.threads.get(t.threadId);
      if (have) {
        for (const id of t.runs ?? []) if (!have.runs.includes(id)) have.runs.push(id);
        if (t.title) have.title = t.title;
        have.updated = t.updated;
        // The server's total counts its finished runs; runs finished here
        // that it does not list yet stay added on top.
        if (t.usage) {
          const extra = (have.counted ?? []).filter((id) => !(t.runs ?? []).includes(id));
          have.usage = extra.reduce((u, id) => { const ru = this.runs.get(id)?.usage; return ru ? addUsage(u, ru) : u; }, { ...t.usage } as Usage);
          have.counted = [...(t.runs ?? []), ...extra];
        }
      } else {
        this.threads.set(t.threadId, { threadId: t.threadId, title: t.title || t.threadId, runs: [...(t.runs ?? [])], updated: t.updated, ...(t.usage ? { usage: { ...t.usage }, counted: [...(t.runs ?? [])] } : {}) });
      }
      if (!this.threadOrder.includes(t.threadId)) this.threadOrder.push(t.threadId);
    }
  }

  select(threadId: string | undefined): void { this.current = threadId; }

  /** The runs of a thread that this window saw, oldest first. */
  threadRuns(threadId: string | undefined): ChatRun[] {
    const t = threadId ? this.threads.get(threadId) : undefined;
    if (!t) return [];
    return t.runs.map((id) => this.runs.get(id)).filter((r): r is ChatRun => !!r && !!r.question);
  }

  /** The newest run of the thread that has a file to ask about. */
  anchor(threadId: string | undefined): ChatRun | undefined {
    const rs = this.threadRuns(threadId).filter((r) => r.uri);
    return rs[rs.length - 1];
  }

  /** The model picker's state (cairn.models), when the server answered it. */
  models?: { current: string; available: string[] };

  view(): ViewState {
    const t = this.current ? this.threads.get(this.current) : undefined;
    const runs = this.threadRuns(this.current);
    const edits: Record<string, EditView> = {};
    for (const r of runs) for (const i of r.items) if (i.kind === 'edit') {
      const e = this.editViews.get(i.editId);
      if (e) edits[i.editId] = e;
    }
    return {
      threads: this.threadOrder.map((id) => this.threads.get(id)!).map((x) => ({
        threadId: x.threadId, title: x.title, runs: x.runs.length, updated: x.updated, current: x.threadId === this.current, ...(x.usage ? { usage: x.usage } : {}),
      })),
      current: this.current,
      unseen: t ? t.runs.length - runs.length : 0,
      runs,
      edits,
      models: this.models,
    };
  }
}

/** The overall state of an edit from its hunks' states ('partial': some accepted, some rejected). */
export function editState(hunks: { state: string; undone?: boolean }[]): EditState {
  if (hunks.length === 0 || hunks.some((h) => h.state === 'pending')) return 'pending';
  if (hunks.some((h) => h.state === 'conflict')) return 'conflict';
  const accepted = hunks.filter((h) => h.state === 'accepted');
  if (accepted.length > 0 && accepted.every((h) => h.undone)) return 'undone';
  if (hunks.every((h) => h.state === 'accepted')) return 'accepted';
  if (hunks.every((h) => h.state === 'rejected')) return 'rejected';
  return 'partial';
}
