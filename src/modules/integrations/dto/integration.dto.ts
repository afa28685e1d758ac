import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, Length, Matches, MaxLength } from 'class-validator';
import { RequestEnvelope } from '@/common/http/envelope';
import { GIVEN_ID_PATTERN } from '@/common/http/given-id';
import { IsOptionalNonNull } from '@/common/http/optional';
import { IntegrationAuthMethod, IntegrationProvider, IntegrationStatus } from '@/generated/prisma/enums';
import type { Integration } from '@/generated/prisma/client';

const PROVIDERS = Object.values(IntegrationProvider);
const AUTH_METHODS = Object.values(IntegrationAuthMethod);
const STATUSES = Object.values(IntegrationStatus);

export const STATUS_DESCRIPTION =
  'INITIATED (authorization started) -> PENDING_CONFIRMATION (the provider authorized an account; nothing uses it until the member who started the connection confirms it with POST /integrations/{id}/confirm) -> ACTIVE; INITIATED -> FAILED (the provider reported an error, the code exchange failed, or the installation is not one the authorizing person administers); ACTIVE -> NEEDS_ATTENTION when the provider refuses the credentials, back to ACTIVE when they validate again; -> REVOKED when the app installation is gone.';

export class CreateIntegrationDto {
  @ApiProperty({ enum: PROVIDERS, example: 'GITHUB', description: 'GITHUB (github.com), GITHUB_ENTERPRISE and GITLAB (self-hosted: give gitServerId)' })
  @IsIn(PROVIDERS)
  provider: IntegrationProvider;

  @ApiProperty({
    enum: AUTH_METHODS,
    example: 'OAUTH',
    description:
      'API_TOKEN: validated against the provider now. OAUTH / APP_INSTALLATION (GitHub only): the response carries `authorizeUrl`; the integration is PENDING_CONFIRMATION after the callback and ACTIVE once the member who started it confirms the connected account (POST /integrations/{id}/confirm).',
  })
  @IsIn(AUTH_METHODS)
  authMethod: IntegrationAuthMethod;

  @ApiProperty({ minLength: 1, maxLength: 200, example: 'GitHub (acme)' }) @IsString() @Length(1, 200) name: string;

  @ApiPropertyOptional({ pattern: GIVEN_ID_PATTERN.source, maxLength: 63, description: 'Unique in the organization; derived from the name when absent' })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(63)
  @Matches(GIVEN_ID_PATTERN, { message: 'must be lower-case letters, digits and inner hyphens' })
  givenId?: string;

  @ApiPropertyOptional({ minLength: 1, maxLength: 1000, writeOnly: true, description: 'The provider token (API_TOKEN). Stored encrypted; never returned.' })
  @IsOptionalNonNull()
  @IsString()
  @Length(1, 1000)
  @Matches(/^[\x21-\x7e]+$/, { message: 'must be printable ASCII without spaces' })
  token?: string;

  @ApiPropertyOptional({ maxLength: 64, description: 'The self-hosted git server (GITHUB_ENTERPRISE, GITLAB)' })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(64)
  gitServerId?: string;

  @ApiPropertyOptional({
    maxLength: 2048,
    example: '/settings/integrations',
    description: 'Where the callback sends the browser back: a path on this site or an origin in OAUTH_REDIRECT_ALLOWED_ORIGINS. Default `/`.',
  })
  @IsOptionalNonNull()
  @IsString()
  @MaxLength(2048)
  redirectUrl?: string;
}

export class CreateIntegrationRequest extends RequestEnvelope(CreateIntegrationDto) {}

export class IntegrationDto {
  @ApiProperty() id: string;
  @ApiProperty() givenId: string;
  @ApiProperty() name: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ enum: PROVIDERS }) provider: string;
  @ApiProperty({ enum: AUTH_METHODS }) authMethod: string;
  @ApiProperty({ enum: STATUSES, description: STATUS_DESCRIPTION }) status: string;
  @ApiProperty({ description: "The provider's id of the connected account (empty until connected)" }) externalAccountId: string;
  @ApiPropertyOptional({
    description:
      "The provider's login of the connected account (for OAUTH / APP_INSTALLATION: the account that authorized at the callback, recorded in the audit trail too)",
  })
  externalAccountName?: string;
  @ApiPropertyOptional({ format: 'date-time' }) lastValidatedAt?: string;
  @ApiPropertyOptional() gitServerId?: string;
  @ApiPropertyOptional({ description: "Why the integration failed or needs attention (the provider's reason)" }) lastError?: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

const WEBHOOK_SECRET_DESCRIPTION =
  'The secret GitHub signs webhook deliveries with (`X-Hub-Signature-256`) for POST /webhooks/github: enter it as the webhook secret of the GitHub App or repository webhook. Shown only here (at creation and rotation); stored encrypted, never returned again or logged.';

export class CreatedIntegrationDto extends IntegrationDto {
  @ApiPropertyOptional({ description: `GITHUB and GITHUB_ENTERPRISE. ${WEBHOOK_SECRET_DESCRIPTION}` }) webhookSecret?: string;
  @ApiPropertyOptional({
    description:
      "OAUTH / APP_INSTALLATION: this API's GET /scm/authorize URL; open it in the browser that will authorize (it binds the flow to that browser, then goes to the provider). Valid for 10 minutes, once.",
  })
  authorizeUrl?: string;
}

export class IntegrationWebhookSecretDto extends IntegrationDto {
  @ApiProperty({ description: `The new secret; the previous one stops verifying at once. ${WEBHOOK_SECRET_DESCRIPTION}` }) webhookSecret: string;
}

export function toIntegrationDto(row: Integration): IntegrationDto {
  const dto: IntegrationDto = {
    id: row.id,
    givenId: row.givenId,
    name: row.name,
    organizationId: row.organizationId,
    provider: row.provider,
    authMethod: row.authMethod,
    status: row.status,
    externalAccountId: row.externalAccountId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
  if (row.externalAccountName !== null) dto.externalAccountName = row.externalAccountName;
  if (row.lastValidatedAt !== null) dto.lastValidatedAt = row.lastValidatedAt.toISOString();
  if (row.gitServerId !== null) dto.gitServerId = row.gitServerId;
  if (row.lastError !== null) dto.lastError = row.lastError;
  return dto;
}

export class ConfirmIntegrationDto {
  @ApiProperty({
    minLength: 1,
    maxLength: 100,
    example: 'octocat',
    description: "The provider login of the account you expect: must be the integration's `externalAccountName` (compared case-insensitively)",
  })
  @IsString()
  @Length(1, 100)
  externalAccountName: string;

  @ApiProperty({
    minLength: 1,
    maxLength: 100,
    writeOnly: true,
    description: 'The confirmation code GET /scm/callback showed in the browser that authorized (single use, valid for 1 hour)',
  })
  @IsString()
  @Length(1, 100)
  confirmationCode: string;
}

export class ConfirmIntegrationRequest extends RequestEnvelope(ConfirmIntegrationDto) {}

export class OAuthStartQueryDto {
  @ApiProperty({ minLength: 1, maxLength: 512, description: 'The state of the flow, as in `authorizeUrl`' })
  @IsString()
  @Length(1, 512)
  state: string;
}
