// The cairn.* settings as the server gets them.
import * as vscode from 'vscode';
import { isMachineKey, resolveMachineSetting } from './logic/machineSettings';
import { buildSettings } from './logic/settings';
import { app } from './state';

/**
 * One cairn.* setting. The settings that start processes or decide where
 * code and keys go (logic/machineSettings) come from user or machine scope
 * only; a workspace's value counts once the user accepted it.
 */
export function settingValue(key: string): unknown {
  const cfg = vscode.workspace.getConfiguration('cairn');
  if (isMachineKey(key)) {
    return resolveMachineSetting(key, cfg.inspect(key), app.workspaceMemory ?? { get: () => undefined }).value;
  }
  return cfg.get(key);
}

export function settings(): Record<string, unknown> {
  return buildSettings(settingValue);
}
