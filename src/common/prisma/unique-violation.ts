import { Prisma } from '@/generated/prisma/client';

/** True for a unique-constraint violation (P2002) whose constraint covers `field`. */
export function isUniqueViolation(error: unknown, field: string): boolean {
  if (!(error instanceof Prisma.PrismaClientKnownRequestError) || error.code !== 'P2002') return false;
  const meta = error.meta as { target?: unknown; driverAdapterError?: { cause?: { constraint?: { fields?: string[]; index?: string } } } } | undefined;
  const constraint = meta?.driverAdapterError?.cause?.constraint;
  const names = [meta?.target, constraint?.fields, constraint?.index].flat().filter((v): v is string => typeof v === 'string');
  // Index names follow Prisma's convention <Model>_<field>_<field>_key.
  return names.some((name) => name.replace(/"/g, '') === field || name.split('_').includes(field));
}
