import { defineErrors } from '@/common/errors/error-catalogue';

export const PipelineErrors = defineErrors('Pipeline', {
  NOT_FOUND: [404, 'The pipeline does not exist.'],
  GIVEN_ID_TAKEN: [409, 'A pipeline with this givenId already exists in the project.'],
  PROJECT_NOT_FOUND: [422, 'The project does not exist in your organization.'],
});

export const PipelineVersionErrors = defineErrors('PipelineVersion', {
  NOT_FOUND: [404, 'The pipeline version does not exist.'],
  DUPLICATE_STEP_NAME: [422, 'Two steps have the same name.'],
  UNKNOWN_DEPENDENCY: [422, 'A step depends on a step the version does not have.'],
  DEPENDENCY_CYCLE: [422, 'The steps depend on each other in a cycle.'],
  UNKNOWN_EXECUTION_ENVIRONMENT: [422, 'A step names an execution environment that does not exist in your organization.'],
});

export const PipelineRunErrors = defineErrors('PipelineRun', {
  NOT_FOUND: [404, 'The pipeline run does not exist.'],
  VERSION_NOT_FOUND: [422, 'The pipeline version does not exist for this pipeline.'],
  INVALID_TRANSITION: [422, 'The run cannot move from its status to the requested one.'],
});

export const SandboxPlanErrors = defineErrors('SandboxPlan', {
  STEP_FITS_NO_INSTANCE_TYPE: [422, 'A step needs more than the largest instance type of its environment offers.'],
  NO_INSTANCE_TYPE_IN_REGION: [422, "The vendor's catalogue has no microVM-capable instance type in the environment's region."],
});
