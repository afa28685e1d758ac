import { ApiProperty, ApiPropertyOptional, PartialType } from '@nestjs/swagger';
import { IsIn, IsString, Length, Matches } from 'class-validator';
import { IsOptionalNonNull } from '@/common/http/optional';
import { ExecutionEnvironmentType } from '@/generated/prisma/enums';
import { GIVEN_ID_PATTERN } from '@/common/http/given-id';
import { RequestEnvelope } from '@/common/http/envelope';
import type { ExecutionEnvironment } from '@/generated/prisma/client';

/** The cloud vendors, AWS first; each validates its own identifier shapes (vendors/). */
export const EXECUTION_ENVIRONMENT_TYPES = Object.values(ExecutionEnvironmentType);
/** The vendor-neutral outline of an identifier; the vendor's own shape is checked by the service. */
const CLOUD_ID = /^[A-Za-z0-9._:\/-]{1,128}$/;
const SHAPES =
  'AWS: vpc-/subnet-/sg- followed by 8 or 17 lower-case hex digits, a 12-digit account id, an AWS region. ' +
  'GCP: network, subnetwork and firewall-rule names (RFC 1035), a project id, a Google Cloud region.';

export class CreateExecutionEnvironmentDto {
  @ApiPropertyOptional({ pattern: GIVEN_ID_PATTERN.source, description: 'Slug unique in the organization; derived from name when absent' })
  @IsOptionalNonNull()
  @IsString()
  @Matches(GIVEN_ID_PATTERN, { message: 'must be a lower-case slug (a-z, 0-9, -), 1 to 63 characters' })
  givenId?: string;

  @ApiProperty({ minLength: 1, maxLength: 200 }) @IsString() @Length(1, 200) name: string;
  @ApiProperty({
    enum: EXECUTION_ENVIRONMENT_TYPES,
    enumName: 'ExecutionEnvironmentType',
    description: `The cloud vendor. Identifier shapes per vendor: ${SHAPES}`,
  })
  @IsIn(EXECUTION_ENVIRONMENT_TYPES)
  type: ExecutionEnvironmentType;
  @ApiProperty({ example: 'eu-central-1', description: "A region of the vendor's" })
  @IsString()
  @Matches(/^[a-z0-9-]{2,32}$/, { message: 'must be a region name such as eu-central-1' })
  region: string;
  @ApiProperty({ example: 'vpc-0a1b2c3d', maxLength: 128 }) @IsString() @Matches(CLOUD_ID, { message: 'must be a cloud resource id' }) vpcId: string;
  @ApiProperty({ example: 'subnet-0a1b2c3d', maxLength: 128 }) @IsString() @Matches(CLOUD_ID, { message: 'must be a cloud resource id' }) subnetId: string;
  @ApiProperty({ example: 'sg-0a1b2c3d', maxLength: 128 }) @IsString() @Matches(CLOUD_ID, { message: 'must be a cloud resource id' }) securityGroupId: string;
  @ApiProperty({ example: '123456789012', maxLength: 128, description: "The cloud vendor's account (AWS) or project (GCP) id" })
  @IsString()
  @Matches(CLOUD_ID, { message: 'must be a cloud account id' })
  cloudAccountId: string;
}

/** Only the fields present change; when `type` changes, every vendor field is checked against the new vendor. */
// skipNullProperties: false keeps `null` out of every field: none of them can hold it.
export class UpdateExecutionEnvironmentDto extends PartialType(CreateExecutionEnvironmentDto, { skipNullProperties: false }) {}

export class CreateExecutionEnvironmentRequest extends RequestEnvelope(CreateExecutionEnvironmentDto) {}
export class UpdateExecutionEnvironmentRequest extends RequestEnvelope(UpdateExecutionEnvironmentDto) {}

export class ExecutionEnvironmentDto {
  @ApiProperty() id: string;
  @ApiProperty() givenId: string;
  @ApiProperty() name: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ enum: EXECUTION_ENVIRONMENT_TYPES, enumName: 'ExecutionEnvironmentType' }) type: string;
  @ApiProperty() region: string;
  @ApiProperty() vpcId: string;
  @ApiProperty() subnetId: string;
  @ApiProperty() securityGroupId: string;
  @ApiProperty() cloudAccountId: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export function toExecutionEnvironmentDto(row: ExecutionEnvironment): ExecutionEnvironmentDto {
  return {
    id: row.id,
    givenId: row.givenId,
    name: row.name,
    organizationId: row.organizationId,
    type: row.type,
    region: row.region,
    vpcId: row.vpcId,
    subnetId: row.subnetId,
    securityGroupId: row.securityGroupId,
    cloudAccountId: row.cloudAccountId,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
