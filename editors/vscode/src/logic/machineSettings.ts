// Settings that start processes or decide where code and keys are sent
// come only from the user (or the machine): a workspace's
// .vscode/settings.json comes with the repository, and whoever wrote the
// repository must not choose the MCP servers Cairn starts, the endpoint that
// receives the API key, the script or binary that runs, or where traces go.
// A workspace value is a suggestion: the user is asked once per workspace
// and value, and the answer is remembered (workspaceState).

/** The keys below "cairn." that only user or machine settings may set. */
export const MACHINE_KEYS = ['serverPath', 'mcpServers', 'model.baseURL', 'scripted.path', 'trace.otlpEndpoint', 'search.zoekt'] as const;

export type MachineKey = (typeof MACHINE_KEYS)[number];

export function isMachineKey(key: string): key is MachineKey {
  return (MACHINE_KEYS as readonly string[]).includes(key);
}

/** The parts of WorkspaceConfiguration.inspect(key) this logic reads. */
export interface Inspected {
  defaultValue?: unknown;
  globalValue?: unknown;
  workspaceValue?: unknown;
  workspaceFolderValue?: unknown;
  defaultLanguageValue?: unknown;
  globalLanguageValue?: unknown;
  workspaceLanguageValue?: unknown;
  workspaceFolderLanguageValue?: unknown;
}

/** Where answers are remembered: the extension's workspaceState. */
export interface Memory {
  get(key: string): unknown;
}

/** A workspace value the user has not answered for yet. */
export interface Suggestion {
  key: MachineKey;
  value: unknown;
  /** The value in effect meanwhile (user, machine or default). */
  current: unknown;
}

export interface Resolution {
  value: unknown;
  suggestion?: Suggestion;
}

/** A JSON text that does not depend on the order of object keys. */
export function stableJSON(v: unknown): string {
  if (v === undefined) return 'undefined';
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(stableJSON).join(',') + ']';
  const o = v as Record<string, unknown>;
  return '{' + Object.keys(o).sort().map((k) => JSON.stringify(k) + ':' + stableJSON(o[k])).join(',') + '}';
}

/** The workspaceState key remembering the answer for one key and value. */
export function memoryKey(key: MachineKey, value: unknown): string {
  return `cairn.workspaceSuggestion:${key}:${stableJSON(value)}`;
}

export type Answer = 'accepted' | 'declined';

function workspaceValue(i: Inspected): unknown {
  // Any value a workspace or folder gave, language-specific ones included.
  for (const v of [i.workspaceFolderLanguageValue, i.workspaceFolderValue, i.workspaceLanguageValue, i.workspaceValue]) {
    if (v !== undefined) return v;
  }
  return undefined;
}

/**
 * The value to use for a machine key: the user's (or the default) unless the
 * workspace suggests another one the user accepted for this workspace. An
 * unanswered suggestion is returned for the caller to ask about; meanwhile
 * the user's value stands.
 */
export function resolveMachineSetting(key: MachineKey, inspected: Inspected | undefined, memory: Memory): Resolution {
  const i = inspected ?? {};
  const user = i.globalLanguageValue ?? i.globalValue ?? i.defaultLanguageValue ?? i.defaultValue;
  const ws = workspaceValue(i);
  if (ws === undefined || stableJSON(ws) === stableJSON(user)) return { value: user };
  const answer = memory.get(memoryKey(key, ws));
  if (answer === 'accepted') return { value: ws };
  if (answer === 'declined') return { value: user };
  return { value: user, suggestion: { key, value: ws, current: user } };
}

/** Shortens a value for a prompt, on one line. */
export function showValue(v: unknown, max = 300): string {
  let s = typeof v === 'string' ? JSON.stringify(v) : stableJSON(v);
  s = s.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
  return s.length > max ? s.slice(0, max) + '…' : s;
}

const WHY: Record<MachineKey, string> = {
  serverPath: 'it is the program the extension runs as the Cairn server',
  mcpServers: 'each entry is a process Cairn starts, outside the command sandbox',
  'model.baseURL': 'your API key and your code are sent to this address',
  'scripted.path': 'the script decides every answer and tool call of the model',
  'trace.otlpEndpoint': 'traces, which hold prompts and code, are sent to this address',
  'search.zoekt': "the agent's code searches (words of your code and questions) are sent to this address",
};

/** The question for one suggestion: what the workspace asks, and why it matters. */
export function suggestionPrompt(s: Suggestion): { message: string; detail: string } {
  return {
    message: `This workspace suggests cairn.${s.key} = ${showValue(s.value)}: use it?`,
    detail:
      `The value comes from this workspace's settings (it may come with the repository), and ${WHY[s.key]}. ` +
      `Your own setting (${showValue(s.current)}) stays in effect unless you choose to use the workspace's. ` +
      `Cairn remembers the answer for this workspace and value.`,
  };
}
