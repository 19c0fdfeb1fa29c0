// Run events: tracking runs and rendering them into the answer view.

export interface Usage { inputTokens: number; outputTokens: number; cachedInputTokens?: number; estimated?: boolean; costUSD?: number }

/** A workspace file range that went into a run's prompt (the `context` event). Lines are 1-based, inclusive; absent for a whole file. */
export interface ContextItem { path: string; startLine?: number; endLine?: number; tokens: number; source: string }

export interface RunEvent {
  runId: string;
  seq: number;
  kind: string;
  delta?: string;
  callId?: string;
  tool?: string;
  input?: unknown;
  ok?: boolean;
  summary?: string;
  decision?: string;
  editId?: string;
  edit?: unknown;
  checkpointId?: string;
  step?: number;
  answer?: string;
  usage?: Usage;
  /** context: the files and lines in the prompt. */
  context?: ContextItem[];
  /** finished: the code index's sources still being built when the question went ahead. */
  notReady?: string[];
  error?: string;
  class?: string;
}

export type RunStatus = 'running' | 'finished' | 'failed' | 'cancelled' | 'interrupted';
export const TERMINAL: ReadonlySet<string> = new Set(['finished', 'failed', 'cancelled', 'interrupted']);

export interface RunInfo {
  runId: string;
  question?: string;
  file?: string;
  status: RunStatus;
  lastSeq: number;
  text: string;
  answer?: string;
  edits: string[];
  checkpoints: string[];
  usage?: Usage;
  error?: string;
  errorClass?: string;
  tools: Map<string, string>;
}

export class RunTracker {
  private runs = new Map<string, RunInfo>();
  private order: string[] = [];

  /** Registers a run (from cairn.ask's result); safe when events came first. */
  begin(runId: string, meta: { question?: string; file?: string } = {}): RunInfo {
    const r = this.ensure(runId);
    if (meta.question !== undefined) r.question = meta.question;
    if (meta.file !== undefined) r.file = meta.file;
    return r;
  }

  get(runId: string): RunInfo | undefined { return this.runs.get(runId); }

  private ensure(runId: string): RunInfo {
    let r = this.runs.get(runId);
    if (!r) {
      r = { runId, status: 'running', lastSeq: 0, text: '', edits: [], checkpoints: [], tools: new Map() };
      this.runs.set(runId, r);
      this.order.push(runId);
    }
    return r;
  }

  /**
   * Applies one event. Returns false for a duplicate or stale event
   * (seq not above the last one seen for the run), which callers skip.
   */
  apply(ev: RunEvent): boolean {
    if (!ev || typeof ev.runId !== 'string') return false;
    const r = this.ensure(ev.runId);
    if (typeof ev.seq === 'number' && ev.seq <= r.lastSeq) return false;
    if (typeof ev.seq === 'number') r.lastSeq = ev.seq;
    switch (ev.kind) {
      case 'started':
        r.status = 'running';
        break;
      case 'text':
        r.text += ev.delta ?? '';
        break;
      case 'toolCall':
        if (ev.callId) r.tools.set(ev.callId, ev.tool ?? '');
        break;
      case 'editProposed':
        if (ev.editId && !r.edits.includes(ev.editId)) r.edits.push(ev.editId);
        break;
      case 'checkpoint':
        if (ev.checkpointId) r.checkpoints.push(ev.checkpointId);
        break;
      case 'finished':
        r.status = 'finished';
        r.answer = ev.answer;
        r.usage = ev.usage;
        break;
      case 'failed':
        r.status = 'failed';
        r.error = ev.error;
        r.errorClass = ev.class;
        break;
      case 'cancelled':
        r.status = 'cancelled';
        r.error = ev.error;
        break;
      case 'interrupted':
        r.status = 'interrupted';
        r.error = ev.error;
        break;
    }
    return true;
  }

  running(): RunInfo[] { return this.order.map((id) => this.runs.get(id)!).filter((r) => r.status === 'running'); }
  interrupted(): RunInfo[] { return this.order.map((id) => this.runs.get(id)!).filter((r) => r.status === 'interrupted'); }
  latest(): RunInfo | undefined { const id = this.order[this.order.length - 1]; return id ? this.runs.get(id) : undefined; }
  all(): RunInfo[] { return this.order.map((id) => this.runs.get(id)!); }
}

/** Short one-line form of a tool input, for the transcript. */
export function summarizeInput(input: unknown, max = 120): string {
  if (input === undefined || input === null) return '';
  let s: string;
  if (typeof input === 'string') s = input;
  else {
    try { s = JSON.stringify(input); } catch { s = String(input); }
  }
  s = s.replace(/\s+/g, ' ');
  return s.length > max ? s.slice(0, max - 1) + '…' : s;
}

const DECISIONS: Record<string, string> = {
  allow_once: 'allowed once',
  allow_session: 'allowed for the session',
  deny: 'denied',
  policy_allow: 'allowed by policy',
  policy_deny: 'denied by policy',
};

/**
 * Renders events as plain text for an output view: text deltas stream
 * inline, everything else goes on its own line.
 */
export class Transcript {
  private atLineStart = true;

  header(runId: string, question: string, where?: string): string {
    return this.line(`━━ ${question}${where ? `  (${where})` : ''}  [${runId}]`);
  }

  render(ev: RunEvent, tools?: Map<string, string>): string {
    switch (ev.kind) {
      case 'started':
        return '';
      case 'text': {
        const d = ev.delta ?? '';
        if (d) this.atLineStart = d.endsWith('\n');
        return d;
      }
      case 'toolCall':
        return this.line(`▸ ${ev.tool ?? 'tool'} ${summarizeInput(ev.input)}`.trimEnd());
      case 'toolResult': {
        const name = ev.tool || (ev.callId && tools?.get(ev.callId)) || 'tool';
        return this.line(`${ev.ok === false ? '✗' : '✓'} ${name}${ev.summary ? ': ' + ev.summary : ''}`);
      }
      case 'approval':
        return this.line(`⚖ ${(ev.callId && tools?.get(ev.callId)) || 'tool call'} ${DECISIONS[ev.decision ?? ''] ?? ev.decision ?? ''}`.trimEnd());
      case 'editProposed':
        return this.line(`✎ proposed edit ${ev.editId}: review it in the diff editor (Accept / Reject)`);
      case 'checkpoint':
        return this.line(`⛁ checkpoint ${ev.checkpointId}${ev.step !== undefined ? ` (step ${ev.step})` : ''}`);
      case 'finished': {
        const u = ev.usage;
        const tokens = u ? ` · ${u.inputTokens} in / ${u.outputTokens} out tokens` : '';
        return this.line(`■ finished${tokens}`) + '\n';
      }
      case 'failed':
        return this.line(`■ failed${ev.class ? ` (${ev.class})` : ''}: ${ev.error ?? 'unknown error'}`) + '\n';
      case 'cancelled':
        return this.line('■ cancelled') + '\n';
      case 'interrupted':
        return this.line(`■ interrupted${ev.error ? ': ' + ev.error : ''} — "Cairn: Resume Interrupted Run" continues it`) + '\n';
      default:
        return '';
    }
  }

  private line(s: string): string {
    const prefix = this.atLineStart ? '' : '\n';
    this.atLineStart = true;
    return prefix + s + '\n';
  }
}
