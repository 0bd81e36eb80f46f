// Endpoints as operators write them: "10.5.0.2", "node1.lab", "10.5.0.2:50123", "[fd00::2]:50000" or a
// bare IPv6 address. The port defaults to apid's, 50000.
import { isIP } from 'node:net';

export const DEFAULT_API_PORT = 50000;

export interface Endpoint {
  /** As the user wrote it (what NODE columns and errors show). */
  raw: string;
  /** Host name or IP address, without brackets: what the server certificate must name. */
  host: string;
  port: number;
  /** The gRPC target, `host:port` with an IPv6 host in brackets. */
  address: string;
}

export function parseEndpoint(raw: string, defaultPort = DEFAULT_API_PORT): Endpoint {
  const s = raw.trim();
  if (!s) throw new Error('endpoint: empty');
  let host: string;
  let port: number | undefined;
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (bracketed) {
    host = bracketed[1]!;
    if (isIP(host) !== 6) throw new Error(`endpoint ${JSON.stringify(raw)}: ${JSON.stringify(host)} is not an IPv6 address`);
    if (bracketed[2] !== undefined) port = Number(bracketed[2]);
  } else if (isIP(s) === 6) {
    host = s;
  } else {
    const m = /^([^:/\s]+)(?::(\d+))?$/.exec(s);
    if (!m) throw new Error(`endpoint ${JSON.stringify(raw)}: want host, host:port or [ipv6]:port`);
    host = m[1]!;
    if (m[2] !== undefined) port = Number(m[2]);
  }
  const p = port ?? defaultPort;
  if (!Number.isInteger(p) || p < 1 || p > 65535) throw new Error(`endpoint ${JSON.stringify(raw)}: port ${p} out of range`);
  return { raw: s, host, port: p, address: `${isIP(host) === 6 ? `[${host}]` : host}:${p}` };
}
