import { createPrivateKey } from 'node:crypto';
import { ConfigError, feature, pattern, text } from '../variables';

const HTTP_URL = /^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/;
const EMULATOR = '(the provider emulator in tests and `npm start`)';

/** GitHub cloud, the GitHub App and OAuth app the web flow uses, and where that flow starts and ends. */
export const githubConfig = feature(
  'GitHub and OAuth',
  {
    GITHUB_API_URL: pattern(HTTP_URL, 'must be an http(s) URL without query or fragment', {
      default: 'https://api.github.com',
      doc: `GitHub's REST API ${EMULATOR}`,
    }),
    GITHUB_WEB_URL: pattern(HTTP_URL, 'must be an http(s) URL without query or fragment', {
      default: 'https://github.com',
      doc: `GitHub's web pages, where the OAuth authorize and App install pages are ${EMULATOR}`,
    }),
    GITHUB_CLIENT_ID: pattern(/^[A-Za-z0-9._-]{1,100}$/, 'must be an OAuth client id', {
      doc: 'the client id of the GitHub App (or OAuth app) for `authMethod` `OAUTH` and `APP_INSTALLATION`; without it and `GITHUB_CLIENT_SECRET` those are a 422',
    }),
    GITHUB_CLIENT_SECRET: pattern(/^\S{1,200}$/, 'must be an OAuth client secret without spaces', { doc: 'its client secret' }),
    GITHUB_APP_SLUG: pattern(/^[a-z0-9][a-z0-9-]{0,99}$/, 'must be a GitHub App slug', {
      doc: "the GitHub App's slug: `APP_INSTALLATION` sends the browser to the App's install page (without it, to the OAuth authorize page)",
    }),
    GITHUB_APP_ID: pattern(/^[1-9][0-9]{0,19}$/, 'must be the numeric GitHub App id', {
      doc: "the GitHub App that `APP_INSTALLATION` integrations act as: its id, with `GITHUB_APP_PRIVATE_KEY` (both or neither); merge-queue lands, candidate builds and commit statuses then use installation tokens (kept in process memory only, never stored or logged) instead of the connecting person's token",
      comment: [
        'The GitHub App APP_INSTALLATION integrations act as (installation tokens for lands and statuses); both or neither.',
        'The private key as PEM, newlines written as \\n on one line. Never logged.',
      ].join('\n'),
    }),
    GITHUB_APP_PRIVATE_KEY: text({
      allowed: 'an RSA private key as PEM (`\\n` escapes allowed for one-line env files)',
      doc: "that App's private key (checked at boot, never logged)",
    }),
    PUBLIC_URL: pattern(/^https?:\/\/[^\s/?#]+$/, 'must be an origin such as https://api.example.com', {
      shown: '`http://localhost:$PORT`',
      doc: "the API's public origin; the OAuth callback given to providers is `$PUBLIC_URL/scm/callback`",
      comment: 'empty = http://localhost:$PORT',
    }),
    OAUTH_REDIRECT_ALLOWED_ORIGINS: pattern(
      /^https?:\/\/[^\s/?#]+(\s*,\s*https?:\/\/[^\s/?#]+)*$/,
      'must be comma-separated origins such as https://app.example.com',
      {
        shown: '(none)',
        doc: 'origins the OAuth callback may redirect back to, besides paths on this site',
      },
    ),
  },
  (v) => ({
    github: {
      apiUrl: v.GITHUB_API_URL.replace(/\/$/, ''),
      webUrl: v.GITHUB_WEB_URL.replace(/\/$/, ''),
      clientId: v.GITHUB_CLIENT_ID,
      clientSecret: v.GITHUB_CLIENT_SECRET,
      appSlug: v.GITHUB_APP_SLUG,
      ...githubApp(v.GITHUB_APP_ID, v.GITHUB_APP_PRIVATE_KEY),
    },
    /** Origins (besides relative paths) the OAuth callback may redirect to. */
    redirectAllowedOrigins: (v.OAUTH_REDIRECT_ALLOWED_ORIGINS ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  }),
);

/** GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY together, the key checked to be an RSA private key (its value never in the message). */
function githubApp(appId: string | undefined, privateKey: string | undefined): { app?: { appId: string; privateKey: string } } {
  if (!appId && !privateKey) return {};
  if (!appId || !privateKey)
    throw new ConfigError(
      `Invalid configuration: ${appId ? 'GITHUB_APP_PRIVATE_KEY' : 'GITHUB_APP_ID'} is not set (GITHUB_APP_ID and GITHUB_APP_PRIVATE_KEY go together)`,
    );
  const pem = privateKey.includes('\\n') ? privateKey.replace(/\\n/g, '\n') : privateKey;
  let key;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new ConfigError('Invalid configuration: GITHUB_APP_PRIVATE_KEY is not a PEM private key');
  }
  if (key.asymmetricKeyType !== 'rsa') throw new ConfigError('Invalid configuration: GITHUB_APP_PRIVATE_KEY must be an RSA key (GitHub App keys are; RS256)');
  return { app: { appId, privateKey: pem } };
}
