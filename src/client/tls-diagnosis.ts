// Why the node's certificate was not accepted, told so that the user knows what to do. Node's
// TLS only says "self-signed certificate in certificate chain" (or "unable to verify ..."), both
// for a node in maintenance mode (a throwaway self-signed CA: the user should pass --insecure)
// and for a node of another cluster (the client config holds another CA). After such a
// failure the client opens one more TLS connection that accepts any certificate, reads the
// node's, and compares it with the CA it trusts; nothing is sent on it.
import { X509Certificate } from 'node:crypto';
import tls from 'node:tls';
import { MAINTENANCE_CA_COMMON_NAME } from '../contract/maintenance.ts';
import type { Endpoint } from './endpoint.ts';

/** Messages of Node's certificate verification failures (the client refused the server). */
const VERIFY_FAILURE = /self[- ]signed certificate|unable to verify the first certificate|unable to get (local )?issuer certificate|certificate signature failure|unable to get issuer/i;

export function isServerVerifyFailure(details: string): boolean {
  return VERIFY_FAILURE.test(details);
}

/** The chain the server sends, leaf first (Node's peer certificate objects, issuerCertificate links). */
function chainOf(peer: tls.DetailedPeerCertificate): tls.DetailedPeerCertificate[] {
  const out: tls.DetailedPeerCertificate[] = [];
  for (let c: tls.DetailedPeerCertificate | undefined = peer; c && c.raw && !out.some((o) => o.fingerprint256 === c!.fingerprint256); c = c.issuerCertificate) out.push(c);
  return out;
}

function name(c: { subject?: Record<string, string | string[] | undefined> } | undefined): string {
  const cn = c?.subject?.CN;
  const o = c?.subject?.O;
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  return first(cn) ?? first(o) ?? 'an unnamed CA';
}

/** What the node's certificate says, compared with `caPem`; undefined when it cannot be read. */
export function explainServerCertificate(peer: tls.DetailedPeerCertificate, caPem: string, endpoint: string): string | undefined {
  const chain = chainOf(peer);
  if (chain.length === 0) return undefined;
  const issuerName = peer.issuer ? name({ subject: peer.issuer as unknown as Record<string, string> }) : undefined;
  if (chain.some((c) => name(c) === MAINTENANCE_CA_COMMON_NAME) || issuerName === MAINTENANCE_CA_COMMON_NAME) {
    return `${endpoint} is in maintenance mode (it has no configuration yet, and so no certificate from your cluster's CA): talk to it with --insecure, e.g. \`bronzectl apply-config --insecure -n ${endpoint} -f controlplane.yaml\``;
  }
  let ca: X509Certificate;
  try {
    ca = new X509Certificate(caPem);
  } catch {
    return undefined;
  }
  const leaf = new X509Certificate(peer.raw);
  if (leaf.checkIssued(ca) && leaf.verify(ca.publicKey)) return undefined; // the CA is ours: something else failed
  return (
    `${endpoint}'s certificate is issued by "${issuerName ?? 'an unknown CA'}", not by the CA in your client config ("${name({ subject: parseSubject(ca.subject) })}", ` +
    `fingerprint ${ca.fingerprint256.slice(0, 23)}…): the node belongs to another cluster, or this client config is for another one (check --context, --bronzeconfig and $BRONZECONFIG)`
  );
}

function parseSubject(subject: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of subject.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) out[line.slice(0, eq)] ??= line.slice(eq + 1);
  }
  return out;
}

/** Connects once more, accepting any certificate, and explains the node's; undefined if it cannot tell. */
export function diagnoseServerCertificate(endpoint: Endpoint, caPem: string, timeoutMs = 3000): Promise<string | undefined> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (v: string | undefined) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(v);
    };
    const socket = tls.connect({
      host: endpoint.host,
      port: endpoint.port,
      rejectUnauthorized: false,
      ALPNProtocols: ['h2'],
      // A name, not an address, as SNI (Node refuses an IP there).
      ...(/^[\d.]+$|:/.test(endpoint.host) ? {} : { servername: endpoint.host }),
    });
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.once('secureConnect', () => {
      try {
        done(explainServerCertificate(socket.getPeerCertificate(true), caPem, endpoint.raw));
      } catch {
        done(undefined);
      }
    });
    socket.once('error', () => done(undefined));
  });
}
