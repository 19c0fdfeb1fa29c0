import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { chatCSP } from '../../src/logic/csp';
import { FORBIDDEN_TAGS, markdownRenderer } from '../../src/logic/markdown';

const src = (rel: string) => fs.readFileSync(path.join(__dirname, '..', '..', '..', rel), 'utf8');

/** directives parses a CSP into directive → sources. */
function directives(csp: string): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const part of csp.split(';')) {
    const [name, ...sources] = part.trim().split(/\s+/);
    if (name) m.set(name, sources);
  }
  return m;
}

test('the chat view CSP loads images only from the webview itself or data:', () => {
  const d = directives(chatCSP('https://file+.vscode-resource.vscode-cdn.net', 'abc'));
  assert.deepEqual(d.get('default-src'), ["'none'"]);
  assert.deepEqual(d.get('img-src'), ['https://file+.vscode-resource.vscode-cdn.net', 'data:']);
  for (const [name, sources] of d) {
    for (const s of sources) {
      assert.ok(!['https:', 'http:', '*', 'blob:'].includes(s), `${name} allows ${s}`);
    }
  }
  for (const name of ['connect-src', 'media-src', 'font-src', 'frame-src', 'form-action']) {
    assert.deepEqual(d.get(name), ["'none'"], name);
  }
});

test('the chat view sends that CSP (no hand-written policy with remote images)', () => {
  const view = src('src/chatView.ts');
  const meta = view.match(/http-equiv="Content-Security-Policy" content="([^"]*)"/);
  assert.ok(meta, 'the chat view has a CSP meta tag');
  assert.equal(meta[1], '${chatCSP(webview.cspSource, nonce)}');
  const page = src('src/webview/main.ts');
  assert.match(page, /markdownRenderer\(\)/, 'the page renders model text with markdownRenderer');
  assert.match(page, /FORBID_TAGS: FORBIDDEN_TAGS/, 'the sanitizer drops the tags that load on display');
  assert.doesNotMatch(page, /new MarkdownIt\(/, 'no second renderer with images on');
});

test('a Markdown image in model text renders as a link to click, never an <img>', () => {
  const md = markdownRenderer();
  const html = md.render('Here: ![chart](https://x.example/?q=SECRET) and ![](http://y.example/p.png "t")');
  assert.doesNotMatch(html, /<img/i);
  assert.match(html, /<a href="https:\/\/x\.example\/\?q=SECRET"[^>]*>\[image: chart\]<\/a>/);
  assert.match(html, /<a href="http:\/\/y\.example\/p\.png"[^>]*>\[image: untitled\]<\/a>/);
  // Reference-style images and images inside links are images too.
  const ref = md.render('![a][r] [![b](https://z.example/b.png)](https://z.example/)\n\n[r]: https://z.example/a.png');
  assert.doesNotMatch(ref, /<img/i);
  // Raw HTML stays text.
  const raw = md.render('<img src="https://x.example/?q=SECRET">');
  assert.doesNotMatch(raw, /<img/i);
  // The alt text cannot break out of the link.
  const alt = md.render('![x" onerror="alert(1)](https://x.example/a.png)');
  assert.doesNotMatch(alt, /onerror="/);
  assert.doesNotMatch(alt, /<img/i);
  for (const tag of ['img', 'video', 'audio', 'source', 'picture', 'iframe', 'svg']) {
    assert.ok(FORBIDDEN_TAGS.includes(tag), `the sanitizer drops <${tag}>`);
  }
});

test('a fenced code block is highlighted, escaped, and carries Copy and Insert at cursor', () => {
  const html = markdownRenderer().render('Here:\n\n```go\nfunc main() {\n\tfmt.Println("<b>x</b>")\n}\n```\n');
  assert.match(html, /<div class="codeblock">/);
  assert.match(html, /<span class="code-lang">go<\/span>/);
  assert.match(html, /data-code-action="copy"[^>]*>Copy</);
  assert.match(html, /data-code-action="insert"[^>]*>Insert at cursor</);
  assert.match(html, /<span class="hljs-keyword">func<\/span>/);
  assert.match(html, /<span class="hljs-string">&quot;&lt;b&gt;x&lt;\/b&gt;&quot;<\/span>/);
  assert.ok(!html.includes('<b>x'), 'code text must be escaped');
});

test('a code block in an unknown language is escaped plain text, with the buttons', () => {
  const html = markdownRenderer().render('```nosuchlang\n<script>alert(1)</script>\n```\n');
  assert.match(html, /data-code-action="copy"/);
  assert.ok(!html.includes('<script>'), html);
  assert.ok(!html.includes('hljs-'), html);
});

test('model text cannot forge a code action button (raw HTML is off)', () => {
  const html = markdownRenderer().render('<button data-code-action="insert">x</button>');
  assert.ok(!html.includes('<button'), html);
});
