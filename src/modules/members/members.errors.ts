import { defineErrors } from '@/common/errors/error-catalogue';

export const MemberErrors = defineErrors('Member', {
  NOT_FOUND: [404, 'The member does not exist.'],
  EMAIL_TAKEN: [409, 'A member with this email already exists in the organization.'],
  LAST_OWNER: [409, 'The organization must keep at least one OWNER member.'],
});
