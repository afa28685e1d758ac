import { defineErrors } from '@/common/errors/error-catalogue';

export const ModuleDefinitionErrors = defineErrors('ModuleDefinition', {
  NOT_FOUND: [404, 'The module definition does not exist.'],
  NAME_TAKEN: [409, 'A module definition with this name already exists for the same owner.'],
  GLOBAL_REQUIRES_SUPERADMIN: [403, 'Only superadmins create global module definitions or publish versions to them.'],
});

export const ModuleVersionErrors = defineErrors('ModuleVersion', {
  VERSION_EXISTS: [409, 'A version of equal semver precedence already exists for this module definition.'],
});
