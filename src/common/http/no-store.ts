import { applyDecorators, Header } from '@nestjs/common';

/**
 * For a response that carries a secret (an API key's token, a webhook secret, a single-use
 * authorization URL): no cache on the way (a proxy, the browser's, a client library's) may keep
 * it. `test/e2e/secret-responses.e2e-spec.ts` finds every such route in the OpenAPI document.
 */
export const NoStore = () => applyDecorators(Header('Cache-Control', 'no-store'), Header('Pragma', 'no-cache'));
