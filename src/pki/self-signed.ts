// The throwaway identity apid serves with in maintenance mode: one self-signed Ed25519 server
// certificate (clients connect with --insecure, as to Talos in maintenance mode), made with
// Node's crypto and the small DER writer in der.ts instead of @peculiar/x509. Measured under
// QEMU/TCG (2 vCPUs, machined's boot): the library's CA plus server certificate took 1.26 s of
// the 1.42 s config phase, on the path to the API answering; this takes a few milliseconds.
import crypto from 'node:crypto';
import { ipToBytes, ipVersion } from '../lib/ip.ts';
import { bits, bool, explicit, implicit, octets, oid, seq, set, time, uint, utf8 } from './der.ts';
import { NOT_BEFORE_SKEW_MS } from './validity.ts';

const ED25519 = '1.3.101.112';
const OID = {
  commonName: '2.5.4.3',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  extKeyUsage: '2.5.29.37',
  subjectAltName: '2.5.29.17',
  serverAuth: '1.3.6.1.5.5.7.3.1',
} as const;

export interface SelfSignedOptions {
  commonName: string;
  dnsNames?: string[];
  ipAddresses?: string[];
  ttlMs: number;
  now?: Date;
}

const extension = (id: string, critical: boolean, value: Buffer) => seq(oid(id), ...(critical ? [bool(true)] : []), octets(value));

/** A self-signed server certificate (serverAuth, not a CA) and its new Ed25519 key, as PEM. */
export function selfSignedServerCert(o: SelfSignedOptions): { crt: string; key: string } {
  if (!(o.ttlMs > 0)) throw new Error('ttlMs must be positive');
  const names: Buffer[] = [];
  for (const d of o.dnsNames ?? []) {
    if (!d || /\s/.test(d) || !/^[\x21-\x7e]+$/.test(d)) throw new Error(`invalid DNS name ${JSON.stringify(d)}`);
    names.push(implicit(2, Buffer.from(d, 'ascii')));
  }
  for (const ip of o.ipAddresses ?? []) {
    if (ipVersion(ip) === 0) throw new Error(`invalid IP address ${JSON.stringify(ip)}`);
    names.push(implicit(7, ipToBytes(ip)));
  }
  const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519');
  const t = (o.now ?? new Date()).getTime();
  const name = seq(...(o.commonName ? [set(seq(oid(OID.commonName), utf8(o.commonName)))] : []));
  const algorithm = seq(oid(ED25519));
  const serial = crypto.randomBytes(16);
  // Positive (RFC 5280) and a full 16 bytes: a zero first byte would make DER drop it.
  serial[0] = (serial[0]! & 0x7f) | 0x40;
  const extensions = [
    extension(OID.basicConstraints, true, seq()),
    extension(OID.keyUsage, true, bits(Buffer.from([0x80]), 7)), // digitalSignature
    extension(OID.extKeyUsage, false, seq(oid(OID.serverAuth))),
    ...(names.length > 0 ? [extension(OID.subjectAltName, false, seq(...names))] : []),
  ];
  const tbs = seq(
    explicit(0, uint(Buffer.from([2]))), // v3
    uint(serial),
    algorithm,
    name,
    seq(time(new Date(t - NOT_BEFORE_SKEW_MS)), time(new Date(t + o.ttlMs))),
    name,
    publicKey.export({ type: 'spki', format: 'der' }),
    explicit(3, seq(...extensions)),
  );
  const der = seq(tbs, algorithm, bits(crypto.sign(null, tbs, privateKey)));
  const b64 = der.toString('base64').replace(/.{1,64}/g, '$&\n');
  return { crt: `-----BEGIN CERTIFICATE-----\n${b64}-----END CERTIFICATE-----\n`, key: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}
