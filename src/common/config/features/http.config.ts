import { feature, int, pattern } from '../variables';

export const httpConfig = feature(
  'HTTP',
  {
    PORT: int({ min: 0, max: 65535, default: 3000, doc: 'HTTP port of the API' }),
    HTTP_HEADERS_TIMEOUT_MS: int({
      min: 1000,
      max: 600_000,
      default: 10_000,
      doc: 'a client must send its request headers within this (408 and the connection is closed otherwise); at most `HTTP_REQUEST_TIMEOUT_MS`',
    }),
    HTTP_REQUEST_TIMEOUT_MS: int({ min: 1000, max: 3_600_000, default: 30_000, doc: 'a client must send its whole request within this' }),
    HTTP_KEEP_ALIVE_TIMEOUT_MS: int({ min: 1000, max: 600_000, default: 5_000, doc: 'how long an idle keep-alive connection stays open' }),
    // class-transformer recurses per level: far past a few hundred levels it overflows the stack.
    BODY_MAX_DEPTH: int({
      min: 2,
      max: 200,
      default: 32,
      doc: 'deepest nesting of objects/arrays in a JSON request body; deeper is `400` naming where (see [Bad input](api-conventions.md#bad-input))',
    }),
    BODY_MAX_KEYS: int({
      min: 10,
      max: 100_000,
      default: 1_000,
      doc: 'object keys plus array items in a JSON request body, counted over the whole body; more is `413`',
    }),
    TRUST_PROXY: pattern(
      /^(true|false|\d{1,2}|(loopback|linklocal|uniquelocal|[0-9A-Fa-f.:]+(\/\d{1,3})?)(\s*,\s*(loopback|linklocal|uniquelocal|[0-9A-Fa-f.:]+(\/\d{1,3})?))*)$/,
      'must be true, false, a number of hops, or comma-separated addresses/subnets (or loopback, linklocal, uniquelocal)',
      {
        default: 'false',
        doc: 'Express `trust proxy`: which proxies in front of the API are believed when they name the client in `X-Forwarded-For` (`true`: any, a number: that many hops, addresses/subnets: those); decides the client address the per-address limit sees',
      },
    ),
    CORS_ORIGINS: pattern(/^https?:\/\/[^\s/?#,]+(\s*,\s*https?:\/\/[^\s/?#,]+)*$/, 'must be comma-separated origins such as https://app.example.com', {
      shown: '(none: CORS off)',
      doc: 'comma-separated browser origins (`https://app.example.com`) allowed to call the API cross-origin; unset, the API sends no `Access-Control-*` header and browsers refuse cross-origin reads',
      comment: 'Browser origins allowed by CORS, comma-separated; empty = CORS off',
    }),
  },
  (v) => ({
    port: v.PORT,
    httpHeadersTimeoutMs: v.HTTP_HEADERS_TIMEOUT_MS,
    httpRequestTimeoutMs: v.HTTP_REQUEST_TIMEOUT_MS,
    httpKeepAliveTimeoutMs: v.HTTP_KEEP_ALIVE_TIMEOUT_MS,
    /** JSON request bodies: deepest nesting, and keys plus array items in all; checked before validation. */
    bodyMaxDepth: v.BODY_MAX_DEPTH,
    bodyMaxKeys: v.BODY_MAX_KEYS,
    /** Express `trust proxy`; decides which address `req.ip` (and so the per-address limit) sees. */
    trustProxy: trustProxy(v.TRUST_PROXY),
    /** Lower case; empty means CORS stays off. */
    corsOrigins: (v.CORS_ORIGINS ?? '')
      .split(',')
      .map((s) => s.trim().toLowerCase())
      .filter(Boolean),
  }),
);

function trustProxy(value: string): boolean | number | string[] {
  if (value === 'false') return false;
  if (value === 'true') return true;
  if (/^\d+$/.test(value)) return Number(value);
  return value.split(',').map((part) => part.trim());
}
