/**
 * The plain page a browser gets from GET /scm/authorize or GET /scm/callback when the link's state
 * identifies no authorization flow (so there is nowhere to send it back to). It shows the error
 * code, the catalogue message and the request id, never a request value, and escapes everything
 * it shows. Pure: no Nest, no I/O.
 */

import { escapeHtml } from '@/common/http/html';

export { escapeHtml };

/** Headers of the page: HTML, not sniffed, not cached, no scripts, styles, frames or referrer. */
export const ERROR_PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'X-Content-Type-Options': 'nosniff',
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
} as const;

export function renderOAuthErrorPage(error: { code: string; message: string; requestId?: string }): string {
  const requestId = error.requestId ? `<p>Request id: <code>${escapeHtml(error.requestId)}</code></p>` : '';
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><meta name="robots" content="noindex"><title>Could not connect the git provider</title></head>
<body>
<h1>Could not connect the git provider</h1>
<p>${escapeHtml(error.message)}</p>
<h2>What to do</h2>
<p>Close this page, go back to the integrations of your organization in the Delivery Platform and start the connection again (POST /integrations gives a new link). A link works once, in the browser that opens it, for 10 minutes. If it keeps failing, give support the error code and request id below.</p>
<p>Error code: <code>${escapeHtml(error.code)}</code></p>
${requestId}
</body>
</html>
`;
}
