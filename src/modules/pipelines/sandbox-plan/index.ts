export { planSandboxes } from './sandbox-plan.calculator';
export { buildStepGraph, type StepGraph } from './step-graph';
export { maxWeightAntichain, type MaxAntichain } from './max-antichain';
export { hostCapacity, slotSize, slotsPerHost, typesInRegion, hourlyMicroUsd } from './host-fit';
export type * from './sandbox-plan.types';
