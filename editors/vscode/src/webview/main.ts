/// <reference lib="dom" />
// The chat view's page script (bundled for the browser by esbuild). It renders
// the state the extension posts and sends the user's actions back. Model text
// is Markdown rendered by markdown-it with raw HTML off, then sanitized by
// DOMPurify: nothing the model writes can run script in the view, and
// nothing it writes is fetched on display (no remote images: see
// logic/markdown.ts).
//
// Each state is rendered to a detached tree and merged into the page node by
// node (morph): what did not change is left alone, so a streamed delta only
// appends to the current answer, and a text selection or a scroll position
// in the rest of the chat survives streaming. Buttons carry their action as
// data (data-action) and one listener dispatches clicks, so a kept button and
// a fresh one behave the same.
import DOMPurify from 'dompurify';
import type { ApprovalItem, ChatRun, EditView, HunkView, Item, PlanEntry, ViewState } from '../logic/chat';
import { denyByDefault } from '../logic/approval';
import { humanError } from '../logic/errors';
import { FORBIDDEN_TAGS, markdownRenderer } from '../logic/markdown';

declare function acquireVsCodeApi(): { postMessage(msg: unknown): void; getState(): any; setState(s: any): void };

const vscode = acquireVsCodeApi();
const md = markdownRenderer();
const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

const DECISIONS: Record<string, string> = {
  allow_once: 'allowed once',
  allow_session: 'allowed for the session',
  deny: 'denied',
  policy_allow: 'allowed by policy',
  policy_deny: 'denied by policy',
};

/** callIds whose detail the user opened: kept open across re-renders. */
const opened = new Set<string>(vscode.getState()?.opened ?? []);
let state: ViewState | undefined;

function el(tag: string, attrs: Record<string, string> = {}, ...kids: (Node | string)[]): HTMLElement {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, v);
  for (const k of kids) e.append(k);
  return e;
}

function button(label: string, action: Record<string, unknown>, title?: string, cls = ''): HTMLElement {
  return el('button', { type: 'button', class: cls, title: title ?? label, 'data-action': JSON.stringify(action) }, label);
}

/**
 * morph makes the live node `old` look like `nu` (same tag), changing only
 * what differs: equal subtrees are kept as they are, text that grew is
 * appended to (a selection inside it stays), the rest is replaced.
 */
function morph(old: Element, nu: Element): void {
  for (const a of Array.from(old.attributes)) if (!nu.hasAttribute(a.name)) old.removeAttribute(a.name);
  for (const a of Array.from(nu.attributes)) if (old.getAttribute(a.name) !== a.value) old.setAttribute(a.name, a.value);
  morphChildren(old, nu);
}

function morphChildren(old: Node, nu: Node): void {
  const kids = Array.from(nu.childNodes);
  for (let i = 0; i < kids.length; i++) {
    const a = old.childNodes[i];
    const b = kids[i];
    if (!a) {
      old.appendChild(b);
    } else if (a.isEqualNode(b)) {
      continue;
    } else if (a.nodeType === Node.TEXT_NODE && b.nodeType === Node.TEXT_NODE) {
      const t = a as Text;
      const want = b.textContent ?? '';
      if (want.startsWith(t.data)) t.appendData(want.slice(t.data.length));
      else t.data = want;
    } else if (a.nodeType === Node.ELEMENT_NODE && b.nodeType === Node.ELEMENT_NODE && (a as Element).tagName === (b as Element).tagName) {
      morph(a as Element, b as Element);
    } else {
      old.replaceChild(b, a);
    }
  }
  while (old.childNodes.length > kids.length) old.removeChild(old.lastChild!);
}

function markdown(text: string): HTMLElement {
  const div = el('div', { class: 'md' });
  div.innerHTML = DOMPurify.sanitize(md.render(text), { USE_PROFILES: { html: true }, FORBID_TAGS: FORBIDDEN_TAGS, FORBID_ATTR: ['style', 'srcset', 'background', 'poster'] });
  return div;
}

function toolLine(it: Extract<Item, { kind: 'tool' }>): HTMLElement {
  const mark = it.ok === undefined ? '…' : it.ok ? '✓' : '✗';
  const decision = it.decision ? DECISIONS[it.decision] ?? it.decision : '';
  const summary = el('summary', {},
    el('span', { class: `mark ${it.ok === false ? 'bad' : it.ok ? 'good' : ''}` }, mark), ' ',
    el('span', { class: 'tool-title' }, it.title),
    ...(decision ? [' ', el('span', { class: `decision ${/denied/.test(decision) ? 'bad' : 'good'}` }, decision)] : []));
  const d = el('details', { class: 'tool', 'data-call': it.callId }, summary,
    el('div', { class: 'detail' },
      el('div', { class: 'label' }, 'input'), el('pre', {}, it.input || '(none)'),
      ...(it.summary !== undefined ? [el('div', { class: 'label' }, 'result'), el('pre', {}, it.summary || '(empty)')] : [])));
  if (opened.has(it.callId)) d.setAttribute('open', '');
  return d;
}

function editCard(editId: string, e: EditView | undefined): HTMLElement {
  const st = e?.state ?? 'pending';
  const label: Record<string, string> = { pending: 'waiting for review', accepted: 'accepted', rejected: 'rejected', partial: 'partly accepted', conflict: 'overlaps your edits', undone: 'undone' };
  const hunks = e?.hunks ?? [];
  const where = (h: HunkView) => `${h.path}:${h.startLine + 1}${h.endLine > h.startLine + 1 ? `-${h.endLine}` : ''}`;
  const undone = hunks.filter((h) => h.state === 'accepted' && h.undone);
  // An undone edit names what was undone; a partly undone one marks it per hunk.
  const stateText = st === 'undone'
    ? `undone${hunks.length > 1 ? ` (${undone.map((h) => `hunk ${h.index + 1}, ${where(h)}`).join('; ')})` : ''}`
    : label[st] ?? st;
  const card = el('div', { class: `edit ${st}`, role: 'group', 'aria-label': `Proposed edit ${editId}` },
    el('div', { class: 'edit-head' }, el('span', { class: 'codicon-like' }, '✎'), ' Proposed edit ',
      el('span', { class: 'files' }, (e?.files ?? []).join(', ') || editId), ' · ', el('span', { class: 'state' }, stateText)));
  if (hunks.length > 1) {
    // Rejected hunks leave the list (they left the diff too); a count remains.
    const ul = el('ul', { class: 'hunks' });
    for (const h of hunks) {
      if (h.state === 'rejected') continue;
      const s = h.state === 'accepted' && h.undone ? 'undone' : h.state;
      ul.append(el('li', { class: s }, `hunk ${h.index + 1}: ${where(h)} · ${s}`));
    }
    const rejected = hunks.filter((h) => h.state === 'rejected');
    if (rejected.length) ul.append(el('li', { class: 'rejected-count muted' }, `${rejected.length} rejected (hunk ${rejected.map((h) => h.index + 1).join(', ')})`));
    card.append(ul);
  }
  const row = el('div', { class: 'actions' }, button('Review', { type: 'review', editId }, 'Open the diff editor'));
  if (st === 'pending') {
    row.append(button('Accept', { type: 'accept', editId }, 'Accept every pending hunk', 'primary'),
      button('Reject', { type: 'reject', editId }, 'Reject every pending hunk', 'secondary'));
  }
  if (st === 'conflict' || hunks.some((h) => h.state === 'conflict')) {
    row.append(button('Redo', { type: 'redo', editId }, 'Redo the changes your edits overlap, against the current text', st === 'conflict' ? 'primary' : 'secondary'));
    if (st === 'conflict') row.append(button('Reject', { type: 'reject', editId }, 'Reject every undecided hunk', 'secondary'));
  }
  card.append(row);
  return card;
}

const APPROVAL_OUTCOME: Record<string, string> = { 'Allow once': 'Allowed once', 'Allow for session': 'Allowed for the session', Deny: 'Denied' };

/** Approvals whose Deny was focused once (a re-render does not steal the focus again). */
const focusedApprovals = new Set<string>();

/**
 * An approval inline in the thread: the tool and its risk, the line, every
 * command of it with its own risk and why, the server's whole message on
 * demand, and the actions, Deny first (focused for anything above read).
 */
function planCard(entries: PlanEntry[]): HTMLElement {
  const done = entries.filter((e) => e.status === 'completed').length;
  const mark: Record<string, string> = { completed: '☑', in_progress: '▸', pending: '☐' };
  const ol = el('ol', { class: 'plan', 'aria-label': `Plan: ${done} of ${entries.length} steps done` });
  for (const e of entries) {
    ol.append(el('li', { class: `plan-${e.status}` }, el('span', { class: 'plan-mark', 'aria-hidden': 'true' }, mark[e.status] ?? '☐'), ' ', e.content));
  }
  return el('div', { class: 'plan-card' }, el('div', { class: 'label' }, `Plan · ${done}/${entries.length} done`), ol);
}

function approvalCard(a: ApprovalItem): HTMLElement {
  const card = el('div', { class: `approval ${a.state}`, role: 'group', 'aria-label': `Approval: ${a.tool} (${a.risk} risk)`, 'data-approval': a.id });
  card.append(el('div', { class: 'ap-head' }, '⚖ Cairn wants to run ', el('code', {}, a.tool), ' · ', el('span', { class: `risk r-${a.risk}` }, a.risk), ' risk'));
  if (a.command) card.append(el('div', { class: 'ap-line' }, el('span', { class: 'label' }, 'command '), a.command));
  const shown = a.commands.filter((c) => !c.redirection || a.commands.length > 1);
  if (shown.length > 0) {
    const ul = el('ul', { class: 'ap-commands', 'aria-label': `${shown.length} command${shown.length > 1 ? 's' : ''}` });
    for (const c of shown) {
      const what = c.redirection ? `redirection ${c.text}` : c.whole && !c.text ? 'the whole line' : c.via ? `${c.text} (run by ${c.via})` : c.text;
      ul.append(el('li', {}, el('span', { class: `risk r-${c.risk}` }, c.risk), ' ', what, ...(c.reason ? [el('span', { class: 'ap-why' }, ` — ${c.reason}`)] : [])));
    }
    card.append(ul);
  }
  card.append(el('details', { class: 'ap-detail' }, el('summary', {}, 'what Cairn asked'), el('pre', {}, a.message)));
  if (a.state === 'pending') {
    const row = el('div', { class: 'actions' });
    const focusDeny = denyByDefault(a.risk);
    for (const t of a.actions) {
      const primary = t === 'Deny' ? focusDeny : !focusDeny && t === 'Allow once';
      row.append(button(t, { type: 'approve', id: a.id, title: t }, t === 'Deny' ? 'Do not run it (the default)' : t === 'Allow once' ? 'Run it this time' : 'Run it, and calls like it, until the server restarts', `${primary ? 'primary' : 'secondary'} ap-${t === 'Deny' ? 'deny' : t === 'Allow once' ? 'once' : 'session'}`));
    }
    card.append(row);
  } else {
    const said = a.state === 'cancelled' ? 'Denied: the run ended before an answer' : APPROVAL_OUTCOME[a.answer ?? ''] ?? a.answer ?? '';
    card.append(el('div', { class: `ap-outcome ${a.answer && a.answer !== 'Deny' && a.state === 'answered' ? 'good' : 'bad'}` }, said));
  }
  return card;
}

function money(usd: number): string {
  return usd >= 0.01 ? `$${usd.toFixed(2)}` : `$${usd.toFixed(4)}`;
}

/** Under an answer: the files and lines of its prompt (each opens there), tokens and cost, its context report. */
function runMeta(r: ChatRun): HTMLElement | undefined {
  const parts: HTMLElement[] = [];
  if (r.context && r.context.length > 0) {
    const files = el('span', { class: 'context-files', 'aria-label': 'Context of this answer' }, el('span', { class: 'label' }, 'Context:'));
    const seen = new Set<string>();
    for (const c of r.context) {
      const lines = c.startLine ? `:${c.startLine}${c.endLine && c.endLine !== c.startLine ? `-${c.endLine}` : ''}` : '';
      // One link per place (a file can come from two sources, e.g. open documents and recent edits).
      if (seen.has(c.path + lines)) continue;
      seen.add(c.path + lines);
      files.append(el('a', {
        role: 'link', tabindex: '0', class: 'ctx-file', title: `${c.source}, ${c.tokens} tokens: open ${c.path}${lines}`,
        'data-action': JSON.stringify({ type: 'openContext', path: c.path, startLine: c.startLine, endLine: c.endLine }),
      }, `${c.path}${lines}`));
    }
    parts.push(files);
  }
  if (r.usage) {
    const u = r.usage;
    const cached = u.cachedInputTokens ? ` (${u.cachedInputTokens} cached)` : '';
    const cost = typeof u.costUSD === 'number' && u.costUSD > 0 ? ` · ${money(u.costUSD)}` : '';
    parts.push(el('span', { class: 'usage', title: u.estimated ? 'counted by Cairn: the provider reported no usage' : 'as the provider reported' },
      `${u.estimated ? '≈' : ''}${u.inputTokens} in${cached} / ${u.outputTokens} out tokens${cost}`));
  }
  if (r.status !== 'running' && (r.context || r.usage)) {
    parts.push(el('a', { role: 'link', tabindex: '0', class: 'ctx-report', title: 'What went into the prompt, and why (cairn.contextReport)', 'data-action': JSON.stringify({ type: 'contextReport', runId: r.runId }) }, 'Context report'));
  }
  return parts.length ? el('div', { class: 'run-meta' }, ...parts) : undefined;
}

function renderRun(r: ChatRun, edits: Record<string, EditView>): HTMLElement {
  const status: Record<string, string> = { running: 'running…', finished: '', failed: 'failed', cancelled: 'cancelled', interrupted: 'interrupted' };
  const head = el('div', { class: 'question' },
    el('div', { class: 'q-text' }, r.question),
    ...(r.where ? [el('div', { class: 'where' }, r.where)] : []));
  const body = el('div', { class: 'answer', 'aria-live': r.status === 'running' ? 'polite' : 'off' });
  for (const it of r.items) {
    if (it.kind === 'text') body.append(markdown(it.text));
    else if (it.kind === 'tool') body.append(toolLine(it));
    else if (it.kind === 'approval') body.append(approvalCard(it));
    else if (it.kind === 'plan') body.append(planCard(it.entries));
    else body.append(editCard(it.editId, edits[it.editId]));
  }
  const foot = el('div', { class: `run-status ${r.status}` });
  if (r.status === 'running') {
    foot.append(el('span', { class: 'spinner', 'aria-hidden': 'true' }), ' running… ', button('Cancel', { type: 'cancel', runId: r.runId }, 'Cancel this run', 'secondary'));
  } else if (r.status === 'failed') {
    // One sentence, Retry, Open Settings where a setting is the cause; the server's text on demand.
    const h = humanError(r.errorClass, r.error);
    foot.append(el('span', { class: 'error-text' }, `■ ${h.text}`), button('Retry', { type: 'retry', runId: r.runId }, 'Ask the same question again', 'primary'));
    if (h.fix?.command === 'cairn.setApiKey') foot.append(button(h.fix.label, { type: 'setApiKey' }, 'Store the key in the editor\'s secret storage and restart the server with it'));
    if (h.setting) foot.append(button('Open Settings', { type: 'openSettings', setting: h.setting }, `Open the ${h.setting} settings`));
    if (h.detail) foot.append(el('details', { class: 'error-detail' }, el('summary', {}, 'details'), el('pre', {}, h.detail)));
  } else if (r.status !== 'finished') {
    foot.append(`■ ${status[r.status]}${r.error ? `: ${r.error}` : ''}`);
    if (r.status === 'interrupted') foot.append(' ', button('Resume', { type: 'resume', runId: r.runId }));
  }
  if (r.status === 'finished' && r.notReady && r.notReady.length > 0) {
    foot.append(el('div', { class: 'not-ready' }, `Not ready when asked: ${r.notReady.join(', ')}; the answer used what was indexed so far.`));
  }
  const meta = runMeta(r);
  return el('section', { class: 'run', 'data-run': r.runId }, head, body, ...(meta ? [meta] : []), foot);
}

/** A thread's runs and, once any finished, its tokens and total cost. */
function threadMeta(t: ViewState['threads'][number]): string {
  const runs = `${t.runs} run${t.runs === 1 ? '' : 's'}`;
  const u = t.usage;
  if (!u) return runs;
  const cost = typeof u.costUSD === 'number' && u.costUSD > 0 ? ` · ${money(u.costUSD)}` : '';
  return `${runs} · ${u.inputTokens + u.outputTokens} tokens${cost}`;
}

function render(): void {
  if (!state) return;
  const list = el('div');
  for (const t of state.threads) {
    list.append(el('button', {
      type: 'button', class: `thread${t.current ? ' current' : ''}`, role: 'option', 'aria-selected': String(t.current), title: t.title,
      'data-action': JSON.stringify({ type: 'selectThread', threadId: t.threadId }),
    }, el('span', { class: 't-title' }, t.title), el('span', { class: 't-count' }, threadMeta(t))));
  }
  morphChildren($('threads'), list);
  $('thread-count').textContent = String(state.threads.length);
  const live = $('conversation');
  const atBottom = live.scrollHeight - live.scrollTop - live.clientHeight < 40;
  const conv = el('main');
  if (state.unseen > 0) conv.append(el('p', { class: 'muted' }, `${state.unseen} earlier run${state.unseen > 1 ? 's' : ''} of this thread happened in another session; the server still remembers them.`));
  if (state.runs.length === 0 && state.unseen === 0) {
    conv.append(el('p', { class: 'muted' }, 'Select code and run "Cairn: Ask about Selection" (Ctrl+Alt+A), or pick a thread.'));
  }
  for (const r of state.runs) conv.append(renderRun(r, state.edits));
  morphChildren(live, conv);
  if (atBottom) live.scrollTop = live.scrollHeight;
  // A new approval above read: Deny takes the focus, so Enter denies.
  for (const card of Array.from(live.querySelectorAll<HTMLElement>('.approval.pending'))) {
    const id = card.dataset.approval ?? '';
    if (focusedApprovals.has(id)) continue;
    focusedApprovals.add(id);
    card.scrollIntoView({ block: 'nearest' });
    const deny = card.querySelector<HTMLButtonElement>('button.ap-deny.primary');
    deny?.focus();
  }
  renderModels();
  const input = $<HTMLTextAreaElement>('input');
  input.placeholder = state.current ? 'Ask a follow-up in this thread (Enter sends, Shift+Enter new line)' : 'Ask about the active file (Enter sends)';
}

/** The model picker: the current model selected, the server's list as the choices. */
function renderModels(): void {
  const sel = $<HTMLSelectElement>('model');
  const m = state?.models;
  const ids = m ? [...new Set([...(m.current ? [m.current] : []), ...m.available])] : [];
  const want = ids.join('\n') + '\u0000' + (m?.current ?? '');
  if (sel.dataset.rendered === want) return;
  sel.dataset.rendered = want;
  sel.textContent = '';
  if (ids.length === 0) sel.append(el('option', { value: '' }, m ? 'the server\'s default model' : 'loading…'));
  for (const id of ids) sel.append(el('option', { value: id }, id));
  sel.value = m?.current ?? '';
}
$('model').addEventListener('change', () => {
  const v = $<HTMLSelectElement>('model').value;
  if (v) vscode.postMessage({ type: 'selectModel', model: v });
});

window.addEventListener('message', (e) => {
  const m = e.data;
  if (m?.type === 'state') {
    state = m.state as ViewState;
    render();
  } else if (m?.type === 'focusInput') {
    $('input').focus();
  }
});

function send(): void {
  const input = $<HTMLTextAreaElement>('input');
  const q = input.value.trim();
  if (!q) return;
  vscode.postMessage({ type: 'ask', question: q, threadId: state?.current });
  input.value = '';
}
$('send').addEventListener('click', send);
$('input').addEventListener('keydown', (e) => {
  if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
    e.preventDefault();
    send();
  }
});
// One listener for every button the renderer makes (data-action) and for
// the code blocks' Copy / Insert at cursor (the code is read on click).
document.addEventListener('click', (e) => {
  const t = e.target instanceof Element ? e.target : null;
  const code = t?.closest('[data-code-action]');
  if (code) {
    const text = code.closest('.codeblock')?.querySelector('pre code')?.textContent ?? '';
    const act = code.getAttribute('data-code-action');
    if (act === 'apply') {
      vscode.postMessage({ type: 'applyCode', code: text, runId: code.closest('[data-run]')?.getAttribute('data-run') ?? undefined });
      return;
    }
    vscode.postMessage({ type: act === 'insert' ? 'insertCode' : 'copyCode', code: text });
    if (code.getAttribute('data-code-action') === 'copy') {
      code.textContent = 'Copied';
      setTimeout(() => { code.textContent = 'Copy'; }, 1500);
    }
    return;
  }
  const b = t?.closest('[data-action]');
  if (!b) return;
  e.preventDefault();
  try {
    vscode.postMessage(JSON.parse(b.getAttribute('data-action') ?? ''));
  } catch { /* not ours */ }
});
// A tool call's detail stays open across renders (toggle does not bubble: capture).
document.addEventListener('toggle', (e) => {
  const d = e.target;
  if (!(d instanceof HTMLDetailsElement) || !d.dataset.call) return;
  if (d.open) opened.add(d.dataset.call);
  else opened.delete(d.dataset.call);
  vscode.setState({ opened: [...opened] });
}, true);
$('new-thread').addEventListener('click', () => vscode.postMessage({ type: 'newThread' }));
$('refresh').addEventListener('click', () => vscode.postMessage({ type: 'listThreads' }));
// Links (context files, the context report) open with Enter as buttons do.
document.addEventListener('keydown', (e) => {
  const t = e.target instanceof HTMLElement ? e.target : null;
  if (e.key === 'Enter' && t?.matches('a[data-action]')) {
    e.preventDefault();
    t.click();
  }
});
vscode.postMessage({ type: 'ready' });
