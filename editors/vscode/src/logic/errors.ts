// A failed run, said as one sentence a user can act on. The server's error is
// a chain ("auth (HTTP 401): openai: authentication failed (…); check …");
// the chat shows the sentence, offers Retry, Open Settings where a setting
// is the likely cause, and Set API Key for a refused key; the raw chain stays
// available as detail.

export interface HumanError {
  /** One sentence, ending with a full stop. */
  text: string;
  /** The setting to open (an id for workbench.action.openSettings), when one is the cause. */
  setting?: string;
  /** The server's own text, for the detail. */
  detail: string;
  /** A command that fixes the cause (an id and its button's label), e.g. setting the API key. */
  fix?: { command: string; label: string };
}

/** humanError turns a failed run's error class and text into a sentence. */
export function humanError(cls: string | undefined, raw: string | undefined): HumanError {
  const detail = (raw ?? '').trim();
  const status = /HTTP (\d{3})/.exec(detail)?.[1];
  const http = status ? ` (HTTP ${status})` : '';
  const text = detail.toLowerCase();
  switch (cls) {
    case 'auth':
      if (text.includes('quota')) {
        return { text: `The model provider says the account's quota is used up${http}.`, detail };
      }
      return {
        text: `The model provider refused the API key${http}: set the key with "Cairn: Set API Key" (or OPENAI_API_KEY / ANTHROPIC_API_KEY where Cairn's server starts), or check the endpoint in Cairn's model settings.`,
        setting: 'cairn.model',
        detail,
        fix: { command: 'cairn.setApiKey', label: 'Set API Key' },
      };
    case 'rate_limit':
      return { text: `The model provider is limiting requests${http}; wait a moment and retry.`, detail };
    case 'network':
      return {
        text: `Cairn could not reach the model endpoint${http}: check that it is running and that cairn.model.baseURL points at it.`,
        setting: 'cairn.model.baseURL',
        detail,
      };
    case 'context_length':
      return {
        text: 'The question and its context are too long for the model: ask about a smaller selection, or set the model\'s context window.',
        setting: 'cairn.model.contextWindow',
        detail,
      };
    case 'config':
      return { text: 'The model provider is not set up: choose a provider and model in Cairn\'s settings.', setting: 'cairn.model', detail };
    case 'refusal':
      return { text: 'The model declined to answer this request.', detail };
  }
  if (/not found|404/.test(text) && /model/.test(text)) {
    return { text: `The model provider does not know the model${http}: check cairn.model.name.`, setting: 'cairn.model.name', detail };
  }
  // Unclassified: the innermost message, without the chain's prefixes.
  const last = detail.split(/:\s+/).filter(Boolean).pop() ?? '';
  const inner = last ? last.charAt(0).toUpperCase() + last.slice(1) : 'No reason was given';
  return { text: `The run failed: ${inner.replace(/[.\s]+$/, '')}.`, detail };
}
