import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ApiKeyAuthenticator } from '@/common/auth/api-key-authenticator.service';
import { hashToken } from '@/common/auth/api-key-hash';
import type { Principal, Role } from '@/common/auth/principal';
import { roleAtLeast } from '@/common/auth/principal';
import { AppError } from '@/common/errors/app-error';
import { fromOrganization, newestFirst, Page, paginate, PaginationQueryDto } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { ApiKeyOwnerType } from '@/generated/prisma/client';
import { apiKeyTokenSuffix, encodeApiKeyToken } from '@/common/auth/api-key-token';
import { ApiKeyDto, CreateApiKeyDto, CreatedApiKeyDto, toApiKeyDto } from './dto/api-key.dto';
import { invalidFields } from '@/common/errors/invalid-fields';
import { AuthErrors } from '@/common/errors/common.errors';
import { ApiKeyErrors } from './api-keys.errors';
import type { ApiKey } from '@/generated/prisma/client';

/** The list's keyset: newest first; its cursors carry the tag 'apiKeys'. */
const LIST = newestFirst<ApiKey>('apiKeys');

export interface NewApiKey {
  organizationId: string;
  ownerId: string;
  ownerType: ApiKeyOwnerType;
  createdById: string;
  name: string;
  description?: string;
  expiresAt?: Date;
}

@Injectable()
export class ApiKeysService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly authenticator: ApiKeyAuthenticator,
  ) {}

  /** Mints a token and stores only its hash; the token is in the result and nowhere else. */
  async issue(key: NewApiKey): Promise<CreatedApiKeyDto> {
    const token = encodeApiKeyToken(randomBytes(32));
    const row = await this.prisma.apiKey.create({ data: { ...key, tokenHash: hashToken(token), keySuffix: apiKeyTokenSuffix(token) } });
    return { ...toApiKeyDto(row), token };
  }

  async create(principal: Principal, dto: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    const expiresAt = dto.expiresAt ? new Date(dto.expiresAt) : undefined;
    if (expiresAt && expiresAt.getTime() <= Date.now()) {
      throw new AppError(ApiKeyErrors.EXPIRY_IN_PAST, { details: [invalidFields(['data.expiresAt: must be in the future'])] });
    }
    const owner = await this.findOwner(principal.organizationId, dto.ownerId);
    if (!owner) throw new AppError(ApiKeyErrors.OWNER_NOT_FOUND, { metadata: { ownerId: dto.ownerId }, details: [invalidFields(['data.ownerId: is not a member or service account of your organization'])] });
    const forSelf = owner.id === principal.actorId;
    // A key acts with its owner's role: only admins issue keys for others, and never above their own role.
    if (!forSelf && (!roleAtLeast(principal.role, 'ADMIN') || !roleAtLeast(principal.role, owner.role))) {
      throw new AppError(AuthErrors.FORBIDDEN, { message: 'You may issue keys for yourself; issuing for others needs ADMIN and at least the owner\'s role.' });
    }
    return this.issue({ organizationId: principal.organizationId, ownerId: owner.id, ownerType: owner.type, createdById: principal.actorId, name: dto.name, description: dto.description, expiresAt });
  }

  list(principal: Principal, query: PaginationQueryDto): Promise<Page<ApiKeyDto>> {
    return paginate(fromOrganization(this.prisma.organization, principal.organizationId, 'apiKeys'), LIST, query, toApiKeyDto);
  }

  async get(principal: Principal, id: string): Promise<ApiKeyDto> {
    const row = await this.prisma.apiKey.findFirst({ where: { id, organizationId: principal.organizationId } });
    if (!row) throw new AppError(ApiKeyErrors.NOT_FOUND, { metadata: { id } });
    return toApiKeyDto(row);
  }

  /** Revokes at once in every API process: the hash is announced on the invalidation channel. */
  async revoke(principal: Principal, id: string): Promise<void> {
    const row = await this.prisma.apiKey.findFirst({ where: { id, organizationId: principal.organizationId } });
    if (!row) throw new AppError(ApiKeyErrors.NOT_FOUND, { metadata: { id } });
    if (row.ownerId !== principal.actorId && !roleAtLeast(principal.role, 'ADMIN')) throw new AppError(AuthErrors.FORBIDDEN);
    if (!row.revokedAt) await this.prisma.apiKey.updateMany({ where: { id: row.id, organizationId: principal.organizationId }, data: { revokedAt: new Date() } });
    await this.authenticator.invalidate({ tokenHash: row.tokenHash });
  }

  private async findOwner(organizationId: string, ownerId: string): Promise<{ id: string; type: ApiKeyOwnerType; role: Role } | undefined> {
    const [member, serviceAccount] = await Promise.all([
      this.prisma.member.findFirst({ where: { id: ownerId, organizationId }, select: { id: true, role: true } }),
      this.prisma.serviceAccount.findFirst({ where: { id: ownerId, organizationId }, select: { id: true, role: true } }),
    ]);
    if (member) return { ...member, type: 'MEMBERSHIP' };
    if (serviceAccount) return { ...serviceAccount, type: 'SERVICE_ACCOUNT' };
    return undefined;
  }
}
