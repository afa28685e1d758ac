import { ApiProperty } from '@nestjs/swagger';
import { IsIn, IsString, Length } from 'class-validator';
import { RequestEnvelope } from '@/common/http/envelope';
import { GitServerProvider } from '@/generated/prisma/enums';
import type { GitServer } from '@/generated/prisma/client';

const PROVIDERS = Object.values(GitServerProvider);

export class CreateGitServerDto {
  @ApiProperty({ enum: PROVIDERS, description: 'GITHUB_ENTERPRISE (GitHub Enterprise Server) or GITLAB (GitLab self-managed)' })
  @IsIn(PROVIDERS)
  provider: GitServerProvider;

  @ApiProperty({
    maxLength: 2048,
    example: 'https://203.0.113.10',
    description:
      'https only (http when GIT_SERVER_ALLOW_HTTP); no user name, password, query or fragment. The host is resolved and refused when any address is loopback, link-local (169.254.0.0/16, fe80::/10: cloud metadata), private, unique-local, carrier-grade NAT, multicast, unspecified or otherwise special (private ranges are allowed with GIT_SERVER_ALLOW_PRIVATE_HOSTS); the same check runs on every connection to the server.',
  })
  @IsString()
  @Length(1, 2048)
  hostUrl: string;
}

export class CreateGitServerRequest extends RequestEnvelope(CreateGitServerDto) {}

export class GitServerDto {
  @ApiProperty() id: string;
  @ApiProperty() organizationId: string;
  @ApiProperty({ enum: PROVIDERS }) provider: string;
  @ApiProperty() hostUrl: string;
  @ApiProperty({ type: 'integer', description: 'Integrations (accounts) connected through this server' }) gitAccountsCount: number;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export type GitServerWithCount = GitServer & { _count: { integrations: number } };

export function toGitServerDto(row: GitServerWithCount): GitServerDto {
  return {
    id: row.id,
    organizationId: row.organizationId,
    provider: row.provider,
    hostUrl: row.hostUrl,
    gitAccountsCount: row._count.integrations,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}
