-- The OAuth flow is bound to the browser that starts it: GET /scm/authorize sets a __Host- cookie
-- holding a nonce (its SHA-256 is kept here) and the callback requires it. `startedAt` makes the
-- start URL single use.
ALTER TABLE "OAuthState" ADD COLUMN "browserNonceHash" TEXT;
ALTER TABLE "OAuthState" ADD COLUMN "startedAt" TIMESTAMP(3);
