import { defineErrors } from '@/common/errors/error-catalogue';

export const GitServerErrors = defineErrors('GitServer', {
  NOT_FOUND: [404, 'The git server does not exist.'],
  HOST_TAKEN: [409, 'This git server is already registered in the organization.'],
  IN_USE: [409, 'Integrations are connected through this git server; delete them first.'],
});
