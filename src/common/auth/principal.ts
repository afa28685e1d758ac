import type { ApiKeyOwnerType, Role } from '@/generated/prisma/enums';

export type { Role };
export type ActorType = ApiKeyOwnerType;

/** Who is calling: set on the request by the bearer guard, read by handlers. */
export interface Principal {
  organizationId: string;
  actorId: string;
  actorType: ActorType;
  actorName: string;
  role: Role;
  isSuperadmin: boolean;
  apiKeyId: string;
  /** When the key in use expires (ISO 8601); keys it creates may not outlive it. */
  apiKeyExpiresAt?: string;
  /**
   * Set when the key in use is scoped: the only permissions it may use (within its owner's role).
   * A scoped key never acts as a superadmin, and keys it creates or rotates are scoped within it.
   */
  scopes?: readonly string[];
}

const ROLE_RANK: Record<Role, number> = { VIEWER: 0, MEMBER: 1, ADMIN: 2, OWNER: 3 };

export function roleAtLeast(role: Role, minimum: Role): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[minimum];
}
