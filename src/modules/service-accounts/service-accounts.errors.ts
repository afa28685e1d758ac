import { defineErrors } from '@/common/errors/error-catalogue';

export const ServiceAccountErrors = defineErrors('ServiceAccount', {
  NOT_FOUND: [404, 'The service account does not exist.'],
  NAME_TAKEN: [409, 'A service account with this name already exists.'],
});
