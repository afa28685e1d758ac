/**
 * The query of GET /scm/callback, read by hand: this route alone ignores parameters it does not
 * know (providers add some, e.g. GitHub's `setup_action` values and future ones), and a malformed
 * known parameter is an outcome of the flow (a redirect with `integration_error=invalid_callback`)
 * rather than a 400, once the state says where to send the browser back. Pure: no Nest, no I/O.
 */

export interface CallbackParameters {
  code?: string;
  state?: string;
  installation_id?: string;
  setup_action?: string;
  error?: string;
  error_description?: string;
  error_uri?: string;
}

type Name = keyof CallbackParameters;

interface Rule {
  maxLength: number;
  pattern?: RegExp;
  why?: string;
}

export const CALLBACK_PARAMETER_RULES: Record<Name, Rule> = {
  code: { maxLength: 512 },
  state: { maxLength: 512 },
  installation_id: { maxLength: 20, pattern: /^[0-9]{1,20}$/, why: 'must be a number' },
  setup_action: { maxLength: 32, pattern: /^[a-z_]{1,32}$/, why: 'must be a word such as install, update or request' },
  error: { maxLength: 100 },
  error_description: { maxLength: 1000 },
  error_uri: { maxLength: 1000 },
};

export interface ParsedCallbackQuery {
  /** The known parameters that are well formed. */
  params: CallbackParameters;
  /** One line per malformed known parameter, `name: why` (never the value). */
  problems: { name: Name; why: string }[];
}

/** Reads the known parameters of `query` (Express's parsed query) and ignores every other one. */
export function parseCallbackQuery(query: Record<string, unknown>): ParsedCallbackQuery {
  const params: CallbackParameters = {};
  const problems: ParsedCallbackQuery['problems'] = [];
  for (const name of Object.keys(CALLBACK_PARAMETER_RULES) as Name[]) {
    if (!Object.prototype.hasOwnProperty.call(query, name)) continue;
    const value = query[name];
    const rule = CALLBACK_PARAMETER_RULES[name];
    const why =
      typeof value !== 'string'
        ? 'must be given once, as a plain value'
        : value.includes('\u0000')
          ? 'must not contain the NUL character (U+0000)'
          : value.length > rule.maxLength
            ? `must be at most ${rule.maxLength} characters`
            : rule.pattern && !rule.pattern.test(value)
              ? (rule.why ?? 'is malformed')
              : undefined;
    if (why) problems.push({ name, why });
    else if (value !== '') params[name] = value as string;
  }
  return { params, problems };
}

/** What the callback does with GitHub's `setup_action`. */
export type SetupOutcome = 'proceed' | 'requested' | 'unsupported';

/**
 * `install` and `update` (or none: a plain OAuth authorization) proceed; `request` means a member
 * of the GitHub organization who is not an owner asked for the app to be installed: there is no
 * installation yet, and only an owner's approval on GitHub creates one. Anything else is unknown.
 */
export function setupOutcome(setupAction: string | undefined): SetupOutcome {
  if (setupAction === undefined || setupAction === 'install' || setupAction === 'update') return 'proceed';
  return setupAction === 'request' ? 'requested' : 'unsupported';
}

/** The `integration_error` reasons the callback can add to the original URL (documented in docs/integrations-oauth.md). */
export const CALLBACK_ERROR_REASONS = {
  browser_mismatch:
    'The callback came from a browser that did not start the flow (no or another flow cookie from GET /scm/authorize): the flow is closed unused.',
  state_expired: 'The state is older than 10 minutes: the flow is closed; start again.',
  state_used: 'The state was already used: nothing changes (the first callback decided the outcome).',
  invalid_callback: 'A known callback parameter was malformed (repeated, too long, not a number): the flow is closed.',
  missing_code: 'The callback carried neither a code nor an error: the flow is closed.',
  installation_requested: 'GitHub sent setup_action=request: an owner of the GitHub account must approve the installation; connect again once approved.',
  unsupported_setup_action: 'GitHub sent a setup_action this server does not know: the flow is closed.',
  not_initiated: 'The integration is no longer INITIATED.',
  installation_missing: 'An app installation flow came back without an installation id.',
  installation_not_accessible: 'The installation id is not accessible to the user who authorized.',
  token_exchange_failed: 'The provider refused the code.',
  provider_unavailable: 'The provider could not be reached while exchanging the code.',
  not_configured: 'No GitHub app is configured on this server.',
  '<provider error>': "The provider's own error code (e.g. access_denied), letters, digits and _.- only.",
} as const;
