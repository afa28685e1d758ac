import type { InstanceCatalogue } from './instance-catalogue';

/** The fields of an environment whose shape depends on the vendor. */
export const VENDOR_FIELDS = ['region', 'vpcId', 'subnetId', 'securityGroupId', 'cloudAccountId'] as const;
export type VendorField = (typeof VENDOR_FIELDS)[number];

/** A cloud vendor: how its identifiers look, where it runs, and what hosts it sells. */
export interface CloudVendor {
  readonly regions: ReadonlySet<string>;
  /** Pattern and the sentence a 400 says when a value does not match, per field (region: the known list). */
  readonly shapes: Readonly<Record<Exclude<VendorField, 'region'>, { pattern: RegExp; message: string }>>;
  readonly catalogue: InstanceCatalogue;
}

/** `data.<field>: <what is wrong>` for each vendor field of `values` that has the wrong shape for `vendor`. */
export function vendorShapeProblems(vendor: CloudVendor, values: Partial<Record<VendorField, string>>): string[] {
  const problems: string[] = [];
  for (const field of VENDOR_FIELDS) {
    const value = values[field];
    if (value === undefined) continue;
    if (field === 'region') {
      if (!vendor.regions.has(value))
        problems.push(`data.region: must be a region of ${vendor.catalogue.vendor}, such as ${[...vendor.regions].slice(0, 3).join(', ')}`);
    } else if (!vendor.shapes[field].pattern.test(value)) {
      problems.push(`data.${field}: ${vendor.shapes[field].message}`);
    }
  }
  return problems;
}
