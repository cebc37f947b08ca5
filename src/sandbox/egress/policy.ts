/**
 * Which destinations one sandboxed sheep may reach through its egress proxy. Allowed: its model
 * provider's host(s), exactly as pi's model configuration names them, and the user's
 * `sandbox.allowNetwork` entries. A name is checked twice: by its spelling against the list, then by
 * the one address it resolves to, which must not be loopback, link-local, unspecified or a cloud
 * metadata address unless that very address is listed. The proxy connects to the checked address, so
 * a second lookup can never answer differently (DNS rebinding).
 */
import { BlockList, isIP } from "node:net";
import { ShepherdError } from "../../domain/errors.ts";

/** One allowed destination: an exact host or address, or `*.domain` (its subdomains, not itself); port undefined = any port. */
export interface AllowEntry {
  host: string;
  wildcard: boolean;
  port?: number;
}

export interface EgressPolicy {
  readonly entries: readonly AllowEntry[];
}

export type RefusalReason =
  /** The name (or address) is on no list. */
  | "not_allowed"
  /** Allowed by its name, but it resolves to an address of that kind that nobody listed. */
  | "loopback"
  | "link_local"
  | "unspecified"
  | "metadata"
  /** The name resolved to no address (or the lookup failed or timed out). */
  | "unresolved"
  /** The target is no `host:port` this proxy can parse. */
  | "bad_target"
  /** The sheep has as many tunnels open as it may. */
  | "too_many"
  /** The allowed destination did not answer in time, or refused the connection. */
  | "connect_failed";

const MAX_ENTRY = 255;

/** A host as compared: lower case, no trailing dot, an IPv6 address without brackets. */
export function normalHost(host: string): string {
  let h = host.trim().toLowerCase();
  if (h.startsWith("[") && h.endsWith("]")) h = h.slice(1, -1);
  if (h.endsWith(".")) h = h.slice(0, -1);
  return h;
}

/** `host`, `host:port`, `[v6]:port`, `*.domain[:port]` → an entry; anything else throws `[invalid_params]`. */
export function parseAllowEntry(text: string): AllowEntry {
  const bad = () => new ShepherdError("invalid_params", `sandbox.allowNetwork: "${text.slice(0, 80)}" is not host, host:port or *.domain`);
  if (typeof text !== "string" || text.length === 0 || text.length > MAX_ENTRY) throw bad();
  const split = splitHostPort(text.trim());
  if (!split) throw bad();
  const wildcard = split.host.startsWith("*.");
  const host = normalHost(wildcard ? split.host.slice(2) : split.host);
  if (!host || (wildcard && isIP(host) !== 0)) throw bad();
  if (isIP(host) === 0 && !/^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?(\.[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?)*$/.test(host)) throw bad();
  return split.port === undefined ? { host, wildcard } : { host, wildcard, port: split.port };
}

/** `host[:port]` or `[v6][:port]`; a bare IPv6 address (more than one colon) has no port. */
export function splitHostPort(text: string): { host: string; port?: number } | undefined {
  if (text.startsWith("[")) {
    const end = text.indexOf("]");
    if (end < 0) return undefined;
    const host = text.slice(1, end);
    const rest = text.slice(end + 1);
    if (rest === "") return { host };
    if (!rest.startsWith(":")) return undefined;
    const port = parsePort(rest.slice(1));
    return port === undefined ? undefined : { host, port };
  }
  const colons = text.split(":").length - 1;
  if (colons === 0) return { host: text };
  if (colons > 1) return isIP(text) === 6 ? { host: text } : undefined;
  const [host, p] = text.split(":") as [string, string];
  const port = parsePort(p);
  return port === undefined || host === "" ? undefined : { host, port };
}

function parsePort(p: string): number | undefined {
  if (!/^[0-9]{1,5}$/.test(p)) return undefined;
  const n = Number(p);
  return n >= 1 && n <= 65535 ? n : undefined;
}

/** The provider's host and port from its base URL (`https://api.x.com/v1` → api.x.com:443): exact entries, never wildcards. */
export function providerEntry(baseUrl: string): AllowEntry | undefined {
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    return undefined;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return undefined;
  const port = url.port ? Number(url.port) : url.protocol === "https:" ? 443 : 80;
  return { host: normalHost(url.hostname), wildcard: false, port };
}

/** The policy of one sheep: its provider's base URLs and the user's allowNetwork. */
export function egressPolicy(providerBaseUrls: readonly string[], allowNetwork: readonly string[]): EgressPolicy {
  const entries: AllowEntry[] = [];
  for (const u of providerBaseUrls) {
    const e = providerEntry(u);
    if (e) entries.push(e);
  }
  for (const a of allowNetwork) entries.push(parseAllowEntry(a));
  return { entries };
}

function portFits(e: AllowEntry, port: number): boolean {
  return e.port === undefined || e.port === port;
}

/** Whether the host (a name or an address, normalised) is on the list for this port, by its spelling. */
export function listed(policy: EgressPolicy, host: string, port: number): boolean {
  const h = normalHost(host);
  return policy.entries.some((e) => portFits(e, port) && (e.wildcard ? h.endsWith(`.${e.host}`) : sameHost(e.host, h)));
}

/** Two spellings of one host: names by text, addresses by value (`::1` and `0:0:0:0:0:0:0:1`). */
function sameHost(a: string, b: string): boolean {
  if (a === b) return true;
  const fa = isIP(a);
  if (fa === 0 || fa !== isIP(b)) return false;
  const list = new BlockList();
  list.addAddress(a, fa === 6 ? "ipv6" : "ipv4");
  return list.check(b, fa === 6 ? "ipv6" : "ipv4");
}

type AddressKind = "loopback" | "link_local" | "unspecified" | "metadata";

const KINDS: [AddressKind, BlockList][] = (() => {
  const make = (v4: [string, number][], v6: [string, number][]) => {
    const l = new BlockList();
    for (const [a, p] of v4) l.addSubnet(a, p, "ipv4");
    for (const [a, p] of v6) l.addSubnet(a, p, "ipv6");
    return l;
  };
  return [
    // AWS, GCP, Azure, OpenStack (169.254.169.254), AWS's IPv6 one, Alibaba's (100.100.100.200).
    [
      "metadata",
      make(
        [
          ["169.254.169.254", 32],
          ["100.100.100.200", 32],
        ],
        [["fd00:ec2::254", 128]],
      ),
    ],
    ["loopback", make([["127.0.0.0", 8]], [["::1", 128]])],
    ["link_local", make([["169.254.0.0", 16]], [["fe80::", 10]])],
    ["unspecified", make([["0.0.0.0", 8]], [["::", 128]])],
  ];
})();

/** The kind of address a sandboxed sheep never reaches unless it is listed; IPv4-mapped IPv6 counts as its IPv4 address. */
export function riskyKind(address: string): AddressKind | undefined {
  let a = normalHost(address);
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(a);
  if (mapped) a = mapped[1]!;
  const family = isIP(a);
  if (family === 0) return undefined;
  for (const [kind, list] of KINDS) if (list.check(a, family === 6 ? "ipv6" : "ipv4")) return kind;
  return undefined;
}

/** Whether this exact address is an entry of the list (not a name that resolved to it, not a wildcard). */
export function addressListed(policy: EgressPolicy, address: string, port: number): boolean {
  return policy.entries.some((e) => !e.wildcard && portFits(e, port) && isIP(e.host) !== 0 && sameHost(e.host, normalHost(address)));
}

/**
 * The address to connect to among those a name resolved to: the first that is not risky, or a risky
 * one only where that exact address is listed. Undefined with the reason when none may be reached.
 */
export function pickAddress(
  policy: EgressPolicy,
  addresses: readonly string[],
  port: number,
): { address: string; reason?: undefined } | { address?: undefined; reason: RefusalReason } {
  if (addresses.length === 0) return { reason: "unresolved" };
  let firstRefusal: AddressKind | undefined;
  for (const a of addresses) {
    const kind = riskyKind(a);
    if (!kind || addressListed(policy, a, port)) return { address: a };
    firstRefusal ??= kind;
  }
  return { reason: firstRefusal ?? "not_allowed" };
}
