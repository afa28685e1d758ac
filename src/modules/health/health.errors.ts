import { defineErrors } from '@/common/errors/error-catalogue';

export const HealthErrors = defineErrors('Health', {
  SERVICE_UNAVAILABLE: [503, 'A dependency of the service is unavailable.'],
});
