// The chat view's Content-Security-Policy (kept apart from the view so a
// unit test reads the exact string the view sends). Model text is untrusted:
// displaying it must fetch nothing remote.

/**
 * chatCSP is the chat view's Content-Security-Policy: nothing remote
 * (img-src is the webview's own resources and data: only; connect, media,
 * font, frame and form targets are none).
 */
export function chatCSP(cspSource: string, nonce: string): string {
  return [
    "default-src 'none'",
    `style-src 'nonce-${nonce}'`,
    `script-src 'nonce-${nonce}'`,
    `img-src ${cspSource} data:`,
    "connect-src 'none'",
    "media-src 'none'",
    "font-src 'none'",
    "frame-src 'none'",
    "form-action 'none'",
    "base-uri 'none'",
  ].join('; ') + ';';
}
