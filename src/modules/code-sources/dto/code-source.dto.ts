import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsString, Length } from 'class-validator';
import { RequestEnvelope } from '@/common/http/envelope';
import { IsOptionalNonNull } from '@/common/http/optional';
import { CodeSourceProvider } from '@/generated/prisma/enums';
import type { CodeSource } from '@/generated/prisma/client';
import type { RepositoryInfo } from '@/modules/git-providers/git-provider.port';

const PROVIDERS = Object.values(CodeSourceProvider);

export class CreateCodeSourceDto {
  @ApiPropertyOptional({ maxLength: 64, description: 'The integration to reach the repository through (not for LOCAL_GIT)' })
  @IsOptionalNonNull()
  @IsString()
  @Length(1, 64)
  integrationId?: string;
  @ApiPropertyOptional({ enum: PROVIDERS, description: 'LOCAL_GIT only (otherwise the integration decides)' })
  @IsOptionalNonNull()
  @IsIn(PROVIDERS)
  provider?: CodeSourceProvider;
  @ApiProperty({
    minLength: 1,
    maxLength: 1024,
    example: 'acme/api',
    description: '`owner/name` (GitLab: `group/subgroup/name`); LOCAL_GIT: the absolute path of a bare repository',
  })
  @IsString()
  @Length(1, 1024)
  repository: string;
}

export class CreateCodeSourceRequest extends RequestEnvelope(CreateCodeSourceDto) {}

export class CodeSourceDto {
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ enum: PROVIDERS }) provider: string;
  @ApiPropertyOptional() integrationId?: string;
  @ApiPropertyOptional() gitServerId?: string;
  @ApiProperty({ description: '`owner/name` at the provider (LOCAL_GIT: the path)' }) repository: string;
  @ApiProperty({ description: "The provider's id of the repository" }) foreignId: string;
  @ApiProperty() url: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export function toCodeSourceDto(row: CodeSource): CodeSourceDto {
  const dto: CodeSourceDto = {
    id: row.id,
    organizationId: row.organizationId,
    provider: row.provider,
    repository: row.nameWithOwner,
    foreignId: row.foreignId,
    url: row.url,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
  if (row.integrationId !== null) dto.integrationId = row.integrationId;
  if (row.gitServerId !== null) dto.gitServerId = row.gitServerId;
  return dto;
}

class CountDto {
  @ApiProperty({ type: 'integer' }) totalCount: number;
}
class NameDto {
  @ApiProperty() name: string;
}
class LoginDto {
  @ApiProperty() login: string;
}

export class RepositoryDto {
  @ApiProperty({ type: CountDto, description: 'Collaborators (LOCAL_GIT: distinct commit authors)' }) collaborators: CountDto;
  @ApiProperty({ type: NameDto }) defaultBranch: NameDto;
  @ApiProperty({ type: NameDto }) defaultBranchRef: NameDto;
  @ApiProperty({ description: 'Empty when the provider has none' }) description: string;
  @ApiProperty() foreignId: string;
  @ApiProperty({ description: "Whether the repository's owner is the integration's account (LOCAL_GIT: true)" }) isInNamespace: boolean;
  @ApiProperty({ description: 'LOCAL_GIT: true' }) isPrivate: boolean;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'LOCAL_GIT: `local/<name>`' }) nameWithOwner: string;
  @ApiProperty({ type: LoginDto, description: 'LOCAL_GIT: `local`' }) owner: LoginDto;
  @ApiProperty({ description: 'Date-time of the last push (LOCAL_GIT: the newest commit on a branch)' }) pushedAt: string;
  @ApiProperty() url: string;
}

export function toRepositoryDto(info: RepositoryInfo): RepositoryDto {
  return {
    collaborators: { totalCount: info.collaborators.totalCount },
    defaultBranch: { name: info.defaultBranch.name },
    defaultBranchRef: { name: info.defaultBranchRef.name },
    description: info.description,
    foreignId: info.foreignId,
    isInNamespace: info.isInNamespace,
    isPrivate: info.isPrivate,
    name: info.name,
    nameWithOwner: info.nameWithOwner,
    owner: { login: info.owner.login },
    pushedAt: info.pushedAt,
    url: info.url,
  };
}
