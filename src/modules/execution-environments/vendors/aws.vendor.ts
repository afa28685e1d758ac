import type { InstanceCatalogue } from './instance-catalogue';
import catalogue from './aws.catalogue.json';
import type { CloudVendor } from './vendor';

/** AWS commercial, China and GovCloud regions (https://docs.aws.amazon.com/global-infrastructure/latest/regions/aws-regions.html). */
const REGIONS = [
  'us-east-1',
  'us-east-2',
  'us-west-1',
  'us-west-2',
  'af-south-1',
  'ap-east-1',
  'ap-east-2',
  'ap-south-1',
  'ap-south-2',
  'ap-southeast-1',
  'ap-southeast-2',
  'ap-southeast-3',
  'ap-southeast-4',
  'ap-southeast-5',
  'ap-southeast-7',
  'ap-northeast-1',
  'ap-northeast-2',
  'ap-northeast-3',
  'ca-central-1',
  'ca-west-1',
  'eu-central-1',
  'eu-central-2',
  'eu-west-1',
  'eu-west-2',
  'eu-west-3',
  'eu-south-1',
  'eu-south-2',
  'eu-north-1',
  'il-central-1',
  'me-south-1',
  'me-central-1',
  'mx-central-1',
  'sa-east-1',
  'us-gov-east-1',
  'us-gov-west-1',
  'cn-north-1',
  'cn-northwest-1',
];

/** Resource ids are a prefix and 8 (older) or 17 hex digits; account ids are 12 digits. */
const resourceId = (prefix: string) => ({
  pattern: new RegExp(`^${prefix}-(?:[0-9a-f]{8}|[0-9a-f]{17})$`),
  message: `must be an AWS id: ${prefix}- followed by 8 or 17 lower-case hex digits`,
});

export const AWS: CloudVendor = {
  regions: new Set(REGIONS),
  shapes: {
    vpcId: resourceId('vpc'),
    subnetId: resourceId('subnet'),
    securityGroupId: resourceId('sg'),
    cloudAccountId: { pattern: /^[0-9]{12}$/, message: 'must be a 12-digit AWS account id' },
  },
  catalogue: catalogue as InstanceCatalogue,
};
