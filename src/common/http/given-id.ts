import { AppError } from '@/common/errors/app-error';
import type { ErrorEntry } from '@/common/errors/error-catalogue';
import { invalidFields } from '@/common/errors/invalid-fields';
import { isUniqueViolation } from '@/common/prisma/unique-violation';

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

/**
 * Creates a row whose `givenId` is unique per organization. An explicit givenId that is taken is a
 * 409; one derived from the name gets the first free numeric suffix instead.
 */
export async function createWithGivenId<T>(name: string, explicit: string | undefined, taken: ErrorEntry, create: (givenId: string) => Promise<T>): Promise<T> {
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
