import { defineErrors } from '@/common/errors/error-catalogue';

export const CodeSourceErrors = defineErrors('CodeSource', {
  NOT_FOUND: [404, 'The code source does not exist.'],
  ALREADY_CONNECTED: [409, 'This repository is already connected in the organization.'],
  LOCAL_PATH_TAKEN: [409, "This LOCAL_GIT repository is connected by another organization; a path on the server's disk belongs to one organization at a time."],
  HAS_MERGE_QUEUES: [409, 'Merge queues run on this code source; only a caller who may operate merge queues (ADMIN) can disconnect it with them.'],
  REPOSITORY_OUTSIDE_ACCOUNT: [
    403,
    "Attaching a repository outside the integration's own account (one its credentials reach as a collaborator or through another organization) needs integrations:write (ADMIN).",
  ],
  NOT_IN_INSTALLATION: [422, "The repository is not covered by the integration's GitHub App installation; add it to the installation on GitHub first."],
  INTEGRATION_REQUIRED: [422, 'Give integrationId, or provider LOCAL_GIT with the path of a bare repository.'],
  INTEGRATION_NOT_FOUND: [422, 'The integration does not exist in this organization.'],
  INTEGRATION_NOT_ACTIVE: [422, 'The integration is not ACTIVE.'],
  INVALID_REPOSITORY: [422, "repository must be owner/name (LOCAL_GIT: an absolute path under the organization's directory GIT_LOCAL_ROOT/<organization id>)."],
});
