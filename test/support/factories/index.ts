/** Test data over Prisma: tenants (organization, member, token) and every resource they own. */
export * from './tenants';
export * from './resources';
