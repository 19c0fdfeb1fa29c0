// Finding the cairn binary: the cairn.serverPath setting, else PATH, else a clear message.
import * as path from 'path';

export interface ResolveEnv {
  /** The PATH environment variable. */
  pathEnv: string | undefined;
  /** Windows PATHEXT, when on Windows. */
  pathExt?: string;
  platform: string;
  /** True when the file exists and is executable. */
  isExecutable(file: string): boolean;
  /** Expands a leading ~ (home directory). */
  home?: string;
}

export type Resolved = { ok: true; path: string; source: 'setting' | 'PATH' } | { ok: false; message: string };

export const INSTALL_HINT =
  'Install it with `go install ./cmd/cairn` in a clone of Cairn ' +
  '(it lands in $(go env GOPATH)/bin), ' +
  'then put it on PATH or set "cairn.serverPath" to the binary.';

export function expandHome(p: string, home?: string): string {
  if (home && (p === '~' || p.startsWith('~/'))) return path.join(home, p.slice(1));
  return p;
}

export function resolveServerPath(setting: string | undefined, env: ResolveEnv): Resolved {
  const configured = (setting ?? '').trim();
  if (configured) {
    const p = expandHome(configured, env.home);
    if (env.isExecutable(p)) return { ok: true, path: p, source: 'setting' };
    // A bare name in the setting is looked up on PATH too.
    if (!p.includes('/') && !p.includes('\\')) {
      const found = searchPath(p, env);
      if (found) return { ok: true, path: found, source: 'PATH' };
    }
    return { ok: false, message: `Cairn: "cairn.serverPath" is set to ${configured}, but no executable is there. ${INSTALL_HINT}` };
  }
  const found = searchPath('cairn', env);
  if (found) return { ok: true, path: found, source: 'PATH' };
  return { ok: false, message: `Cairn: the \`cairn\` binary was not found on PATH. ${INSTALL_HINT}` };
}

export function searchPath(name: string, env: ResolveEnv): string | undefined {
  const win = env.platform === 'win32';
  const sep = win ? ';' : ':';
  const exts = win ? (env.pathExt ?? '.EXE;.CMD;.BAT').split(';').filter(Boolean) : [''];
  for (const dir of (env.pathEnv ?? '').split(sep)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = (win ? path.win32 : path.posix).join(dir, name + ext);
      if (env.isExecutable(candidate)) return candidate;
    }
  }
  return undefined;
}
