// What the code-server end-to-end scripts share (run.mjs, multiroot.mjs):
// their environment, polling, the recording test model, a user-data dir
// with Cairn's settings, the extension installed into code-server, code-server
// itself, headless Chromium, and the command palette.
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { chromium } from 'playwright-core';

const env = (k, d) => process.env[k] || d;
export const E = {
  CAIRN_BIN: env('CAIRN_BIN'),
  VSIX: env('VSIX'),
  WORK: env('WORK'),
  SHOTS: env('SHOTS', ''),
  CODE_SERVER: env('CODE_SERVER'),
  CHROMIUM: env('CHROMIUM', '/usr/bin/chromium'),
  TEST_MODEL: env('TEST_MODEL'),
  STEP_TIMEOUT: Number(env('STEP_TIMEOUT_MS', '60000')),
};
for (const k of ['CAIRN_BIN', 'VSIX', 'WORK', 'CODE_SERVER', 'TEST_MODEL']) {
  if (!E[k]) throw new Error(`${k} is not set`);
}

/** A logger whose lines carry the script's name and the seconds since it started. */
export function logger(name) {
  const t0 = Date.now();
  return (...a) => console.log(`[${name} ${((Date.now() - t0) / 1000).toFixed(1)}s]`, ...a);
}

export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = s.address().port;
      s.close(() => resolve(p));
    });
    s.on('error', reject);
  });
}

/** Polls fn until it returns something truthy; the deadline is generous, never an assertion on time. */
export async function waitFor(what, fn, timeout = E.STEP_TIMEOUT, every = 250) {
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

/**
 * Starts editors/test-model.mjs with the model's turns; it records every
 * request in dir/requests.jsonl. Returns the process, its port and a reader
 * of the recorded requests.
 */
export async function startModel(dir, turns, extraEnv = {}) {
  const turnsPath = path.join(dir, 'turns.json');
  const requestsPath = path.join(dir, 'requests.jsonl');
  const portPath = path.join(dir, 'model.port');
  fs.writeFileSync(turnsPath, JSON.stringify(turns));
  const proc = spawn(process.execPath, [E.TEST_MODEL, turnsPath, requestsPath, portPath], {
    stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...extraEnv },
  });
  const port = await waitFor('the test model endpoint', async () => fs.existsSync(portPath) && fs.readFileSync(portPath, 'utf8'), 15000, 50);
  const requests = () => fs.readFileSync(requestsPath, 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l));
  return { proc, port, requestsPath, requests };
}

/** Cairn's settings pointing at the test model. */
export function cairnSettings(modelPort) {
  return {
    'cairn.serverPath': E.CAIRN_BIN,
    'cairn.model.provider': 'openai',
    'cairn.model.name': 'test-model',
    'cairn.model.baseURL': `http://127.0.0.1:${modelPort}/v1`,
    'cairn.approval.mode': 'ask',
  };
}

/**
 * Writes code-server's user settings: Cairn's, a quiet workbench, and
 * extra. code-server's window is a remote one: machine-scoped settings
 * belong in its Machine (Remote) settings too, or a reloaded window may
 * start without them.
 */
export function writeSettings(userData, cairn, extra = {}) {
  fs.mkdirSync(path.join(userData, 'User'), { recursive: true });
  fs.mkdirSync(path.join(userData, 'Machine'), { recursive: true });
  fs.writeFileSync(path.join(userData, 'Machine', 'settings.json'), JSON.stringify(cairn, null, 2));
  fs.writeFileSync(path.join(userData, 'User', 'settings.json'), JSON.stringify({
    ...cairn,
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
    'chat.commandCenter.enabled': false,
    // Tests type into editors: a suggestion widget that opens between two
    // keystrokes would take an Enter meant as a newline (seen in CI: "mine",
    // Escape, Enter became "min" + a word-based "package").
    'editor.quickSuggestions': { other: 'off', comments: 'off', strings: 'off' },
    'editor.suggestOnTriggerCharacters': false,
    'editor.wordBasedSuggestions': 'off',
    'editor.acceptSuggestionOnEnter': 'off',
    ...extra,
  }, null, 2));
}

/** The environment code-server and the Cairn server run in: everything under dirs. */
export function childEnv(dirs) {
  return { ...process.env, HOME: dirs.home, XDG_CACHE_HOME: dirs.cache, TMPDIR: dirs.tmp, CAIRN_STATE_DIR: dirs.state };
}

/** Installs the packaged extension, then starts code-server on a free port opening target. */
export async function startCodeServer(dirs, target, logFile) {
  const cenv = childEnv(dirs);
  const inst = spawnSync(E.CODE_SERVER, ['--user-data-dir', dirs['user-data'], '--extensions-dir', dirs.extensions, '--install-extension', E.VSIX], { env: cenv, encoding: 'utf8' });
  if (inst.status !== 0) throw new Error(`install-extension failed: ${inst.stdout}\n${inst.stderr}`);
  const port = await freePort();
  const out = fs.createWriteStream(logFile);
  const proc = spawn(E.CODE_SERVER, [
    '--auth', 'none', '--bind-addr', `127.0.0.1:${port}`, '--disable-telemetry', '--disable-update-check',
    '--disable-workspace-trust', '--disable-getting-started-override', '--user-data-dir', dirs['user-data'],
    '--extensions-dir', dirs.extensions, target,
  ], { env: cenv, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  proc.stdout.pipe(out);
  proc.stderr.pipe(out);
  return { proc, port };
}

/** Headless Chromium with the flags this machine's closed network needs; a fresh profile each run. */
export function launchBrowser() {
  return chromium.launch({
    executablePath: E.CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/**
 * Runs a command from the palette, reopening it until the extension has
 * registered it. A retry first gives the focus back to the workbench (a
 * webview that holds it keeps F1), and says on stderr why the tries before
 * failed: CI has seen this wait ~30 s after an Accept in the diff editor.
 */
export async function palette(page, title) {
  let tries = 0;
  let why = '';
  await waitFor(`command "${title}" in the palette`, async () => {
    // Escape would also drop the editor's selection: only between retries.
    if (tries++ > 0) {
      await page.keyboard.press('Escape');
      await page.locator('.tab.active').first().click({ timeout: 2000 }).catch(() => {});
    }
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    try {
      await input.waitFor({ state: 'visible', timeout: 5000 });
    } catch {
      why = 'the palette did not open';
      return false;
    }
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first();
    // Type only into a palette that has the focus: one that the workbench
    // closes as it opens (an editor taking the focus) would let the text
    // land in the editor.
    const focused = () => input.evaluate((el) => el === document.activeElement).catch(() => false);
    if (!(await focused())) {
      why = 'the palette opened without the focus';
      return false;
    }
    try {
      await input.fill('>' + title, { timeout: 5000 });
    } catch (e) {
      why = `typing into the palette: ${e.message.split('\n')[0]}`;
      return false;
    }
    if (!(await focused()) || (await input.inputValue().catch(() => '')) !== '>' + title) {
      why = 'the palette lost the focus or the text while typing';
      return false;
    }
    try {
      await row.waitFor({ state: 'visible', timeout: 2000 });
    } catch {
      why = 'no such command listed';
      return false;
    }
    try {
      // Playwright's own limit is 30 s: a click the workbench does not take is retried sooner.
      await row.click({ timeout: 5000 });
    } catch (e) {
      why = `clicking the command: ${e.message.split('\n')[0]}`;
      return false;
    }
    return true;
  });
  if (tries > 1) console.error(`palette: "${title}" took ${tries} tries; before: ${why}`);
}

/**
 * Opens the workbench of the code-server on port at query (`folder=…` or
 * `workspace=…`) in a new browser: resolves to { browser, page } once it is
 * visible. clipboard: let the page read and write the clipboard.
 */
export async function openWorkbench(port, query, log, { clipboard = false } = {}) {
  await waitFor('code-server /healthz', async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 30000);
  // Playwright gives the browser a fresh profile under TMPDIR each run.
  const browser = await launchBrowser();
  const context = await browser.newContext({ viewport: { width: 1400, height: 860 } });
  if (clipboard) {
    // Copy in the chat writes the clipboard through VS Code (navigator.clipboard in the browser).
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: `http://127.0.0.1:${port}` });
  }
  const page = await context.newPage();
  page.on('pageerror', (e) => log('page error:', e.message));
  // A busy machine serves the workbench slowly: the step deadline, not Playwright's 30 s.
  await page.goto(`http://127.0.0.1:${port}/?${query}`, { timeout: E.STEP_TIMEOUT * 2 });
  await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: E.STEP_TIMEOUT });
  return { browser, page };
}

/** Opens the file named name through Quick Open, retrying until its tab is active and ready(). */
export async function quickOpen(page, name, ready = async () => true) {
  await waitFor(`${name} in an editor`, async () => {
    await page.keyboard.press('Escape');
    await page.keyboard.press('F1');
    const input = page.locator('.quick-input-widget input');
    await input.waitFor({ state: 'visible', timeout: 5000 });
    await input.fill(name);
    const row = page.locator('.quick-input-list .monaco-list-row', { hasText: name }).first();
    await row.waitFor({ state: 'visible', timeout: 3000 });
    await page.keyboard.press('Enter');
    await page.locator('.tab.active', { hasText: name }).waitFor({ timeout: 5000 });
    return ready();
  });
}

/** Selects count lines of the active editor from line first (0-based), the last to its end. */
export async function selectLines(page, first, count) {
  await page.locator('.editor-instance .monaco-editor .view-lines').first().click();
  await page.keyboard.press('Control+Home');
  for (let i = 0; i < first; i++) await page.keyboard.press('ArrowDown');
  for (let i = 0; i < count - 1; i++) await page.keyboard.press('Shift+ArrowDown');
  await page.keyboard.press('Shift+End');
}

/** "Cairn: Ask about Selection" with question typed into its input box. */
export async function askSelection(page, question) {
  await palette(page, 'Cairn: Ask about Selection');
  const box = page.locator('.quick-input-widget input');
  await waitFor('the question input box', async () => (await box.getAttribute('placeholder') ?? '').includes('e.g.'), 10000);
  await box.fill(question);
  await page.keyboard.press('Enter');
}
