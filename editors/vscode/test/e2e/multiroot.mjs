// End-to-end test of a multi-root workspace in real VS Code (code-server)
// driven by headless Chromium: a `.code-workspace` with two folders (app,
// billing), a question asked from a file of the first whose answer needs the
// second. The model's search_code call must get a hit in the second folder
// (`billing/inv/invoice.go`), and its edit of that file, accepted in the
// editor, must land in the second folder on disk. Run through ../e2e.sh,
// after run.mjs; same environment (CAIRN_BIN, VSIX, WORK, CODE_SERVER,
// CHROMIUM, TEST_MODEL).
import fs from 'node:fs';
import path from 'node:path';
import { E, cairnSettings, logger, openWorkbench, askSelection, palette as paletteOn, quickOpen, selectLines, startCodeServer, startModel, waitFor, writeSettings } from './lib.mjs';

const { WORK, STEP_TIMEOUT } = E;

const MAIN = 'package main\n\nimport "fmt"\n\nfunc main() {\n\tfmt.Println(total(3))\n}\n';
const INVOICE = 'package inv\n\n// Surcharge is the late payment penalty.\nfunc Surcharge(days int) int {\n\treturn days * 3\n}\n';
const TURNS = [
  { toolCalls: [{ name: 'search_code', arguments: { query: 'late payment penalty' } }] },
  { toolCalls: [{ name: 'edit_file', arguments: { path: 'billing/inv/invoice.go', oldText: 'days * 3', newText: 'days * 4' } }] },
  { text: 'The penalty is `Surcharge` in billing/inv/invoice.go; I raised it to 4 per day.' },
];

const log = logger('e2e-multiroot');

const root = path.join(WORK, 'multiroot');
const dirs = {};
for (const d of ['app', 'billing', 'user-data', 'extensions', 'home', 'state', 'tmp', 'cache']) {
  dirs[d] = path.join(root, d);
  fs.mkdirSync(dirs[d], { recursive: true });
}
fs.writeFileSync(path.join(dirs.app, 'main.go'), MAIN);
fs.writeFileSync(path.join(dirs.app, 'go.mod'), 'module example.com/app\n\ngo 1.22\n');
fs.mkdirSync(path.join(dirs.billing, 'inv'));
const invoicePath = path.join(dirs.billing, 'inv', 'invoice.go');
fs.writeFileSync(invoicePath, INVOICE);
const workspaceFile = path.join(root, 'multi.code-workspace');
fs.writeFileSync(workspaceFile, JSON.stringify({ folders: [{ path: 'app' }, { path: 'billing' }] }, null, 2));

const model = await startModel(root, TURNS);
writeSettings(dirs['user-data'], cairnSettings(model.port));

log('installing the extension and starting code-server');
const cs = await startCodeServer(dirs, workspaceFile, path.join(root, 'code-server.log'));
const port = cs.port;

let browser;
let page;
const cleanup = async () => {
  try { if (browser) await browser.close(); } catch { /* gone */ }
  try { process.kill(-cs.proc.pid, 'SIGTERM'); } catch { /* gone */ }
  try { model.proc.kill('SIGTERM'); } catch { /* gone */ }
};

const palette = (title) => paletteOn(page, title);

async function chatText() {
  for (const f of page.frames()) {
    try {
      if (await f.$('#conversation')) return (await f.locator('#conversation').innerText()).replace(/\u00a0/g, ' ');
    } catch { /* detached */ }
  }
  return '';
}

const modelRequests = model.requests;

let failed = false;
try {
  ({ browser, page } = await openWorkbench(port, `workspace=${encodeURIComponent(workspaceFile)}`, log));
  log('ok - workbench loaded with two folders');
  await quickOpen(page, 'main.go');
  await palette('Cairn: Show Chat');
  await page.locator('.statusbar-item', { hasText: 'Cairn: openai/test-model' }).first().waitFor({ timeout: STEP_TIMEOUT });
  log('ok - Cairn server running');

  await selectLines(page, 4, 3);
  await askSelection(page, 'Where is the late payment penalty? Raise it to 4.');
  log('asked');

  await waitFor('the answer in the chat view', async () => (await chatText()).includes('I raised it to 4 per day'));
  const reqs = modelRequests();
  const hit = (reqs[1]?.messages ?? []).find((m) => m.role === 'tool');
  if (!hit || !String(hit.content).includes('billing/inv/invoice.go:3:')) throw new Error(`search did not reach the second folder: ${JSON.stringify(hit)}`);
  log('ok - search_code found the symbol in the second folder');

  // The proposal opens in the diff editor; accept it from the title bar.
  await page.locator('.tab.active', { hasText: 'Cairn proposed' }).waitFor({ timeout: STEP_TIMEOUT });
  const accept = page.locator('.editor-actions .action-label[aria-label*="Accept Proposed Edit"]').first();
  await accept.waitFor({ state: 'visible', timeout: 10000 });
  await accept.click();
  await waitFor('the accepted edit on disk in the second folder', async () => fs.readFileSync(invoicePath, 'utf8').includes('days * 4'));
  log('ok - the edit of billing/inv/invoice.go, accepted, landed in the second folder');
} catch (e) {
  failed = true;
  console.error(e);
  try { if (page) await page.screenshot({ path: path.join(root, 'failure.png') }); } catch { /* gone */ }
} finally {
  await cleanup();
}
if (failed) {
  log('FAILED; logs in', root);
  process.exit(1);
}
log('passed');
process.exit(0);
