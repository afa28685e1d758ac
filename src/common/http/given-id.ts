import { Prisma } from '@/generated/prisma/client';
import { AppError } from '@/common/errors/app-error';
import type { ErrorEntry } from '@/common/errors/error-catalogue';
import { invalidFields } from '@/common/errors/invalid-fields';

export const GIVEN_ID_PATTERN = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/** A URL-safe slug of a display name: "My API (v2)" -> "my-api-v2". */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 56)
    .replace(/-+$/g, '');
  return slug || 'item';
}

/** True for a unique-constraint violation (P2002) whose constraint covers `field`. */
export function isUniqueViolation(error: unknown, field: string): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError) || error.code !== 'P2002') return false;
  const meta = error.meta as { target?: unknown; driverAdapterError?: { cause?: { constraint?: { fields?: string[]; index?: string } } } } | undefined;
  const constraint = meta?.driverAdapterError?.cause?.constraint;
  const names = [meta?.target, constraint?.fields, constraint?.index].flat().filter((v): v is string => typeof v === 'string');
  // Index names follow Prisma's convention <Model>_<field>_<field>_key.
  return names.some((name) => name.replace(/"/g, '') === field || name.split('_').includes(field));
}

/**
 * Creates a row whose `givenId` is unique per organization. An explicit givenId that is taken is a
 * 409; one derived from the name gets the first free numeric suffix instead.
 */
export async function createWithGivenId<T>(
  name: string,
  explicit: string | undefined,
  taken: ErrorEntry,
  create: (givenId: string) => Promise<T>,
): Promise<T> {
  const base = explicit ?? slugify(name);
  for (let attempt = 1; attempt <= 50; attempt++) {
    const givenId = attempt === 1 ? base : `${base}-${attempt}`;
    try {
      return await create(givenId);
    } catch (error) {
      if (!isUniqueViolation(error, 'givenId')) throw error;
      if (explicit) throw new AppError(taken, { metadata: { givenId }, details: [invalidFields(['data.givenId: is already taken'])] });
    }
  }
  throw new AppError(taken, { metadata: { givenId: base } });
}
