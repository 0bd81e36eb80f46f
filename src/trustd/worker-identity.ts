// Who is saying Hello: the caller's TLS client certificate must be an API server certificate
// of this cluster (issued by the OS CA, as trustd issues workers theirs: serverAuth, no role),
// valid now. The TLS handshake has proven the caller holds its key; trustd checks the rest
// itself, because OpenSSL's client-purpose check refuses server-auth-only certificates. The
// registry's node id is derived from the certificate's public key, so a caller can only ever
// describe itself.
import crypto from 'node:crypto';
import { RECOVERY_CN_PREFIX } from '../contract/registry-limits.ts';

const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

export interface WorkerIdentity {
  /** "w-" and 128 bits of the SHA-256 of the public key (SPKI DER), hex. */
  nodeId: string;
  /** The key the caller's rate limit is kept by (the full SHA-256, hex). */
  keyHash: string;
}

/** Thrown with the reason a certificate does not identify a worker. */
export class IdentityError extends Error {
  override name = 'IdentityError';
}

export function workerIdFromKey(key: crypto.KeyObject): WorkerIdentity {
  const hash = crypto.createHash('sha256').update(key.export({ type: 'spki', format: 'der' })).digest('hex');
  return { nodeId: `w-${hash.slice(0, 32)}`, keyHash: hash };
}

/**
 * The identity of the caller whose certificate (DER, as the TLS socket gives it) is `raw`,
 * checked against the OS CA (PEM) at `now`; throws an IdentityError saying what is wrong.
 */
export function workerIdentity(raw: Buffer | undefined, caPem: string, now = new Date()): WorkerIdentity {
  if (!raw || raw.length === 0) throw new IdentityError("no client certificate: present the API certificate trustd issued this node (<secrets>/apid/server.crt)");
  let cert: crypto.X509Certificate;
  let ca: crypto.X509Certificate;
  try {
    cert = new crypto.X509Certificate(raw);
  } catch {
    throw new IdentityError('the client certificate cannot be parsed');
  }
  try {
    ca = new crypto.X509Certificate(caPem);
  } catch {
    throw new IdentityError("trustd's OS CA cannot be parsed");
  }
  if (cert.ca) throw new IdentityError('the client certificate is a CA certificate, not a node certificate');
  if (!cert.checkIssued(ca) || !cert.verify(ca.publicKey)) throw new IdentityError("the client certificate was not issued by this cluster's OS CA");
  const t = now.getTime();
  if (t < Date.parse(cert.validFrom)) throw new IdentityError(`the client certificate is not valid before ${cert.validFrom}`);
  if (t > Date.parse(cert.validTo)) throw new IdentityError(`the client certificate expired at ${cert.validTo}`);
  // trustd issues server-auth certificates only; an operator's client certificate (clientAuth,
  // with roles) is not a node's identity.
  const usages = cert.keyUsage ?? [];
  if (!usages.includes(SERVER_AUTH)) throw new IdentityError("the client certificate is not a node's API certificate (no serverAuth usage)");
  // A control plane's recovery certificate lies unencrypted in META: never a worker's identity.
  const cn = /(?:^|\n)CN=([^\n]*)/.exec(cert.subject)?.[1] ?? '';
  if (cn.startsWith(RECOVERY_CN_PREFIX)) throw new IdentityError("the client certificate is a node's recovery certificate, not the API certificate trustd issued");
  return workerIdFromKey(cert.publicKey);
}
