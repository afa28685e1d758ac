import type { InstanceCatalogue, InstanceType, MicroVmSupport } from '@/modules/execution-environments/vendors/instance-catalogue';

/** The vendors' catalogue types, owned by execution-environments (the data lives there), re-exported for the calculator's callers. */
export type { InstanceCatalogue, InstanceType, MicroVmSupport };

/** A step of a pipeline version as the calculator reads it. */
export interface PlanStep {
  readonly name: string;
  readonly executionEnvironmentId: string;
  readonly cpu: number;
  readonly memoryGiB: number;
  readonly diskGiB: number;
  /** Names of steps of the same version that must finish before this one starts. */
  readonly dependsOn?: readonly string[];
  /** How many sandboxes of this step run at once (default 1). */
  readonly parallelism?: number;
}

/** The execution environment a pool runs in: its vendor picks the catalogue, its region the prices. */
export interface PlanEnvironment {
  readonly id: string;
  readonly vendor: string;
  readonly region: string;
}

export interface Resources {
  readonly cpu: number;
  readonly memoryGiB: number;
  readonly diskGiB: number;
}

/** Per-microVM overhead added to every slot, and what a host keeps for itself. */
export interface SandboxOverheads {
  readonly microVm: Resources;
  readonly hostReservation: Resources;
}

export interface SandboxPlanInput {
  readonly steps: readonly PlanStep[];
  readonly environments: readonly PlanEnvironment[];
  /** Catalogues by vendor. */
  readonly catalogues: Readonly<Record<string, InstanceCatalogue>>;
  readonly overheads: SandboxOverheads;
}

export interface PoolStep {
  name: string;
  cpu: number;
  memoryGiB: number;
  diskGiB: number;
}

export interface SandboxPool {
  executionEnvironmentId: string;
  hostsNeeded: number;
  instanceType: string;
  maxConcurrentSandboxes: number;
  slotsPerHost: number;
  steps: PoolStep[];
}

/** Why no plan exists. Graph problems cannot happen for a stored version (publishing checks them). */
export type SandboxPlanProblem =
  | { kind: 'invalidGraph'; problem: StepGraphProblem }
  | { kind: 'unknownEnvironment'; step: string; executionEnvironmentId: string }
  | { kind: 'noCatalogue'; executionEnvironmentId: string; vendor: string }
  | { kind: 'noInstanceTypeInRegion'; executionEnvironmentId: string; vendor: string; region: string }
  /** `steps` are the steps that set the slot's size; one step alone when it alone fits no type. */
  | { kind: 'fitsNoInstanceType'; executionEnvironmentId: string; steps: string[]; largestType: string };

export type SandboxPlanResult = { ok: true; pools: SandboxPool[] } | { ok: false; problem: SandboxPlanProblem };

export type StepGraphProblem =
  | { kind: 'duplicateStepName'; steps: string[] }
  | { kind: 'unknownDependency'; step: string; dependsOn: string }
  /** The steps of one cycle in order: each depends on the one before it, and the first on the last. */
  | { kind: 'cycle'; steps: string[] };
