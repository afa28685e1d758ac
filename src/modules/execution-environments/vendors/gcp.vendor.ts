import type { InstanceCatalogue } from './instance-catalogue';
import catalogue from './gcp.catalogue.json';
import type { CloudVendor } from './vendor';

/** Google Cloud regions (https://cloud.google.com/compute/docs/regions-zones). */
const REGIONS = [
  'us-central1',
  'us-east1',
  'us-east4',
  'us-east5',
  'us-south1',
  'us-west1',
  'us-west2',
  'us-west3',
  'us-west4',
  'northamerica-northeast1',
  'northamerica-northeast2',
  'northamerica-south1',
  'southamerica-east1',
  'southamerica-west1',
  'europe-west1',
  'europe-west2',
  'europe-west3',
  'europe-west4',
  'europe-west6',
  'europe-west8',
  'europe-west9',
  'europe-west10',
  'europe-west12',
  'europe-north1',
  'europe-north2',
  'europe-central2',
  'europe-southwest1',
  'asia-east1',
  'asia-east2',
  'asia-northeast1',
  'asia-northeast2',
  'asia-northeast3',
  'asia-south1',
  'asia-south2',
  'asia-southeast1',
  'asia-southeast2',
  'australia-southeast1',
  'australia-southeast2',
  'me-west1',
  'me-central1',
  'me-central2',
  'africa-south1',
];

/** VPC networks, subnetworks and firewall rules are RFC 1035 names (1-63 characters). */
const NAME = /^[a-z](?:[-a-z0-9]{0,61}[a-z0-9])?$/;
const name = (what: string) => ({
  pattern: NAME,
  message: `must be a ${what} name: a lower-case letter, then up to 62 lower-case letters, digits or dashes, not ending in a dash`,
});

export const GCP: CloudVendor = {
  regions: new Set(REGIONS),
  shapes: {
    vpcId: name('VPC network'),
    subnetId: name('subnetwork'),
    securityGroupId: name('firewall rule'),
    // Project ids: 6 to 30 characters, a letter first, no dash last.
    cloudAccountId: {
      pattern: /^[a-z][-a-z0-9]{4,28}[a-z0-9]$/,
      message: 'must be a Google Cloud project id: 6 to 30 lower-case letters, digits or dashes, starting with a letter',
    },
  },
  catalogue: catalogue as InstanceCatalogue,
};
