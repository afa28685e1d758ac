/** What a vendor sells: the instance types of its catalogue (data files beside this one), read by the sandbox-plan calculator. */

/** How a type runs microVMs: on bare metal, or as a VM that supports nested virtualisation. */
export type MicroVmSupport = 'bare-metal' | 'nested-virtualization' | 'none';

export interface InstanceType {
  readonly name: string;
  readonly vcpu: number;
  readonly memoryGiB: number;
  /** Local (instance-store / local SSD) disk; microVM root and scratch disks live there. */
  readonly localDiskGiB: number;
  readonly microVm: MicroVmSupport;
  /** Regions where the type is offered. */
  readonly regions: readonly string[];
  /** On-demand USD per hour by region; regions absent here use the catalogue's base price region. */
  readonly hourlyUsd: Readonly<Record<string, number>>;
}

/** One vendor's instance catalogue, a data file with its source and date. */
export interface InstanceCatalogue {
  readonly vendor: string;
  readonly source: string;
  readonly asOf: string;
  readonly basePriceRegion: string;
  readonly types: readonly InstanceType[];
}
