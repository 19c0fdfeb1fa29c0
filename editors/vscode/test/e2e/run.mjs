// End-to-end test of the Cairn extension in real VS Code (code-server) driven by
// headless Chromium: ask on a selection, the diff editor opens, accept, the file
// changes, undo, it is restored. Run through ../e2e.sh, which installs everything.
//
// env: CAIRN_BIN (server binary), VSIX (the packaged extension), WORK (a fresh
// scratch directory), SHOTS (where to save screenshots; optional),
// CODE_SERVER (code-server binary), CHROMIUM (browser binary).
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { chromium } from 'playwright-core';

const env = (k, d) => process.env[k] || d;
const CAIRN_BIN = env('CAIRN_BIN');
const VSIX = env('VSIX');
const WORK = env('WORK');
const SHOTS = env('SHOTS', '');
const CODE_SERVER = env('CODE_SERVER');
const CHROMIUM = env('CHROMIUM', '/usr/bin/chromium');
const STEP_TIMEOUT = Number(env('STEP_TIMEOUT_MS', '60000'));
for (const [k, v] of Object.entries({ CAIRN_BIN, VSIX, WORK, CODE_SERVER })) {
  if (!v) throw new Error(`${k} is not set`);
}

const ORIGINAL = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println("Hello")\n}\n';
const EDITED = ORIGINAL.replace('Hello', 'Hello, world');
const SCRIPT = `turns:
  - text: "Reading the file."
    toolCalls:
      - name: read_file
        arguments: {path: "hello.go"}
  - toolCalls:
      - name: edit_file
        arguments: {path: "hello.go", oldText: "Hello", newText: "Hello, world"}
  - text: "I changed the greeting to \\"Hello, world\\"; accept the edit to apply it."
  # second run: a proposal that is rejected through a CodeLens
  - toolCalls:
      - name: edit_file
        arguments: {path: "hello.go", oldText: "Hello", newText: "Hi"}
  - text: "Proposed \\"Hi\\"."
  # third run: a slow answer, cancelled from the status bar
  - text: "${Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ')}"
    delayMs: 250
  # fourth run: a write command, approved in the modal
  - toolCalls:
      - name: run_command
        arguments: {command: "touch approved.txt"}
  - text: "Created approved.txt."
`;

const t0 = Date.now();
const log = (...a) => console.log(`[e2e ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
    s.on('error', reject);
  });
}

async function waitFor(what, fn, timeout = STEP_TIMEOUT, every = 250) {
  const end = Date.now() + timeout;
  let last;
  while (Date.now() < end) {
    try {
      const v = await fn();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, every));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last.message}` : ''}`);
}

const dirs = {};
for (const d of ['ws', 'user-data', 'extensions', 'browser', 'home', 'state', 'tmp', 'cache']) {
  dirs[d] = path.join(WORK, d);
  fs.mkdirSync(dirs[d], { recursive: true });
}
const file = path.join(dirs.ws, 'hello.go');
fs.writeFileSync(file, ORIGINAL);
fs.writeFileSync(path.join(dirs.ws, 'go.mod'), 'module example.com/hello\n\ngo 1.22\n');
const scriptPath = path.join(WORK, 'script.yaml');
fs.writeFileSync(scriptPath, SCRIPT);
fs.mkdirSync(path.join(dirs['user-data'], 'User'), { recursive: true });
fs.writeFileSync(path.join(dirs['user-data'], 'User', 'settings.json'), JSON.stringify({
  'cairn.serverPath': CAIRN_BIN,
  'cairn.model.provider': 'scripted',
  'cairn.scripted.path': scriptPath,
  'cairn.approval.mode': 'ask',
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'security.workspace.trust.enabled': false,
  'extensions.ignoreRecommendations': true,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  'files.autoSave': 'off',
  'editor.minimap.enabled': false,
  'chat.commandCenter.enabled': false,
  'workbench.colorTheme': 'Default Dark Modern',
  'window.zoomLevel': 0,
}, null, 2));

const childEnv = {
  ...process.env,
  HOME: dirs.home,
  XDG_CACHE_HOME: dirs.cache,
  TMPDIR: dirs.tmp,
  CAIRN_STATE_DIR: dirs.state,
};

log('installing the extension', VSIX);
const inst = spawnSync(CODE_SERVER, ['--user-data-dir', dirs['user-data'], '--extensions-dir', dirs.extensions, '--install-extension', VSIX], { env: childEnv, encoding: 'utf8' });
if (inst.status !== 0) throw new Error(`install-extension failed: ${inst.stdout}\n${inst.stderr}`);

const port = await freePort();
log('starting code-server on port', port);
const csLog = fs.createWriteStream(path.join(WORK, 'code-server.log'));
const cs = spawn(CODE_SERVER, [
  '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
  '--disable-workspace-trust', '--disable-getting-started-override', '--user-data-dir', dirs['user-data'],
  '--extensions-dir', dirs.extensions, dirs.ws,
], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
cs.stdout.pipe(csLog);
cs.stderr.pipe(csLog);

let browser;
let page;
const cleanup = async () => {
  try { if (browser) await browser.close(); } catch { /* gone */ }
  try { process.kill(-cs.pid, 'SIGTERM'); } catch { /* gone */ }
};

async function shot(name) {
  const p = path.join(WORK, name);
  await page.screenshot({ path: p });
  if (SHOTS) {
    fs.mkdirSync(SHOTS, { recursive: true });
    fs.copyFileSync(p, path.join(SHOTS, name));
  }
  log('screenshot', name);
}

/** Runs a command from the palette, reopening it until the extension has registered it. */
async function palette(title) {
  let tries = 0;
  await waitFor(`command "${title}" in the palette`, async () => {
    // Escape would also drop the editor's selection: only between retries.
    if (tries++ > 0) await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 5000 });
    await input.fill('>' + title);
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    try {
      await row.waitFor({ state: 'visible', timeout: 2000 });
    } catch {
      return false;
    }
    await row.click();
    return true;
  });
}

/** The text of the visible editor whose tab is active (Monaco renders nbsp). */
async function editorText(selector = '.editor-instance .monaco-editor .view-lines') {
  const t = await page.locator(selector).first().innerText();
  return t.replace(/\u00a0/g, ' ');
}

async function panelText() {
  return (await page.locator('.panel .monaco-editor .view-lines').allInnerTexts()).join('\n').replace(/\u00a0/g, ' ');
}

let failed = false;
let passed = 0;
function ok(what) {
  passed++;
  log('ok -', what);
}
try {
  await waitFor('code-server /healthz', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 30000);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    // Playwright gives the browser a fresh profile under TMPDIR each run.
  });
  const context = await browser.newContext({ viewport: { width: 1400, height: 860 } });
  page = await context.newPage();
  page.on('pageerror', (e) => log('page error:', e.message));
  await page.goto(`http://127.0.0.1:${port}/?folder=${encodeURIComponent(dirs.ws)}`);
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  ok('workbench loaded');

  // Open hello.go through Quick Open.
  await waitFor('hello.go in an editor', async () => {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 5000 });
    await input.fill('hello.go');
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: 'hello.go' }).first();
    await row.waitFor({ state: 'visible', timeout: 3000 });
    await page.keyboard.press('Enter');
    await page.locator('.tab.active', { hasText: 'hello.go' }).waitFor({ timeout: 5000 });
    return (await editorText()).includes('fmt.Println("Hello")');
  });
  ok('hello.go open');

  // Wait until the server runs: the status bar item shows the model.
  await page.locator('.statusbar-item', { hasText: 'Cairn: scripted' }).first().waitFor({ timeout: STEP_TIMEOUT });
  ok('Cairn server running (status bar)');

  // Select the body of main (lines 5-7).
  await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+Home');
  for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowDown');
  for (let i = 0; i < 2; i++) await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Shift+End');
  await palette('Cairn: Ask about Selection');
  const box = page.locator('.quick-input-widget input');
  await waitFor('the question input box', async () => (await box.getAttribute('placeholder') ?? '').includes('e.g.'), 10000);
  await box.fill('Make the greeting friendlier.');
  await page.keyboard.press('Enter');
  log('asked');

  // The proposed edit opens in the native diff editor.
  const diff = page.locator('.editor-instance .monaco-diff-editor').first();
  await diff.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await page.locator('.tab.active', { hasText: 'Cairn proposed' }).waitFor({ timeout: STEP_TIMEOUT });
  await waitFor('proposed text on the right side', async () =>
    (await editorText('.editor-instance .monaco-diff-editor .editor.modified .view-lines')).includes('Hello, world'));
  const left = await editorText('.editor-instance .monaco-diff-editor .editor.original .view-lines');
  if (!left.includes('fmt.Println("Hello")')) throw new Error(`left side of the diff is not the current file: ${left}`);
  // The answer has streamed into the output view.
  await waitFor('the finished answer in the Cairn Answers view', async () => {
    const out = await panelText();
    return out.includes('finished') && out.includes('hello.go:5-7') && out.includes('read_file') && out.includes('I changed the greeting');
  });
  await page.waitForTimeout(500);
  ok('ask on a selection: the diff editor shows the proposed edit; the answer streamed');
  await shot('vscode-diff.png');

  // Accept with the title-bar button.
  const accept = page.locator('.editor-actions .action-label[aria-label*="Accept Proposed Edit"]').first();
  await accept.waitFor({ state: 'visible', timeout: 10000 });
  const reject = page.locator('.editor-actions .action-label[aria-label*="Reject Proposed Edit"]').first();
  if (!(await reject.isVisible())) throw new Error('no Reject button on the diff editor title bar');
  await accept.click();
  log('accept clicked');
  await waitFor('the diff editor to close', async () => (await page.locator('.tab', { hasText: 'Cairn proposed' }).count()) === 0);
  await waitFor('the edited text in hello.go', async () => (await editorText()).includes('Hello, world'));
  await waitFor('"accepted edit" in the answer view', async () => (await panelText()).includes('accepted edit'));
  await shot('vscode-answer.png');
  // Save and check the file on disk.
  await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+S');
  await waitFor('hello.go on disk to have the edit', async () => fs.readFileSync(file, 'utf8') === EDITED, 15000);
  ok('accepted: file changed on disk');

  // Undo.
  await palette('Cairn: Undo Last Accepted Edit');
  await waitFor('hello.go restored in the editor', async () => {
    const t = await editorText();
    return t.includes('fmt.Println("Hello")') && !t.includes('Hello, world');
  });
  await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+S');
  await waitFor('hello.go on disk restored', async () => fs.readFileSync(file, 'utf8') === ORIGINAL, 15000);
  ok('undone: file restored on disk');

  // Second run: reject through the CodeLens on the file.
  await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+Home');
  await palette('Cairn: Ask about Selection');
  await waitFor('the question input box', async () => (await box.getAttribute('placeholder') ?? '').includes('e.g.'), 10000);
  await box.fill('Shorter greeting?');
  await page.keyboard.press('Enter');
  await page.locator('.tab.active', { hasText: 'Cairn proposed' }).waitFor({ timeout: STEP_TIMEOUT });
  await page.locator('.tab', { hasText: /^hello\.go$/ }).first().click();
  const lens = page.locator('.editor-instance .monaco-editor .codelens-decoration a', { hasText: 'Reject' }).first();
  await lens.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await lens.click();
  await waitFor('the diff editor to close after reject', async () => (await page.locator('.tab', { hasText: 'Cairn proposed' }).count()) === 0);
  await waitFor('"rejected edit" in the answer view', async () => (await panelText()).includes('rejected edit'));
  if (fs.readFileSync(file, 'utf8') !== ORIGINAL || (await editorText()).includes('Hi"')) throw new Error('a rejected edit changed hello.go');
  ok('rejected through the CodeLens: file unchanged');

  // Third run: cancel from the status bar while the answer streams.
  await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  await palette('Cairn: Explain Selection');
  const running = page.locator('.statusbar-item', { hasText: 'Cairn: running' }).first();
  await running.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  await waitFor('the answer to start streaming', async () => (await panelText()).includes('word2'));
  await running.click();
  await waitFor('"cancelled" in the answer view', async () => (await panelText()).includes('■ cancelled'));
  await page.locator('.statusbar-item', { hasText: 'Cairn: scripted' }).first().waitFor({ timeout: 10000 });
  if ((await panelText()).includes('word59')) throw new Error('the run streamed to its end despite the cancel');
  ok('cancelled from the status bar');

  // The context report of a run opens as a Markdown preview.
  await palette('Cairn: Show Context Report');
  const pick = page.locator('.quick-input-list .monaco-list-row', { hasText: 'Make the greeting friendlier.' }).first();
  await pick.waitFor({ state: 'visible', timeout: 10000 });
  await pick.click();
  await page.locator('.tab', { hasText: 'Preview' }).first().waitFor({ timeout: STEP_TIMEOUT });
  await page.waitForTimeout(1000);
  await page.screenshot({ path: path.join(WORK, 'context-report.png') });
  ok('context report opens as a Markdown preview');

  // Fourth run: the approval modal shows the command; "Allow once" runs it.
  await page.locator('.tab', { hasText: /^hello\.go$/ }).first().click();
  await palette('Cairn: Ask about Selection');
  await waitFor('the question input box', async () => (await box.getAttribute('placeholder') ?? '').includes('e.g.'), 10000);
  await box.fill('Create a marker file.');
  await page.keyboard.press('Enter');
  const dialog = page.locator('.monaco-dialog-box').first();
  await dialog.waitFor({ state: 'visible', timeout: STEP_TIMEOUT });
  const dialogText = (await dialog.innerText()).replace(/\u00a0/g, ' ');
  if (!dialogText.includes('touch approved.txt')) throw new Error(`the approval dialog does not show the command: ${dialogText}`);
  for (const b of ['Allow once', 'Allow for session', 'Deny']) {
    if ((await dialog.locator('.monaco-button', { hasText: b }).count()) === 0) throw new Error(`no "${b}" button in: ${dialogText}`);
  }
  await shot('vscode-approval.png');
  await dialog.locator('.monaco-button', { hasText: 'Allow once' }).first().click();
  await waitFor('approved.txt to be created', async () => fs.existsSync(path.join(dirs.ws, 'approved.txt')), 20000);
  await waitFor('"allowed once" in the answer view', async () => (await panelText()).includes('allowed once'));
  ok('approval modal shows the command; Allow once runs it');
} catch (err) {
  failed = true;
  console.error('E2E FAILED:', err && err.stack ? err.stack : err);
  if (page) {
    try { await page.screenshot({ path: path.join(WORK, 'failure.png') }); console.error('screenshot:', path.join(WORK, 'failure.png')); } catch { /* ignore */ }
  }
  for (const name of ['code-server.log']) {
    try { console.error(`--- ${name} (tail)\n` + fs.readFileSync(path.join(WORK, name), 'utf8').split('\n').slice(-40).join('\n')); } catch { /* ignore */ }
  }
} finally {
  await cleanup();
}
if (failed) {
  console.log(`vscode-e2e: ${passed} passed, 1 failed`);
  process.exit(1);
}
console.log(`vscode-e2e: ${passed} passed, 0 failed`);
process.exit(0);
