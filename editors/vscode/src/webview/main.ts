/// <reference lib="dom" />
// The chat view's page script (bundled for the browser by esbuild). It renders
// the state the extension posts and sends the user's actions back. Model text
// is Markdown rendered by markdown-it with raw HTML off, then sanitized by
// DOMPurify: nothing the model writes can run script in the view, and
// nothing it writes is fetched on display (no remote images: see
// logic/markdown.ts).
import DOMPurify from 'dompurify';
import type { ChatRun, EditView, Item, ViewState } from '../logic/chat';
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
  const b = el('button', { type: 'button', class: cls, title: title ?? label }, label);
  b.addEventListener('click', () => vscode.postMessage(action));
  return b;
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
  d.addEventListener('toggle', () => {
    if ((d as HTMLDetailsElement).open) opened.add(it.callId);
    else opened.delete(it.callId);
    vscode.setState({ opened: [...opened] });
  });
  return d;
}

function editCard(editId: string, e: EditView | undefined): HTMLElement {
  const st = e?.state ?? 'pending';
  const label: Record<string, string> = { pending: 'waiting for review', accepted: 'accepted', rejected: 'rejected', partial: 'partly accepted', conflict: 'overlaps your edits' };
  const card = el('div', { class: `edit ${st}`, role: 'group', 'aria-label': `Proposed edit ${editId}` },
    el('div', { class: 'edit-head' }, el('span', { class: 'codicon-like' }, '✎'), ' Proposed edit ',
      el('span', { class: 'files' }, (e?.files ?? []).join(', ') || editId), ' · ', el('span', { class: 'state' }, label[st] ?? st)));
  const hunks = e?.hunks ?? [];
  if (hunks.length > 1) {
    const ul = el('ul', { class: 'hunks' });
    for (const h of hunks) {
      ul.append(el('li', { class: h.state }, `hunk ${h.index + 1}: ${h.path}:${h.startLine + 1}${h.endLine > h.startLine + 1 ? `-${h.endLine}` : ''} · ${h.state}`));
    }
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

function renderRun(r: ChatRun, edits: Record<string, EditView>): HTMLElement {
  const status: Record<string, string> = { running: 'running…', finished: '', failed: 'failed', cancelled: 'cancelled', interrupted: 'interrupted' };
  const head = el('div', { class: 'question' },
    el('div', { class: 'q-text' }, r.question),
    ...(r.where ? [el('div', { class: 'where' }, r.where)] : []));
  const body = el('div', { class: 'answer', 'aria-live': r.status === 'running' ? 'polite' : 'off' });
  for (const it of r.items) {
    if (it.kind === 'text') body.append(markdown(it.text));
    else if (it.kind === 'tool') body.append(toolLine(it));
    else body.append(editCard(it.editId, edits[it.editId]));
  }
  const foot = el('div', { class: `run-status ${r.status}` });
  if (r.status === 'running') {
    foot.append(el('span', { class: 'spinner', 'aria-hidden': 'true' }), ' running… ', button('Cancel', { type: 'cancel', runId: r.runId }, 'Cancel this run', 'secondary'));
  } else if (r.status !== 'finished') {
    foot.append(`■ ${status[r.status]}${r.error ? `: ${r.error}` : ''}`);
    if (r.status === 'interrupted') foot.append(' ', button('Resume', { type: 'resume', runId: r.runId }));
  } else if (r.usage) {
    foot.append(`${r.usage.inputTokens} in / ${r.usage.outputTokens} out tokens`);
  }
  if (r.status === 'finished' && r.notReady && r.notReady.length > 0) {
    foot.append(el('div', { class: 'not-ready' }, `Not ready when asked: ${r.notReady.join(', ')}; the answer used what was indexed so far.`));
  }
  return el('section', { class: 'run', 'data-run': r.runId }, head, body, foot);
}

function render(): void {
  if (!state) return;
  const list = $('threads');
  list.replaceChildren();
  for (const t of state.threads) {
    const b = el('button', { type: 'button', class: `thread${t.current ? ' current' : ''}`, role: 'option', 'aria-selected': String(t.current), title: t.title },
      el('span', { class: 't-title' }, t.title), el('span', { class: 't-count' }, `${t.runs}`));
    b.addEventListener('click', () => vscode.postMessage({ type: 'selectThread', threadId: t.threadId }));
    list.append(b);
  }
  $('thread-count').textContent = String(state.threads.length);
  const conv = $('conversation');
  const atBottom = conv.scrollHeight - conv.scrollTop - conv.clientHeight < 40;
  conv.replaceChildren();
  if (state.unseen > 0) conv.append(el('p', { class: 'muted' }, `${state.unseen} earlier run${state.unseen > 1 ? 's' : ''} of this thread happened in another session; the server still remembers them.`));
  if (state.runs.length === 0 && state.unseen === 0) {
    conv.append(el('p', { class: 'muted' }, 'Select code and run "Cairn: Ask about Selection" (Ctrl+Alt+A), or pick a thread.'));
  }
  for (const r of state.runs) conv.append(renderRun(r, state.edits));
  if (atBottom) conv.scrollTop = conv.scrollHeight;
  const input = $<HTMLTextAreaElement>('input');
  input.placeholder = state.current ? 'Ask a follow-up in this thread (Enter sends, Shift+Enter new line)' : 'Ask about the active file (Enter sends)';
}

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
$('new-thread').addEventListener('click', () => vscode.postMessage({ type: 'newThread' }));
$('refresh').addEventListener('click', () => vscode.postMessage({ type: 'listThreads' }));
vscode.postMessage({ type: 'ready' });
