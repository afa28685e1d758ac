import { defineErrors } from '@/common/errors/error-catalogue';

export const ExecutionEnvironmentErrors = defineErrors('ExecutionEnvironment', {
  NOT_FOUND: [404, 'The execution environment does not exist.'],
  GIVEN_ID_TAKEN: [409, 'An execution environment with this givenId already exists.'],
});
