import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsDefined, IsIn, IsString, Length, Matches, MaxLength, ValidateBy, type ValidationOptions } from 'class-validator';
import { RequestEnvelope } from '@/common/http/envelope';
import type { DomainDependent, DomainGrant, ManagedDomain } from '@/generated/prisma/client';
import { DomainDependentKind, ManagedDomainStatus } from '@/generated/prisma/enums';
import { ROW_ID } from '@/common/http/row-id';
import { MAX_HOSTNAME_INPUT_LENGTH, normalizeApex, normalizeHostname, verificationRecordName } from '../dns/apex-name';
import { MAX_LISTED_DEPENDENTS } from '../apex-status/apex-status.rules';

const STATUSES = Object.values(ManagedDomainStatus);
const KINDS = Object.values(DomainDependentKind);

/** A host name the service can normalise (IDNA, case, trailing dot); as an apex, also not a public suffix. */
function IsHostName(kind: 'apex' | 'hostname', options?: ValidationOptions): PropertyDecorator {
  const check = kind === 'apex' ? normalizeApex : normalizeHostname;
  return ValidateBy(
    {
      name: `is-${kind}`,
      validator: {
        validate: (value: unknown) => typeof value === 'string' && check(value).ok,
        defaultMessage: (args) => {
          if (typeof args?.value !== 'string') return 'must be a string';
          const result = check(args.value);
          return result.ok ? '' : result.reason;
        },
      },
    },
    options,
  );
}

const APEX_DESCRIPTION =
  'A host name; normalised to lower case, IDNA ASCII (`bücher.example` -> `xn--bcher-kva.example`) and no trailing dot. It must lie under a public suffix of the Public Suffix List and not be one itself (`com`, `co.uk`, `github.io` are refused).';

export class CreateDomainDto {
  @ApiProperty({
    description: `The apex whose wildcard (\`*.<apex>\`) the platform should manage. ${APEX_DESCRIPTION}`,
    maxLength: MAX_HOSTNAME_INPUT_LENGTH,
    example: 'preview.acme.dev',
  })
  @IsString()
  @MaxLength(MAX_HOSTNAME_INPUT_LENGTH)
  @IsHostName('apex')
  apex: string;
}

export class CreateDomainRequest extends RequestEnvelope(CreateDomainDto) {}

export class VerificationRecordDto {
  @ApiProperty({ enum: ['TXT'] }) type: 'TXT';
  @ApiProperty({ description: 'Where to publish it', example: '_dpa-challenge.preview.acme.dev' }) name: string;
  @ApiProperty({ description: 'The exact text of the record; random, per registration' }) value: string;
}

export class DomainDto {
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ description: 'Normalised apex' }) apex: string;
  @ApiProperty({
    enum: STATUSES,
    description:
      '`PENDING_VERIFICATION` until the TXT record is seen by POST /domains/{id}/verify; `ACTIVE` while the wildcard is live and managed; `LAPSED` when periodic re-verification missed the record for longer than the grace period (verify again to reactivate); it holds the apex against other organizations for DOMAIN_LAPSED_HOLD_MS after the record was first missed, then the apex is free.',
  })
  status: ManagedDomainStatus;
  @ApiProperty({ type: VerificationRecordDto, description: 'The TXT record that proves control of the apex' }) verificationRecord: VerificationRecordDto;
  @ApiPropertyOptional({ format: 'date-time', description: 'Last time the record was seen' }) verifiedAt?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'Last lookup by periodic re-verification' }) lastCheckedAt?: string;
  @ApiPropertyOptional({ format: 'date-time', description: 'Since when re-verification has missed the record of an ACTIVE domain' })
  recordMissingSince?: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export function toDomainDto(row: ManagedDomain): DomainDto {
  const dto: DomainDto = {
    id: row.id,
    organizationId: row.organizationId,
    apex: row.apex,
    status: row.status,
    verificationRecord: { type: 'TXT', name: verificationRecordName(row.apex), value: row.verificationToken },
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
  if (row.verifiedAt) dto.verifiedAt = row.verifiedAt.toISOString();
  if (row.lastCheckedAt) dto.lastCheckedAt = row.lastCheckedAt.toISOString();
  if (row.recordMissingSince) dto.recordMissingSince = row.recordMissingSince.toISOString();
  return dto;
}

export class ApexStatusQueryDto {
  @ApiProperty({ description: `The apex to describe. ${APEX_DESCRIPTION}`, maxLength: MAX_HOSTNAME_INPUT_LENGTH, example: 'preview.acme.dev' })
  @IsDefined({ message: 'is required' })
  @IsString()
  @MaxLength(MAX_HOSTNAME_INPUT_LENGTH)
  @IsHostName('apex')
  apex: string;
}

export class ApexStatusDto {
  @ApiProperty({ description: 'The normalised apex' }) apex: string;
  @ApiProperty({ description: 'The apex is registered and ACTIVE: its wildcard is live and managed by the service' }) exists: boolean;
  @ApiProperty({
    description:
      "The caller's organization may create names under the apex: it owns the apex, holds a grant on it, or nobody owns it and no ACTIVE apex above it belongs to another organization that has not granted the caller's",
  })
  authorized: boolean;
  @ApiProperty({
    description: `The owning organization's id; \`""\` (empty) when nobody owns the apex, or when it is another organization's registration that is not ACTIVE (those read as unregistered)`,
    example: '019a0000-0000-7000-8000-000000000001',
  })
  owner: string;
  @ApiProperty({ type: 'integer', minimum: 0, description: 'Exact number of dependents of the registration described (0 when it reads as unregistered)' })
  dependentCount: number;
  @ApiProperty({
    type: [String],
    maxItems: MAX_LISTED_DEPENDENTS,
    description: `Hostnames of the dependents, sorted, at most ${MAX_LISTED_DEPENDENTS}; listed only to the owner and to organizations holding a grant on the apex, empty for everyone else`,
  })
  dependents: string[];
}

export class CreateDomainGrantDto {
  @ApiProperty({
    description: 'The organization allowed to register apexes under this one',
    pattern: ROW_ID.source,
    example: '019a0000-0000-7000-8000-000000000002',
  })
  @IsString()
  @Matches(ROW_ID, { message: 'must be an organization id' })
  organizationId: string;
}

export class CreateDomainGrantRequest extends RequestEnvelope(CreateDomainGrantDto) {}

export class DomainGrantDto {
  @ApiProperty() id: string;
  @ApiProperty() domainId: string;
  @ApiProperty({ description: 'The organization granted' }) organizationId: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export function toDomainGrantDto(row: DomainGrant): DomainGrantDto {
  return { id: row.id, domainId: row.domainId, organizationId: row.organizationId, createdAt: row.createdAt.toISOString() };
}

export class CreateDomainDependentDto {
  @ApiProperty({
    description: 'A host name strictly under the apex; normalised like the apex',
    maxLength: MAX_HOSTNAME_INPUT_LENGTH,
    example: 'pr-42.preview.acme.dev',
  })
  @IsString()
  @MaxLength(MAX_HOSTNAME_INPUT_LENGTH)
  @IsHostName('hostname')
  hostname: string;

  @ApiProperty({ enum: KINDS, description: 'What uses it' }) @IsIn(KINDS) kind: DomainDependentKind;

  @ApiProperty({
    minLength: 1,
    maxLength: 200,
    description: 'The id of the platform resource that uses it (a pipeline, a child apex, ...)',
    example: 'pipeline-1',
  })
  @IsString()
  @Length(1, 200)
  resourceId: string;
}

export class CreateDomainDependentRequest extends RequestEnvelope(CreateDomainDependentDto) {}

export class DomainDependentDto {
  @ApiProperty() id: string;
  @ApiProperty() domainId: string;
  @ApiProperty() organizationId: string;
  @ApiProperty() hostname: string;
  @ApiProperty({ enum: KINDS }) kind: DomainDependentKind;
  @ApiProperty() resourceId: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
}

export function toDomainDependentDto(row: DomainDependent): DomainDependentDto {
  return {
    id: row.id,
    domainId: row.domainId,
    organizationId: row.organizationId,
    hostname: row.hostname,
    kind: row.kind,
    resourceId: row.resourceId,
    createdAt: row.createdAt.toISOString(),
  };
}
