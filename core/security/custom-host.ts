import { lookup as lookupCallback, type LookupAddress } from "node:dns";
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { badRequest } from "../http/errors.ts";
import { TtlCache } from "../util/ttl-cache.ts";

/**
 * SSRF guard for caller-chosen upstream URLs (x-gateway-custom-host, config custom hosts). Rejects
 * non-http(s) schemes, credentials, fragments, private/reserved/link-local/metadata addresses (IPv4, IPv6
 * and IPv4-mapped IPv6) and host names that resolve to them. WHATWG URL parsing already normalises the
 * numeric tricks (decimal, octal, hex and shortened IPv4) to dotted form before we check.
 * TRUSTED_CUSTOM_HOSTS (host names, addresses or CIDRs) lets air-gapped deployments reach internal hosts.
 *
 * Checking a name's addresses before the call is not enough on its own: DNS may answer differently when the
 * connection is made (DNS rebinding), and host names built from other values (regions, resource names) never
 * pass through this check. So every upstream connection goes through the guarded dispatcher
 * (guarded-dispatcher.ts), which checks each address at connect time and connects only to checked ones.
 * Redirects are never followed (a 3xx is answered as a 502).
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
  // IPv4-compatible (deprecated; `[::7f00:1]` is how a URL spells `::127.0.0.1`) and the unspecified/loopback.
  ["::", 96],
  ["::1", 128],
  // IPv4-translated (SIIT). IPv4-mapped `::ffff:0:0/96` is judged by its IPv4 address (addressAllowed), and
  // BlockList applies IPv4 rules to mapped addresses anyway (a mapped range here would block every IPv4).
  ["::ffff:0:0:0", 96],
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

/** An empty TRUSTED_CUSTOM_HOSTS: nothing private or reserved is reachable. */
export const NO_TRUSTED_HOSTS: TrustedHosts = { names: new Set(), networks: new BlockList() };

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

/** Whether a resolved or literal address may be connected to: trusted, or not private/reserved/metadata. */
export function addressAllowed(address: string, trusted: TrustedHosts): boolean {
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

/**
 * Hosts that passed the full check recently, per trust list. A caller usually sends the same custom host on
 * every request; re-parsing and re-resolving it each time costs a URL parse and a DNS lookup. Caching the
 * verdict is safe because the connection itself is checked again at connect time (guardedLookup), so a name
 * that starts resolving to a private address is still refused.
 */
const passed = new WeakMap<TrustedHosts, TtlCache<string, string>>();
const PASSED_TTL_MS = 30_000;

/** The checked custom host as a base URL without trailing slashes (what targets keep); see checkCustomHost. */
export async function checkedCustomHostBase(value: string, trusted: TrustedHosts, param?: string): Promise<string> {
  let cache = passed.get(trusted);
  if (!cache) {
    cache = new TtlCache({
      ttlMs: PASSED_TTL_MS,
      maxEntries: 256,
      maxBytes: 1024 * 1024,
      sizeOf: (host, base) => 96 + (host.length + base.length) * 2,
    });
    passed.set(trusted, cache);
  }
  const hit = cache.get(value);
  if (hit !== undefined) return hit;
  const base = (await checkCustomHost(value, trusted, param)).href.replace(/\/+$/, "");
  cache.set(value, base);
  return base;
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

/** Thrown by the guarded lookup: the name resolved, at connect time, to a forbidden address. */
export class CustomHostBlockedError extends Error {
  readonly code = "ERR_CUSTOM_HOST_BLOCKED";
  constructor(host: string, address?: string) {
    super(
      address === host
        ? `address ${host} is private, reserved or a metadata endpoint`
        : address
          ? `${host} resolved to ${address}, a private or reserved address`
          : `host ${host} is internal`,
    );
    this.name = "CustomHostBlockedError";
  }
}

type LookupOptions = { family?: number | string; hints?: number; all?: boolean; verbatim?: boolean; order?: string };
type LookupCallback = (error: Error | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net/tls connect: resolves like dns.lookup, then refuses (with CustomHostBlockedError) unless
 * every address is allowed, so the socket can only reach an address that was checked.
 */
export function guardedLookup(trusted: TrustedHosts) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const { all, ...rest } = options ?? {};
    lookupCallback(hostname, { ...(rest as object), all: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const host = hostname.toLowerCase().replace(/\.$/, "");
      if (!trusted.names.has(host)) {
        if (METADATA_HOSTS.has(host) || host.endsWith(".localhost") || host.endsWith(".internal")) {
          return callback(new CustomHostBlockedError(host), []);
        }
        const bad = addresses.find(({ address }) => !addressAllowed(address, trusted));
        if (bad) return callback(new CustomHostBlockedError(host, bad.address), []);
      }
      if (addresses.length === 0)
        return callback(Object.assign(new Error(`no address for ${host}`), { code: "ENOTFOUND" }), []);
      if (all) callback(null, addresses);
      else callback(null, addresses[0]!.address, addresses[0]!.family);
    });
  };
}

/** Whether a host name or address is listed in TRUSTED_CUSTOM_HOSTS (names, addresses or CIDRs). */
export function isTrustedHost(host: string, trusted: TrustedHosts): boolean {
  const normalised = host
    .toLowerCase()
    .replace(/^\[|\]$/g, "")
    .replace(/\.$/, "");
  if (trusted.names.has(normalised)) return true;
  const family = isIP(normalised);
  return family !== 0 && trusted.networks.check(normalised, family === 4 ? "ipv4" : "ipv6");
}
