import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { ArrayMaxSize, ArrayMinSize, IsArray, IsBoolean, IsOptional, IsString, Length, Matches, MaxLength, ValidateBy } from 'class-validator';
import { RequestEnvelope } from '@/common/http/envelope';
import { PaginationQueryDto } from '@/common/pagination/pagination';
import { MAX_NUMERIC_IDENTIFIER_DIGITS, MAX_VERSION_LENGTH, MAX_VERSION_NUMBER, VERSION_PATTERN } from '../semver-key';
import { IsBoundedJsonObject, IsSemanticVersion } from './semver.validators';

/** Bounds of a version's `config`. */
export const MAX_CONFIG_BYTES = 16_384;
export const MAX_CONFIG_DEPTH = 8;
/** Spec, Limits 1: the array parameter of the module-version lists. */
export const MAX_DEFINITION_IDS = 50;

const ID_PATTERN = /^[0-9A-Za-z_-]{1,64}$/;
const VERSION_RULES = `A semantic version (semver 2.0.0) matching the pattern, at most ${MAX_VERSION_LENGTH} characters; major, minor and patch at most ${MAX_VERSION_NUMBER}, no leading zeros, numeric prerelease identifiers at most ${MAX_NUMERIC_IDENTIFIER_DIGITS} digits (anything else is a 400).`;

export class CreateModuleVersionDto {
  @ApiProperty({ description: 'The module definition (of your organization, or global: superadmins only)', pattern: ID_PATTERN.source })
  @IsString()
  @Matches(ID_PATTERN, { message: 'is not a module definition id' })
  moduleDefinitionId: string;

  @ApiProperty({
    description: `${VERSION_RULES} Build metadata (\`+...\`) is kept but ignored for ordering and for duplicates: \`1.0.0+a\` and \`1.0.0+b\` are the same version.`,
    pattern: VERSION_PATTERN.source,
    maxLength: MAX_VERSION_LENGTH,
    example: '1.4.0-rc.1',
  })
  @IsString()
  @MaxLength(MAX_VERSION_LENGTH)
  @IsSemanticVersion()
  version: string;

  @ApiProperty({ minLength: 0, maxLength: 2000 })
  @IsString()
  @Length(0, 2000)
  description: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: `Any JSON object of at most ${MAX_CONFIG_BYTES} bytes (as JSON, UTF-8) and ${MAX_CONFIG_DEPTH} levels of nested objects and arrays; larger or deeper is a 400.`,
    example: { region: 'eu-central-1' },
  })
  @IsBoundedJsonObject(MAX_CONFIG_BYTES, MAX_CONFIG_DEPTH)
  config: Record<string, unknown>;
}

export class CreateModuleVersionRequest extends RequestEnvelope(CreateModuleVersionDto) {}

/** `a,b` and repeated parameters alike become one list; anything else is left for the validators to refuse. */
function toIdList({ value }: { value: unknown }): unknown {
  const parts = typeof value === 'string' ? [value] : Array.isArray(value) && value.every((v) => typeof v === 'string') ? value : undefined;
  return parts ? parts.flatMap((part: string) => part.split(',')) : value;
}

function toBoolean({ value }: { value: unknown }): unknown {
  return value === 'true' ? true : value === 'false' ? false : value;
}

export class ModuleVersionQueryDto extends PaginationQueryDto {
  @ApiPropertyOptional({ description: 'Only versions of this module definition', pattern: ID_PATTERN.source })
  @IsOptional()
  @IsString()
  @Matches(ID_PATTERN, { message: 'is not a module definition id' })
  moduleDefinitionId?: string;

  @ApiPropertyOptional({
    description: `Lower bound, inclusive by semver precedence (build metadata ignored): only versions >= this one. Requires \`moduleDefinitionId\` (400 without it). ${VERSION_RULES}`,
    pattern: VERSION_PATTERN.source,
    maxLength: MAX_VERSION_LENGTH,
    example: '1.2.0',
  })
  @IsOptional()
  @IsString()
  @MaxLength(MAX_VERSION_LENGTH)
  @IsSemanticVersion()
  @ValidateBy({
    name: 'requiresModuleDefinitionId',
    validator: {
      validate: (_: unknown, args) => (args?.object as ModuleVersionQueryDto).moduleDefinitionId !== undefined,
      defaultMessage: () => 'requires moduleDefinitionId (a lower bound applies within one module definition)',
    },
  })
  minVersion?: string;

  @ApiPropertyOptional({
    description: `Only versions of these module definitions: at most ${MAX_DEFINITION_IDS} ids, as a repeated parameter or comma-separated. With \`moduleDefinitionId\` too, both must match.`,
    type: [String],
    maxItems: MAX_DEFINITION_IDS,
    minItems: 1,
    items: { type: 'string', pattern: ID_PATTERN.source },
  })
  @IsOptional()
  @Transform(toIdList)
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(MAX_DEFINITION_IDS, { message: `must contain at most ${MAX_DEFINITION_IDS} ids` })
  @IsString({ each: true })
  @Matches(ID_PATTERN, { each: true, message: 'must contain only module definition ids' })
  moduleDefinitionIds?: string[];

  @ApiPropertyOptional({
    type: 'boolean',
    default: true,
    description: 'Prereleases are listed by default (in semver order, below their release); `false` lists releases only.',
  })
  @IsOptional()
  @Transform(toBoolean)
  @IsBoolean()
  includePrereleases?: boolean;
}

class ModuleVersionFields {
  @ApiProperty() id: string;
  @ApiProperty() moduleDefinitionId: string;
  @ApiProperty({ description: 'The semantic version as published, build metadata included', pattern: VERSION_PATTERN.source }) version: string;
  @ApiProperty() description: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
  @ApiPropertyOptional({ description: 'The member or service account that published it' }) createdById?: string;
  @ApiPropertyOptional({ description: 'Absent for versions of global module definitions' }) organizationId?: string;
}

/** Spec: ModuleVersion. */
export class ModuleVersionDto extends ModuleVersionFields {
  @ApiProperty({ type: 'object', additionalProperties: true }) config: Record<string, unknown>;
}

/** Spec: ModuleVersionSummary (a module version without `config`). */
export class ModuleVersionSummaryDto extends ModuleVersionFields {
  @ApiProperty({ type: 'integer', minimum: 0, maximum: MAX_VERSION_NUMBER }) versionMajor: number;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: MAX_VERSION_NUMBER }) versionMinor: number;
  @ApiProperty({ type: 'integer', minimum: 0, maximum: MAX_VERSION_NUMBER }) versionPatch: number;
  @ApiProperty({
    description:
      'Orders versions of equal major.minor.patch: its byte order (Postgres `COLLATE "C"`) is semver precedence. One token per prerelease identifier (numeric: `1`, digit count in base 62, digits; alphanumeric: `2`, identifier, `!`); a release is `~`, after all of its prereleases.',
    example: '2rc!111',
  })
  versionPrereleaseSortKey: string;
  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    description: 'Prereleases only: the number of dot-separated prerelease identifiers (`1.0.0-rc` is 1, `1.0.0-rc.1` is 2). Absent for releases.',
  })
  versionPrereleaseRank?: number;
}

/** The columns a list row carries (the summary's, plus `config` for the full list). */
export interface ModuleVersionRow {
  id: string;
  moduleDefinitionId: string;
  organizationId: string | null;
  version: string;
  description: string;
  config?: unknown;
  versionMajor: number;
  versionMinor: number;
  versionPatch: number;
  versionPrereleaseSortKey: string;
  versionPrereleaseRank: number | null;
  createdById: string | null;
  createdAt: Date;
  updatedAt: Date;
}

function common(row: ModuleVersionRow): ModuleVersionFields {
  const dto: ModuleVersionFields = {
    id: row.id,
    moduleDefinitionId: row.moduleDefinitionId,
    version: row.version,
    description: row.description,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
  if (row.createdById !== null) dto.createdById = row.createdById;
  if (row.organizationId !== null) dto.organizationId = row.organizationId;
  return dto;
}

export function toModuleVersionDto(row: ModuleVersionRow): ModuleVersionDto {
  return { ...common(row), config: (row.config ?? {}) as Record<string, unknown> };
}
