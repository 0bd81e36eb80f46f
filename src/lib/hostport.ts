// Host and port of an endpoint as users write them (bronzectl -n, apid's listen address, a
// node name in the routing metadata).

/** Splits "host", "host:port", "[v6]:port" and bare IPv6 into host and optional port. */
export function splitHostPort(target: string): { host: string; port?: number } {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(target);
  if (v6) return { host: v6[1]!, port: v6[2] ? Number(v6[2]) : undefined };
  const parts = target.split(':');
  if (parts.length === 2 && /^\d+$/.test(parts[1]!)) return { host: parts[0]!, port: Number(parts[1]) };
  return { host: target };
}
