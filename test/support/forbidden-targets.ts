/**
 * Every spelling of a host a client may not aim the product at (loopback, private, link-local, CGNAT, cloud metadata),
 * as the URL host part: names with odd case and trailing dots, IPv4 in hex and decimal, IPv6 forms that embed an IPv4
 * address (mapped, compatible, translated, NAT64, 6to4, Teredo). The address guard (libs/net-guard) must refuse each
 * one wherever a tenant names a target: webhook URLs (hostile-input, platform) and session proxies (session-proxy).
 * One list, so a spelling found later is tested everywhere at once.
 */
export const FORBIDDEN_TARGET_HOSTS: readonly string[] = [
  // loopback
  '127.0.0.1',
  'localhost:8080',
  'LOCALHOST.',
  'localhost..',
  'api.localhost',
  '0x7f.1',
  '2130706433',
  '[::1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[::7f00:1]',
  '[::ffff:0:7f00:1]',
  '[2001:0:4136:e378:8000:63bf:80ff:fffe]',
  // private and unique-local
  '10.1.2.3',
  '192.168.0.10',
  '172.16.5.4',
  '[2002:a00:1::]',
  '[fd00::1]',
  // CGNAT
  '100.64.0.1',
  // link-local
  '169.254.10.1',
  '[fe80::1]',
  // cloud metadata, by address and by name
  '169.254.169.254',
  '100.100.100.200',
  '[::ffff:0:a9fe:a9fe]',
  '[64:ff9b::a9fe:a9fe]',
  '[fd00:ec2::254]',
  'metadata.google.internal',
  'METADATA.GOOGLE.INTERNAL.',
  'metadata',
  'instance-data',
];
