-- Issue 41: an OAuth / app-installation connection becomes ACTIVE only once the member who started
-- it confirms the connected account (POST /integrations/{id}/confirm) with the code shown in the
-- browser that authorized. Until then it is PENDING_CONFIRMATION: its credentials are sealed but
-- nothing uses them. The code is kept as its SHA-256 with the flow's state, single use.
ALTER TYPE "IntegrationStatus" ADD VALUE 'PENDING_CONFIRMATION' AFTER 'INITIATED';
ALTER TABLE "OAuthState" ADD COLUMN "confirmationHash" TEXT;
ALTER TABLE "OAuthState" ADD COLUMN "authorizedAt" TIMESTAMP(3);
