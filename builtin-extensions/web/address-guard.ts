/**
 * Which addresses `webfetch` may connect to. A page the model asks for must not reach the machine itself, the local
 * network or a cloud metadata service (169.254.169.254), so loopback, private, link-local, carrier-grade NAT,
 * multicast and reserved ranges are refused, in IPv4 and IPv6, including IPv4 addresses wrapped in IPv6 (mapped,
 * compatible, NAT64 and 6to4 forms).
 *
 * The check sits in the DNS lookup of the connection itself (`guardedLookup`), so the address checked is the address
 * connected to: a name that resolves to a public address for a check and to 127.0.0.1 for the connection (DNS
 * rebinding) cannot slip through. Every address a name resolves to is checked, and one refused address refuses the
 * name.
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { BlockList, isIP } from "node:net";

/** The IPv4 ranges refused, with what each is. */
const V4_RANGES: readonly [string, number, string][] = [
  ["0.0.0.0", 8, "an unspecified (this network) address"],
  ["10.0.0.0", 8, "a private address"],
  ["100.64.0.0", 10, "a carrier-grade NAT address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.0.0", 16, "a link-local address"],
  ["172.16.0.0", 12, "a private address"],
  ["192.0.0.0", 24, "a reserved address"],
  ["192.0.2.0", 24, "a documentation address"],
  ["192.168.0.0", 16, "a private address"],
  ["198.18.0.0", 15, "a benchmarking address"],
  ["198.51.100.0", 24, "a documentation address"],
  ["203.0.113.0", 24, "a documentation address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved address"],
];

const V6_RANGES: readonly [string, number, string][] = [
  ["::", 128, "an unspecified address"],
  ["::1", 128, "a loopback address"],
  ["100::", 64, "a discard address"],
  ["2001:db8::", 32, "a documentation address"],
  ["fc00::", 7, "a private (unique local) address"],
  ["fe80::", 10, "a link-local address"],
  ["fec0::", 10, "a site-local address"],
  ["ff00::", 8, "a multicast address"],
];

/** Each IPv4 range as it appears inside IPv6 forms that carry an IPv4 address (BlockList matches mapped ones). */
function embedded(address: string, bits: number): [string, number][] {
  const [a, b, c, d] = address.split(".").map(Number) as [number, number, number, number];
  const hi = ((a << 8) | b).toString(16);
  const lo = ((c << 8) | d).toString(16);
  return [
    [`::${hi}:${lo}`, 96 + bits], // IPv4-compatible (deprecated, still routed by some stacks)
    [`64:ff9b::${hi}:${lo}`, 96 + bits], // NAT64
    [`2002:${hi}:${lo}::`, 16 + bits], // 6to4
  ];
}

// IPv6 ranges first: `::1` is loopback, not the IPv4-compatible form of 0.0.0.1.
const refused: { list: BlockList; what: string }[] = [
  ...V6_RANGES.map(([address, bits, what]) => {
    const list = new BlockList();
    list.addSubnet(address, bits, "ipv6");
    return { list, what };
  }),
  ...V4_RANGES.map(([address, bits, what]) => {
    const list = new BlockList();
    list.addSubnet(address, bits, "ipv4");
    for (const [v6, v6bits] of embedded(address, bits)) list.addSubnet(v6, v6bits, "ipv6");
    return { list, what };
  }),
];

/** What kind of refused address `address` is (`"a loopback address"`), or undefined for a public one. */
export function refusedAddressKind(address: string): string | undefined {
  const family = isIP(address);
  if (family === 0) return "not an IP address";
  const type = family === 4 ? "ipv4" : "ipv6";
  return refused.find((r) => r.list.check(address, type))?.what;
}

/** A URL's host as an IP address when it is one (`[::1]` → `::1`), else undefined. */
export function literalAddress(hostname: string): string | undefined {
  const bare = hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
  return isIP(bare) ? bare : undefined;
}

/** Thrown when a host resolves to a refused address; `webfetch` turns it into its message. */
export class RefusedAddressError extends Error {
  constructor(
    readonly host: string,
    readonly address: string,
    readonly kind: string,
  ) {
    super(`${host === address ? address : `${host} resolves to ${address}, which`} is ${kind}`);
    this.name = "RefusedAddressError";
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * A `lookup` for `http.request` that resolves every address of the name and refuses the connection when any of
 * them is refused. Node calls it with `{all: true}` when it tries several addresses (autoSelectFamily).
 */
export function guardedLookup(
  hostname: string,
  options: { all?: boolean; family?: number | string },
  callback: LookupCallback,
): void {
  dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const list = addresses as LookupAddress[];
    for (const entry of list) {
      const kind = refusedAddressKind(entry.address);
      if (kind) return callback(new RefusedAddressError(hostname, entry.address, kind), []);
    }
    const wanted = options.family === 4 || options.family === 6 ? options.family : 0;
    const usable = wanted ? list.filter((a) => a.family === wanted) : list;
    if (usable.length === 0) {
      const none: NodeJS.ErrnoException = new Error(`${hostname} has no IPv${wanted} address`);
      none.code = "ENOTFOUND";
      return callback(none, []);
    }
    if (options.all) return callback(null, usable);
    const [first] = usable as [LookupAddress];
    return callback(null, first.address, first.family);
  });
}
