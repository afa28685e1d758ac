import { randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { ApiKeyAuthenticator } from '@/common/auth/api-key-authenticator.service';
import { SUPERADMIN_PERMISSION } from '@/common/auth/auth.decorators';
import { hashToken } from '@/common/auth/api-key-hash';
import { apiKeyTokenSuffix, encodeApiKeyToken } from '@/common/auth/api-key-token';
import { hasPermission, Permission, principalMay, ROLE_ORDER } from '@/common/auth/permissions';
import { roleAtLeast, type Principal, type Role } from '@/common/auth/principal';
import { mayMintTokenFor } from '@/common/auth/role-rules';
import { AppError } from '@/common/errors/app-error';
import { AuthErrors } from '@/common/errors/common.errors';
import { invalidFields } from '@/common/errors/invalid-fields';
import { fromModel, newestFirst, Page, paginate } from '@/common/pagination/pagination';
import { PrismaService } from '@/common/prisma/prisma.service';
import type { ApiKey, ApiKeyOwnerType, Prisma } from '@/generated/prisma/client';
import { AuditAction } from '@/modules/audit/audit-actions';
import { AuditService, type SystemActor } from '@/modules/audit/audit.service';
import { ApiKeyErrors } from './api-keys.errors';
import { ApiKeyDto, ApiKeyQueryDto, CreateApiKeyDto, CreatedApiKeyDto, toApiKeyDto } from './dto/api-key.dto';

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
  /** Empty or absent: the key may do everything its owner may. */
  scopes?: string[];
}

interface KeyOwner {
  id: string;
  type: ApiKeyOwnerType;
  role: Role;
  isSuperadmin: boolean;
}

function mintToken(): { token: string; tokenHash: string; keySuffix: string } {
  const token = encodeApiKeyToken(randomBytes(32));
  return { token, tokenHash: hashToken(token), keySuffix: apiKeyTokenSuffix(token) };
}

/**
 * API keys. A key acts with its owner's role, so a key can never do more than its creator: no key
 * for (and no reading, rotating or revoking the keys of) an owner above the caller's role; keys of
 * others need `apiKeys:manageOthers`; and a key created by an expiring key cannot outlive it.
 */
@Injectable()
export class ApiKeysService {
  constructor(
    private readonly prisma: PrismaService,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly audit: AuditService,
  ) {}

  /** Mints a token and stores only its hash; the token is in the result and nowhere else. */
  async issue(key: NewApiKey, actor: Principal | SystemActor): Promise<CreatedApiKeyDto> {
    const { token, tokenHash, keySuffix } = mintToken();
    const row = await this.prisma.$transaction(async (tx) => {
      const created = await tx.apiKey.create({ data: { ...key, tokenHash, keySuffix } });
      await this.audit.record(tx, actor, {
        organizationId: key.organizationId,
        action: AuditAction.ApiKeyCreated,
        targetType: 'apiKey',
        targetId: created.id,
        metadata: {
          name: created.name,
          ownerId: created.ownerId,
          ownerType: created.ownerType,
          ...(created.expiresAt && { expiresAt: created.expiresAt.toISOString() }),
          ...(created.scopes.length > 0 && { scopes: created.scopes }),
        },
      });
      return created;
    });
    return { ...toApiKeyDto(row), token };
  }

  async create(principal: Principal, dto: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    const expiresAt = this.expiryFor(principal, dto.expiresAt);
    const owner = await this.findOwner(principal.organizationId, dto.ownerId);
    if (!owner)
      throw new AppError(ApiKeyErrors.OWNER_NOT_FOUND, {
        metadata: { ownerId: dto.ownerId },
        details: [invalidFields(['data.ownerId: is not a member or service account of your organization'])],
      });
    this.assertMayManageKeysOf(principal, owner);
    this.assertMayMintFor(principal, owner);
    const scopes = this.scopesFor(principal, owner, dto.scopes);
    return this.issue(
      {
        organizationId: principal.organizationId,
        ownerId: owner.id,
        ownerType: owner.type,
        createdById: principal.actorId,
        name: dto.name,
        description: dto.description,
        expiresAt,
        scopes,
      },
      principal,
    );
  }

  async list(principal: Principal, query: ApiKeyQueryDto): Promise<Page<ApiKeyDto>> {
    const where: Prisma.ApiKeyWhereInput = {};
    if (!principalMay(principal, Permission.ApiKeysManageOthers)) {
      if (query.ownerId && query.ownerId !== principal.actorId) throw this.forbiddenOthers();
      where.ownerId = principal.actorId;
    } else {
      if (query.ownerId) where.ownerId = query.ownerId;
      const hidden = await this.ownersAbove(principal);
      if (hidden.length) where.AND = [{ ownerId: { notIn: hidden } }];
    }
    return paginate(fromModel(this.prisma.apiKey, { ...where, organizationId: principal.organizationId }), LIST, query, toApiKeyDto);
  }

  async get(principal: Principal, id: string): Promise<ApiKeyDto> {
    return toApiKeyDto(await this.findManageable(this.prisma, principal, id));
  }

  /** Revokes at once in every API process: the hash is announced on the invalidation channel. */
  async revoke(principal: Principal, id: string): Promise<void> {
    const row = await this.prisma.$transaction(async (tx) => {
      const key = await this.findManageable(tx, principal, id);
      // Only the revocation that changes the row records it: a concurrent one finds it revoked.
      const { count } = key.revokedAt
        ? { count: 0 }
        : await tx.apiKey.updateMany({ where: { id: key.id, organizationId: principal.organizationId, revokedAt: null }, data: { revokedAt: new Date() } });
      if (count > 0) {
        await this.audit.record(tx, principal, {
          organizationId: principal.organizationId,
          action: AuditAction.ApiKeyRevoked,
          targetType: 'apiKey',
          targetId: key.id,
          metadata: { name: key.name, ownerId: key.ownerId },
        });
      }
      return key;
    });
    await this.authenticator.invalidate({ tokenHash: row.tokenHash });
  }

  /**
   * A new token for the same key record (returned once); the old token stops working at once in
   * every API process. For a leaked token: the key keeps its id, name, owner and expiry.
   */
  async rotate(principal: Principal, id: string): Promise<CreatedApiKeyDto> {
    const { token, tokenHash, keySuffix } = mintToken();
    const { before, after } = await this.prisma.$transaction(async (tx) => {
      const key = await this.findManageable(tx, principal, id, { mintsToken: true });
      if (key.revokedAt) throw new AppError(ApiKeyErrors.NOT_ROTATABLE, { message: 'A revoked key cannot be rotated; create a new one.', metadata: { id } });
      if (key.expiresAt && key.expiresAt.getTime() <= Date.now())
        throw new AppError(ApiKeyErrors.NOT_ROTATABLE, { message: 'An expired key cannot be rotated; create a new one.', metadata: { id } });
      this.assertWithinExpiryCeiling(principal, key.expiresAt);
      this.assertWithinScopes(principal, key.scopes);
      const { count } = await tx.apiKey.updateMany({
        where: { id: key.id, organizationId: principal.organizationId, tokenHash: key.tokenHash },
        data: { tokenHash, keySuffix },
      });
      if (count === 0) throw new AppError(ApiKeyErrors.NOT_FOUND, { metadata: { id } });
      await this.audit.record(tx, principal, {
        organizationId: principal.organizationId,
        action: AuditAction.ApiKeyRotated,
        targetType: 'apiKey',
        targetId: key.id,
        metadata: { name: key.name, ownerId: key.ownerId },
      });
      return { before: key, after: await tx.apiKey.findUniqueOrThrow({ where: { id: key.id } }) };
    });
    await this.authenticator.invalidate({ tokenHash: before.tokenHash });
    return { ...toApiKeyDto(after), token };
  }

  /** Revokes every key of one owner inside the caller's transaction (the owner is being removed); returns how many. */
  async revokeAllOf(tx: Prisma.TransactionClient, organizationId: string, ownerId: string): Promise<number> {
    const { count } = await tx.apiKey.updateMany({ where: { organizationId, ownerId, revokedAt: null }, data: { revokedAt: new Date() } });
    return count;
  }

  /** The expiry of a new key: never later than the expiry of the key creating it (which is also the default). */
  private expiryFor(principal: Principal, requested: string | undefined): Date | undefined {
    const ceiling = principal.apiKeyExpiresAt ? new Date(principal.apiKeyExpiresAt) : undefined;
    if (!requested) return ceiling;
    const expiresAt = new Date(requested);
    if (expiresAt.getTime() <= Date.now())
      throw new AppError(ApiKeyErrors.EXPIRY_IN_PAST, { details: [invalidFields(['data.expiresAt: must be in the future'])] });
    if (ceiling && expiresAt > ceiling) {
      throw new AppError(ApiKeyErrors.EXPIRY_AFTER_CREATOR, {
        message: `A key cannot outlive the key that creates it: expiresAt must be at most ${ceiling.toISOString()}.`,
        details: [invalidFields([`data.expiresAt: must be at most ${ceiling.toISOString()}, when the key you are using expires`])],
        metadata: { maxExpiresAt: ceiling.toISOString() },
      });
    }
    return expiresAt;
  }

  /**
   * The scopes of a new key: each one held by the owner's role (else the key would promise what it
   * cannot do). A key created by a scoped key is scoped within it (its scopes are the default), so
   * a scoped key never trades itself for a broader one.
   */
  private scopesFor(principal: Principal, owner: KeyOwner, requested: string[] | undefined): string[] {
    const scopes = requested ?? (principal.scopes ? [...principal.scopes] : []);
    if (principal.scopes) {
      const beyond = scopes.length === 0 ? ['(unscoped)'] : scopes.filter((scope) => !principal.scopes?.includes(scope));
      if (beyond.length > 0) {
        throw new AppError(ApiKeyErrors.SCOPE_BEYOND_CREATOR, {
          message: `The key you are using is scoped to ${principal.scopes.join(', ')}; the new key must be scoped within them.`,
          details: [invalidFields([`data.scopes: must be within the scopes of the key you are using (${principal.scopes.join(', ')})`])],
          metadata: { field: 'data.scopes', allowedScopes: [...principal.scopes], scopes: beyond },
        });
      }
    }
    const notHeld = scopes.filter((scope) => !hasPermission(owner.role, scope as Permission));
    if (notHeld.length > 0) {
      throw new AppError(ApiKeyErrors.SCOPE_NOT_HELD, {
        message: `The owner's role ${owner.role} does not hold ${notHeld.join(', ')}.`,
        details: [invalidFields(notHeld.map((scope) => `data.scopes: ${scope} is not a permission of the role ${owner.role}`))],
        metadata: { field: 'data.scopes', ownerRole: owner.role, scopes: notHeld },
      });
    }
    return scopes;
  }

  /** A scoped key rotates only keys scoped within it: the new token must not do more than the key asking for it. */
  private assertWithinScopes(principal: Principal, scopes: readonly string[]): void {
    if (!principal.scopes) return;
    if (scopes.length > 0 && scopes.every((scope) => principal.scopes?.includes(scope))) return;
    throw new AppError(AuthErrors.FORBIDDEN, {
      message: `The key you are using is scoped to ${principal.scopes.join(', ')}; it cannot rotate a key that may do more.`,
      metadata: { permission: Permission.ApiKeysOwn, scopes: [...principal.scopes] },
    });
  }

  /**
   * Rotation keeps the key's expiry, so the new token may not outlive the key making the request
   * either: otherwise an expiring key would trade itself for a token of a longer-lived one.
   */
  private assertWithinExpiryCeiling(principal: Principal, expiresAt: Date | null): void {
    if (!principal.apiKeyExpiresAt) return;
    const ceiling = new Date(principal.apiKeyExpiresAt);
    if (expiresAt && expiresAt <= ceiling) return;
    throw new AppError(ApiKeyErrors.EXPIRY_AFTER_CREATOR, {
      message: `The key you are using expires at ${ceiling.toISOString()}; it cannot rotate a key that ${expiresAt ? `expires later (${expiresAt.toISOString()})` : 'never expires'}.`,
      metadata: { maxExpiresAt: ceiling.toISOString(), ...(expiresAt && { expiresAt: expiresAt.toISOString() }) },
    });
  }

  /** A key the caller may see and manage: their own, or, with apiKeys:manageOthers, one whose owner is not above them. */
  private async findManageable(client: Prisma.TransactionClient, principal: Principal, id: string, options: { mintsToken?: boolean } = {}): Promise<ApiKey> {
    const key = await client.apiKey.findFirst({ where: { id, organizationId: principal.organizationId } });
    if (!key) throw new AppError(ApiKeyErrors.NOT_FOUND, { metadata: { id } });
    if (key.ownerId === principal.actorId) return key;
    const owner = await this.findOwner(principal.organizationId, key.ownerId);
    // A key whose owner is gone acts for nobody; managing it needs the same permission as any other's.
    this.assertMayManageKeysOf(principal, owner ?? { id: key.ownerId, type: key.ownerType, role: 'VIEWER', isSuperadmin: false });
    if (options.mintsToken && owner) this.assertMayMintFor(principal, owner);
    return key;
  }

  /**
   * A token of a superadmin's key acts as a superadmin (every organization's reports, global module
   * definitions, internal error details), which no organization role grants: only a superadmin may
   * mint one for another superadmin (by creating or rotating a key). A token of an ADMIN or OWNER
   * member acts as that person: only they or an OWNER mint one (mayMintTokenFor).
   */
  private assertMayMintFor(principal: Principal, owner: KeyOwner): void {
    if (owner.id === principal.actorId) return;
    if (owner.isSuperadmin && !principal.isSuperadmin)
      throw new AppError(AuthErrors.FORBIDDEN, {
        message: "Only a superadmin may issue or rotate a superadmin's key: its token would act as a superadmin.",
        metadata: { permission: SUPERADMIN_PERMISSION, ownerIsSuperadmin: true },
      });
    if (!mayMintTokenFor(principal, owner))
      throw new AppError(AuthErrors.FORBIDDEN, {
        message: `Only the member themself or an OWNER may issue or rotate a key of a member with the role ${owner.role}: its token would act as that person.`,
        metadata: { permission: Permission.ApiKeysManageOthers, ownerRole: owner.role, ownerType: owner.type, callerRole: principal.role },
      });
  }

  private assertMayManageKeysOf(principal: Principal, owner: KeyOwner): void {
    if (owner.id === principal.actorId) return;
    if (!principalMay(principal, Permission.ApiKeysManageOthers)) throw this.forbiddenOthers();
    if (!roleAtLeast(principal.role, owner.role)) {
      throw new AppError(AuthErrors.FORBIDDEN, {
        message: `Your role ${principal.role} cannot manage the keys of an owner with the role ${owner.role}.`,
        metadata: { permission: Permission.ApiKeysManageOthers, ownerRole: owner.role },
      });
    }
  }

  private forbiddenOthers(): AppError {
    return new AppError(AuthErrors.FORBIDDEN, {
      message: `Managing the keys of others needs the permission ${Permission.ApiKeysManageOthers}.`,
      metadata: { permission: Permission.ApiKeysManageOthers },
    });
  }

  /** Ids of the members and service accounts whose role is above the caller's: their keys are hidden from the caller. */
  private async ownersAbove(principal: Principal): Promise<string[]> {
    const above = ROLE_ORDER.filter((role) => !roleAtLeast(principal.role, role));
    if (!above.length) return [];
    const where = { organizationId: principal.organizationId, role: { in: above } };
    const [members, serviceAccounts] = await Promise.all([
      this.prisma.member.findMany({ where, select: { id: true } }),
      this.prisma.serviceAccount.findMany({ where, select: { id: true } }),
    ]);
    return [...members, ...serviceAccounts].map((o) => o.id);
  }

  private async findOwner(organizationId: string, ownerId: string): Promise<KeyOwner | undefined> {
    const [member, serviceAccount] = await Promise.all([
      this.prisma.member.findFirst({ where: { id: ownerId, organizationId }, select: { id: true, role: true, isSuperadmin: true } }),
      this.prisma.serviceAccount.findFirst({ where: { id: ownerId, organizationId }, select: { id: true, role: true } }),
    ]);
    if (member) return { ...member, type: 'MEMBERSHIP' };
    if (serviceAccount) return { ...serviceAccount, type: 'SERVICE_ACCOUNT', isSuperadmin: false };
    return undefined;
  }
}
