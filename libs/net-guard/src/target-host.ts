import { domainToASCII } from 'node:url';
import { forbiddenAddressReason, isAddressLiteral, unbracket } from './address-class';

/**
 * Names that reach a cloud provider's instance metadata service from inside an instance. They are refused by name
 * because they may not resolve where the API runs, yet do where the dispatcher runs (or the other way round).
 * - metadata.google.internal, metadata.goog, metadata: GCP, https://cloud.google.com/compute/docs/metadata/querying-metadata
 * - instance-data, instance-data.ec2.internal: AWS EC2, https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/instancedata-data-retrieval.html
 * - metadata.azure.com, metadata.azure.internal: Azure IMDS aliases,
 *   https://learn.microsoft.com/azure/virtual-machines/instance-metadata-service
 * - metadata.platformequinix.com: Equinix Metal, https://deploy.equinix.com/developers/docs/server-metadata/metadata/
 * - metadata.tencentyun.com: Tencent Cloud, https://www.tencentcloud.com/document/product/213/4934
 */
export const METADATA_HOST_NAMES: readonly string[] = [
  'metadata.google.internal',
  'metadata.goog',
  'metadata',
  'instance-data',
  'instance-data.ec2.internal',
  'metadata.azure.com',
  'metadata.azure.internal',
  'metadata.platformequinix.com',
  'metadata.tencentyun.com',
];

/**
 * The form of a host every check compares: brackets removed, lower case, IDN as punycode (`url.domainToASCII`),
 * trailing dots removed (`localhost.` is `localhost` to a resolver). Null when the name is not a valid host.
 */
export function normalizeHostname(host: string): string | null {
  const bare = unbracket(host.trim());
  if (isAddressLiteral(bare)) return bare.toLowerCase();
  // domainToASCII also applies the WHATWG IPv4 forms, so `0x7f.1` comes back as `127.0.0.1`
  const ascii = domainToASCII(bare.replace(/\.+$/, ''));
  return ascii === '' ? null : ascii.toLowerCase();
}

/**
 * Why a host (name or IP literal) may not be a target before any DNS lookup: loopback names, cloud metadata
 * names and forbidden address literals. Null when only its resolved addresses can tell.
 */
export function forbiddenHostReason(host: string): string | null {
  const name = normalizeHostname(host);
  if (name === null) return `target host ${JSON.stringify(host)} is not a valid host name`;
  if (isAddressLiteral(name)) return forbiddenAddressReason(name);
  if (name === 'localhost' || name.endsWith('.localhost')) return `target host ${name} is a loopback name`;
  if (METADATA_HOST_NAMES.includes(name)) return `target host ${name} is a cloud metadata service`;
  return null;
}
