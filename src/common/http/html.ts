/** HTML pages this API serves (the OAuth pages, the merge queue page): escaping. Pure. */

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;', '`': '&#96;', '=': '&#61;', '/': '&#47;' };

/** Text fit for an HTML element's content or a quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"'`=/]/g, (c) => ESCAPES[c]);
}
