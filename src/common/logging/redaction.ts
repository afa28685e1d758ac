import { API_KEY_TOKEN_SHAPE } from '@/common/auth/api-key-token';

const REDACTED = '[redacted]';
// Query parameters that carry credentials whatever their shape (OAuth codes and states, mistyped tokens).
const SECRET_PARAMETERS = /([?&;](?:access_token|api_key|apikey|token|authorization|code|state|client_secret|secret|password)=)[^&;#]*/gi;

/**
 * Git provider tokens by the prefixes their vendors give them for secret scanning: GitHub's
 * personal, OAuth, user-to-server, server-to-server and refresh tokens (`ghp_`, `gho_`, `ghu_`,
 * `ghs_`, `ghr_`), its fine-grained personal tokens (`github_pat_`) and GitLab's (`glpat-`).
 */
const PROVIDER_TOKEN_SHAPE = /(?:gh[pousr]_[A-Za-z0-9_]{20,255}|github_pat_[A-Za-z0-9_]{20,255}|glpat-[A-Za-z0-9_.-]{20,255})/g;

/**
 * Merge queue view-link tokens (`dpqv_…`, merge-queues/view-links/view-link-token.ts), valid or
 * not: they sit in the page's URL path, which the access log writes.
 */
export const VIEW_LINK_TOKEN_SHAPE = /dpqv_[A-Za-z0-9_-]{1,200}/g;

/** Removes anything shaped like one of our API or view-link tokens, or a git provider's, from a text. */
export function redactTokens(text: string): string {
  return text.replace(API_KEY_TOKEN_SHAPE, REDACTED).replace(PROVIDER_TOKEN_SHAPE, REDACTED).replace(VIEW_LINK_TOKEN_SHAPE, REDACTED);
}

/** A URL fit for logs: tokens anywhere (path, any parameter, percent-encoded or not) and credential parameters removed. */
export function redactUrl(url: string): string {
  let out = redactTokens(url).replace(SECRET_PARAMETERS, `$1${REDACTED}`);
  if (out.includes('%')) {
    try {
      const decoded = decodeURIComponent(out);
      const redacted = redactTokens(decoded);
      if (redacted !== decoded) out = redacted;
    } catch {
      // not valid percent-encoding: nothing can hide behind it
    }
  }
  return out;
}
