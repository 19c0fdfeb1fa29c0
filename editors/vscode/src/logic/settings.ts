// The cairn.* settings, turned into the object the server reads from
// initializationOptions and workspace/didChangeConfiguration (section cairn).

/** Reads one setting by its key below "cairn." (e.g. "model.provider"). */
export type Getter = (key: string) => unknown;

export const SETTING_KEYS = [
  'model.provider',
  'model.name',
  'model.baseURL',
  'model.contextWindow',
  'model.maxOutputTokens',
  'scripted.path',
  'approval.mode',
  'mcpServers',
  'trace.otlpEndpoint',
  'search.zoekt',
  'index.include',
  'index.exclude',
] as const;

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (typeof v === 'string') return v.trim() === '';
  if (typeof v === 'object' && !Array.isArray(v)) return Object.keys(v as object).length === 0;
  return false;
}

/**
 * Builds the nested settings object, leaving out empty values so the
 * server's environment fallbacks (CAIRN_PROVIDER, ...) still apply.
 */
export function buildSettings(get: Getter): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of SETTING_KEYS) {
    let v = get(key);
    if (isEmpty(v)) continue;
    if (typeof v === 'string') v = v.trim();
    setPath(out, key, v);
  }
  return out;
}

export function setPath(obj: Record<string, unknown>, dotted: string, value: unknown): void {
  const parts = dotted.split('.');
  let cur = obj;
  for (const p of parts.slice(0, -1)) {
    if (typeof cur[p] !== 'object' || cur[p] === null) cur[p] = {};
    cur = cur[p] as Record<string, unknown>;
  }
  cur[parts[parts.length - 1]] = value;
}

/** A short model label for the status bar. */
export function modelLabel(settings: Record<string, unknown>): string {
  const model = (settings.model ?? {}) as Record<string, unknown>;
  const provider = typeof model.provider === 'string' ? model.provider : '';
  const name = typeof model.name === 'string' ? model.name : '';
  if (provider && name) return `${provider}/${name}`;
  return name || provider || 'default model';
}
