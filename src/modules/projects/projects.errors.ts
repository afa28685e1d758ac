import { defineErrors } from '@/common/errors/error-catalogue';

export const ProjectErrors = defineErrors('Project', {
  NOT_FOUND: [404, 'The project does not exist.'],
  GIVEN_ID_TAKEN: [409, 'A project with this givenId already exists.'],
});
