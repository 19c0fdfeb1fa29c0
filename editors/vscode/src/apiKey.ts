// "Cairn: Set API Key": stores the key in SecretStorage and restarts the
// server with it in its environment (logic/apiKey.ts).
import * as vscode from 'vscode';
import { KEY_ENV, secretKey } from './logic/apiKey';
import { settingValue } from './settings';

export async function setApiKey(secrets: vscode.SecretStorage, restart: () => Promise<void>): Promise<void> {
  const configured = settingValue('model.provider');
  let provider = typeof configured === 'string' && KEY_ENV[configured] ? configured : undefined;
  if (!provider) {
    const pick = await vscode.window.showQuickPick(Object.keys(KEY_ENV).map((p) => ({ label: p, description: KEY_ENV[p] })), {
      title: 'Cairn: API key for which provider?',
    });
    if (!pick) return;
    provider = pick.label;
  }
  const had = (await secrets.get(secretKey(provider))) !== undefined;
  const key = await vscode.window.showInputBox({
    title: `Cairn: API key for ${provider}`,
    prompt: `Stored in the editor's secret storage and given to Cairn's server as ${KEY_ENV[provider]}; never written to settings.${had ? ' Leave empty to remove the stored key.' : ''}`,
    password: true,
    ignoreFocusOut: true,
    placeHolder: provider === 'anthropic' ? 'sk-ant-…' : 'sk-…',
  });
  if (key === undefined) return;
  if (key.trim() === '') {
    if (!had) return;
    await secrets.delete(secretKey(provider));
  } else {
    await secrets.store(secretKey(provider), key.trim());
  }
  // The server reads the key from its environment when it starts.
  await restart();
  vscode.window.setStatusBarMessage(key.trim() ? `Cairn: API key for ${provider} saved; the server restarted` : `Cairn: API key for ${provider} removed`, 10000);
}
