import type { ExecutionEnvironmentType } from '@/generated/prisma/enums';
import { AWS } from './aws.vendor';
import { GCP } from './gcp.vendor';
import type { CloudVendor } from './vendor';

export { vendorShapeProblems, VENDOR_FIELDS, type CloudVendor, type VendorField } from './vendor';

/** Every vendor an environment can be, by its `type`. */
export const VENDORS: Readonly<Record<ExecutionEnvironmentType, CloudVendor>> = { AWS, GCP };
