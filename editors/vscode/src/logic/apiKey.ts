// The API key set from the editor: kept in VS Code's SecretStorage (the OS
// keychain), one per provider, and given to the server it spawns as the
// environment variable the provider reads. Never a setting, never logged.

/** The environment variable each network provider reads its key from (server/providers_net.go). */
export const KEY_ENV: Readonly<Record<string, string>> = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' };

/** The SecretStorage key of a provider's API key. */
export function secretKey(provider: string): string {
  return `cairn.apiKey.${provider}`;
}

/**
 * The variables to add to the server's environment: each provider's stored
 * key. A stored key wins over the editor's own environment (the user set it
 * here on purpose, e.g. after a 401).
 */
export async function keyEnv(get: (key: string) => PromiseLike<string | undefined>): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  for (const [provider, name] of Object.entries(KEY_ENV)) {
    const v = await get(secretKey(provider));
    if (v) env[name] = v;
  }
  return env;
}
