import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { badRequest } from "../http/errors.ts";

/**
 * SSRF guard for caller-chosen upstream URLs (x-gateway-custom-host, config custom hosts). Rejects
 * non-http(s) schemes, credentials, fragments, private/reserved/link-local/metadata addresses (IPv4, IPv6
 * and IPv4-mapped IPv6) and host names that resolve to them. WHATWG URL parsing already normalises the
 * numeric tricks (decimal, octal, hex and shortened IPv4) to dotted form before we check.
 * TRUSTED_CUSTOM_HOSTS (host names, addresses or CIDRs) lets air-gapped deployments reach internal hosts.
 */

const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, "ipv4");
}
for (const [network, prefix] of [
  ["::", 128],
  ["::1", 128],
  ["64:ff9b::", 96],
  ["100::", 64],
  ["2001::", 32],
  ["2001:db8::", 32],
  ["2002::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, "ipv6");
}

const METADATA_HOSTS = new Set([
  "metadata.google.internal",
  "metadata.goog",
  "metadata",
  "instance-data",
  "instance-data.ec2.internal",
  "metadata.azure.com",
  "localhost",
]);

export interface TrustedHosts {
  names: Set<string>;
  networks: BlockList;
}

export function parseTrustedHosts(entries: string[]): TrustedHosts {
  const names = new Set<string>();
  const networks = new BlockList();
  for (const raw of entries) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    const [address, prefix] = entry.split("/");
    const family = isIP(address!);
    if (family && prefix !== undefined) networks.addSubnet(address!, Number(prefix), family === 4 ? "ipv4" : "ipv6");
    else if (family) networks.addAddress(address!, family === 4 ? "ipv4" : "ipv6");
    else names.add(entry);
  }
  return { names, networks };
}

/** The IPv4 address inside an IPv4-mapped IPv6 address (`::ffff:a.b.c.d` or `::ffff:7f00:1`), if any. */
function mappedIpv4(address: string): string | undefined {
  const dotted = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (dotted) return dotted[1];
  const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(address);
  if (!hex) return undefined;
  const high = Number.parseInt(hex[1]!, 16);
  const low = Number.parseInt(hex[2]!, 16);
  return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
}

function addressAllowed(address: string, trusted: TrustedHosts): boolean {
  // IPv4-mapped IPv6 is judged by its IPv4 address.
  const mapped = mappedIpv4(address);
  if (mapped) return addressAllowed(mapped, trusted);
  const family = isIP(address) === 6 ? "ipv6" : "ipv4";
  if (trusted.networks.check(address, family)) return true;
  return !FORBIDDEN.check(address, family);
}

/** Parses and checks a custom host without DNS (fast, synchronous); returns the normalised base URL. */
export function checkCustomHostSyntax(value: string, trusted: TrustedHosts, param = "x-gateway-custom-host"): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw badRequest(`Invalid custom host '${value}': not an absolute URL.`, param, "invalid_custom_host");
  }
  const reject = (why: string) => badRequest(`Custom host rejected: ${why}.`, param, "invalid_custom_host");
  if (url.protocol !== "https:" && url.protocol !== "http:") throw reject("only http and https are allowed");
  if (url.username || url.password) throw reject("URLs with credentials are not allowed");
  if (url.hash || value.includes("#")) throw reject("URL fragments are not allowed");
  const host = url.hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  if (trusted.names.has(host)) return url;
  if (isIP(host)) {
    if (!addressAllowed(host, trusted)) throw reject(`address ${host} is private, reserved or a metadata endpoint`);
    return url;
  }
  if (METADATA_HOSTS.has(host) || host.endsWith(".localhost") || host.endsWith(".internal")) {
    throw reject(`host ${host} is internal`);
  }
  return url;
}

/** Full check: syntax, then every address the host name resolves to. */
export async function checkCustomHost(value: string, trusted: TrustedHosts, param?: string): Promise<URL> {
  const url = checkCustomHostSyntax(value, trusted, param);
  const host = url.hostname
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  if (isIP(host) || trusted.names.has(host)) return url;
  let addresses: Array<{ address: string }>;
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    throw badRequest(
      `Custom host '${host}' could not be resolved.`,
      param ?? "x-gateway-custom-host",
      "invalid_custom_host",
    );
  }
  for (const { address } of addresses) {
    if (!addressAllowed(address, trusted)) {
      throw badRequest(
        `Custom host rejected: ${host} resolves to ${address}, a private or reserved address.`,
        param ?? "x-gateway-custom-host",
        "invalid_custom_host",
      );
    }
  }
  return url;
}
