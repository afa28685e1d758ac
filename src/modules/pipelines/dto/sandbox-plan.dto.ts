import { ApiProperty } from '@nestjs/swagger';

export class SandboxPoolStepDto {
  @ApiProperty() name: string;
  @ApiProperty() cpu: number;
  @ApiProperty() memoryGiB: number;
  @ApiProperty() diskGiB: number;
}

export class SandboxPoolDto {
  @ApiProperty() executionEnvironmentId: string;
  @ApiProperty({ type: 'integer', description: 'ceil(maxConcurrentSandboxes / slotsPerHost)' }) hostsNeeded: number;
  @ApiProperty({ description: "The vendor's instance type: cheapest hostsNeeded x hourly price, ties by fewer hosts, fewer idle slots, then name" })
  instanceType: string;
  @ApiProperty({
    type: 'integer',
    description: 'Most sandboxes of the environment that can run at once: the maximum-weight antichain (weights = parallelism) of the dependency order',
  })
  maxConcurrentSandboxes: number;
  @ApiProperty({ type: 'integer', description: 'Sandbox slots (largest step per resource + microVM overhead) that fit on one host after its reservation' })
  slotsPerHost: number;
  @ApiProperty({ type: [SandboxPoolStepDto], description: 'The steps that run in the environment, by name' }) steps: SandboxPoolStepDto[];
}

export class SandboxPlanDto {
  @ApiProperty({ type: [SandboxPoolDto], description: 'One pool per execution environment the version uses, by environment id' }) pools: SandboxPoolDto[];
}
