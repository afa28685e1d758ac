import type { InstanceCatalogue, InstanceType, PoolStep, Resources, SandboxOverheads } from './sandbox-plan.types';

/** Guards floor() against binary rounding: 2.75 x 34 must count as 34 slots, not 33.999... */
const EPSILON = 1e-9;

/** One sandbox slot of a pool: the largest step per resource plus the per-microVM overhead. */
export function slotSize(steps: readonly PoolStep[], overheads: SandboxOverheads): Resources {
  let cpu = 0;
  let memoryGiB = 0;
  let diskGiB = 0;
  for (const step of steps) {
    if (step.cpu > cpu) cpu = step.cpu;
    if (step.memoryGiB > memoryGiB) memoryGiB = step.memoryGiB;
    if (step.diskGiB > diskGiB) diskGiB = step.diskGiB;
  }
  return { cpu: cpu + overheads.microVm.cpu, memoryGiB: memoryGiB + overheads.microVm.memoryGiB, diskGiB: diskGiB + overheads.microVm.diskGiB };
}

/** What a host of `type` offers to sandboxes: its resources minus the host reservation. */
export function hostCapacity(type: InstanceType, overheads: SandboxOverheads): Resources {
  const r = overheads.hostReservation;
  return { cpu: type.vcpu - r.cpu, memoryGiB: type.memoryGiB - r.memoryGiB, diskGiB: type.localDiskGiB - r.diskGiB };
}

/** How many slots fit on one host: the minimum over cpu, memory and disk (0 when one does not fit). */
export function slotsPerHost(slot: Resources, capacity: Resources): number {
  const fit = (offered: number, needed: number) => (offered <= 0 ? 0 : Math.max(0, Math.floor(offered / needed + EPSILON)));
  return Math.min(fit(capacity.cpu, slot.cpu), fit(capacity.memoryGiB, slot.memoryGiB), fit(capacity.diskGiB, slot.diskGiB));
}

/** The catalogue's types that can run microVMs and are offered in `region`. */
export function typesInRegion(catalogue: InstanceCatalogue, region: string): InstanceType[] {
  return catalogue.types.filter((t) => t.microVm !== 'none' && t.regions.includes(region));
}

/** Hourly price of `type` in `region`, in micro-dollars (integers, so that totals compare exactly). */
export function hourlyMicroUsd(catalogue: InstanceCatalogue, type: InstanceType, region: string): number {
  const usd = type.hourlyUsd[region] ?? type.hourlyUsd[catalogue.basePriceRegion];
  if (usd === undefined) throw new Error(`catalogue ${catalogue.vendor}: ${type.name} has no price for ${region} nor ${catalogue.basePriceRegion}`);
  return Math.round(usd * 1e6);
}

/** The largest type by vCPU, then memory, then disk, then name: what an error names when nothing fits. */
export function largestType(types: readonly InstanceType[]): InstanceType {
  return types.reduce((best, t) =>
    t.vcpu !== best.vcpu
      ? t.vcpu > best.vcpu
        ? t
        : best
      : t.memoryGiB !== best.memoryGiB
        ? t.memoryGiB > best.memoryGiB
          ? t
          : best
        : t.localDiskGiB !== best.localDiskGiB
          ? t.localDiskGiB > best.localDiskGiB
            ? t
            : best
          : t.name > best.name
            ? t
            : best,
  );
}

export interface HostChoice {
  readonly type: InstanceType;
  readonly slotsPerHost: number;
  readonly hostsNeeded: number;
  /** hostsNeeded x hourly price, micro-dollars. */
  readonly costMicroUsd: number;
  /** Slots paid for but not needed at the peak: hostsNeeded x slotsPerHost - maxConcurrentSandboxes. */
  readonly strandedSlots: number;
}

/** The offer of `type` for `load` concurrent slots of size `slot`, or undefined when a slot does not fit. */
export function offer(
  catalogue: InstanceCatalogue,
  type: InstanceType,
  region: string,
  slot: Resources,
  load: number,
  overheads: SandboxOverheads,
): HostChoice | undefined {
  const slots = slotsPerHost(slot, hostCapacity(type, overheads));
  if (slots === 0) return undefined;
  const hostsNeeded = Math.ceil(load / slots);
  return {
    type,
    slotsPerHost: slots,
    hostsNeeded,
    costMicroUsd: hostsNeeded * hourlyMicroUsd(catalogue, type, region),
    strandedSlots: hostsNeeded * slots - load,
  };
}

/** Cheapest first; ties by fewer hosts, then fewer stranded slots, then name: a total order, so plans are reproducible. */
export function compareChoices(a: HostChoice, b: HostChoice): number {
  return (
    a.costMicroUsd - b.costMicroUsd ||
    a.hostsNeeded - b.hostsNeeded ||
    a.strandedSlots - b.strandedSlots ||
    (a.type.name < b.type.name ? -1 : a.type.name > b.type.name ? 1 : 0)
  );
}
