// What a `node` / `nodes` routing metadata value may be: the name of a node (a hostname, an IPv4
// address, an IPv6 address with or without brackets), never an address with a port. apid always
// dials a named node on the API port, as Talos's apid does (it refuses a target that carries a
// port): a port in the metadata would let any caller make a node dial any port.
//
// Shared by apid (which refuses such a value with INVALID_ARGUMENT before any connection) and by
// the client library and bronzectl (which refuse it before sending).
import { ipVersion } from './ip.ts';

/** A metadata value that does not name a node; the message names the value. */
export class NodeNameError extends Error {
  override name = 'NodeNameError';
}

/** One DNS label: letters, digits, '-' and '_' (as hostnames in the wild), 1-63 characters. */
const LABEL = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;

function isHostname(s: string): boolean {
  const name = s.endsWith('.') ? s.slice(0, -1) : s;
  return name.length > 0 && name.length <= 253 && name.split('.').every((l) => LABEL.test(l));
}

/** `host:port` or `[v6]:port` with a host that could name a node: the value carries a port. */
function carriesPort(value: string): boolean {
  const v6 = /^\[([^\]]*)\]:(\d*)$/.exec(value);
  if (v6) return ipVersion(v6[1]!) === 6;
  const m = /^([^:]*):(\d*)$/.exec(value);
  return m !== null && (ipVersion(m[1]!) === 4 || isHostname(m[1]!));
}

/**
 * The host a node metadata value names: the value itself, or the IPv6 address inside its
 * brackets. Throws NodeNameError for a value with a port, or one that is no hostname or IP.
 */
export function nodeHost(value: string): string {
  if (value === '') throw new NodeNameError('node metadata names a node, but the value is empty');
  if (ipVersion(value)) return value;
  const bracketed = /^\[([^\]]+)\]$/.exec(value);
  if (bracketed && ipVersion(bracketed[1]!) === 6) return bracketed[1]!;
  if (carriesPort(value)) throw new NodeNameError(`node metadata names a node, not an address with a port: ${value}`);
  if (isHostname(value)) return value;
  throw new NodeNameError(`node metadata names a node (a hostname or an IP address), not ${JSON.stringify(value)}`);
}

/** The address a node is dialled on: its host (IPv6 in brackets) and the API port. */
export function nodeAddress(host: string, port: number): string {
  return `${ipVersion(host) === 6 ? `[${host}]` : host}:${port}`;
}
