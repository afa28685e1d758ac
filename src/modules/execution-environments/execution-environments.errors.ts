import { defineErrors } from '@/common/errors/error-catalogue';

export const ExecutionEnvironmentErrors = defineErrors('ExecutionEnvironment', {
  NOT_FOUND: [404, 'The execution environment does not exist.'],
  GIVEN_ID_TAKEN: [409, 'An execution environment with this givenId already exists.'],
  INVALID_IDENTIFIER: [400, "An identifier does not have the shape of the vendor's."],
  IN_USE: [409, 'Pipeline versions use the execution environment; it cannot be deleted.'],
});
