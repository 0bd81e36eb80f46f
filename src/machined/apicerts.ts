// The node's API certificates. Control-plane nodes issue apid's serving certificate (and
// apid's os:impersonator client certificate for relaying to other nodes) from the OS CA in
// their configuration, and give trustd the CA and the join token. Workers make a key and a
// CSR and have trustd on the control plane sign it, with the join token. Certificates are
// re-issued when two thirds of their lifetime have passed or the node's addresses change,
// and written atomically where apid and trustd pick them up without restarting.
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { serviceClient } from '../contract/protos.ts';
import { writeFileAtomic } from '../lib/atomic.ts';
import { ipVersion } from '../lib/ip.ts';
import type { Logger } from '../lib/log.ts';
import type { NodeIdentity } from './config/identity.ts';
import { PeerCredentials } from '../lib/peer-credentials.ts';

export const IMPERSONATOR_ROLE = 'os:impersonator';

export interface ApiCertificatesOptions {
  secretsDir: string;
  ttlMs?: number;
  trustdPort?: number;
  /** The node's addresses (default: every interface address). */
  addresses?: () => string[];
  hostname?: () => string;
  /** How often to check addresses and expiry. */
  checkEveryMs?: number;
  /** Called with apid's serving certificate each time one is issued (META's recovery identity follows it). */
  onIssued?: (issued: { names: { ips: string[]; dns: string[] }; ca: string; crt: string; key: string }) => void;
}

export function nodeAddresses(): string[] {
  const out: string[] = [];
  for (const addrs of Object.values(os.networkInterfaces())) for (const a of addrs ?? []) if (!a.address.startsWith('fe80')) out.push(a.address);
  return out;
}

/** Names the serving certificate must carry: the node's addresses, names, loopback, certSANs. */
export function certificateNames(id: NodeIdentity, addresses: string[], hostname: string): { ips: string[]; dns: string[] } {
  const all = new Set([...addresses, '127.0.0.1', '::1', 'localhost', hostname, ...id.certSANs]);
  const ips = [...all].filter((n) => ipVersion(n)).sort();
  const dns = [...all].filter((n) => n && !ipVersion(n)).sort();
  return { ips, dns };
}

export class ApiCertificates {
  private timer: NodeJS.Timeout | undefined;
  private issuedAt = 0;
  private namesKey = '';
  private running: Promise<void> | undefined;

  constructor(
    private readonly id: NodeIdentity,
    private readonly log: Logger,
    private readonly o: ApiCertificatesOptions,
  ) {}

  private get ttl(): number {
    return this.o.ttlMs ?? 24 * 3600 * 1000;
  }

  start(): Promise<void> {
    const first = this.check();
    this.timer = setInterval(() => void this.check(), this.o.checkEveryMs ?? 30_000);
    this.timer.unref();
    return first;
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Issues again when due (2/3 of the lifetime) or when the node's names changed. */
  check(): Promise<void> {
    if (this.running) return this.running;
    const names = certificateNames(this.id, (this.o.addresses ?? nodeAddresses)(), (this.o.hostname ?? os.hostname)());
    const key = JSON.stringify(names);
    const due = Date.now() - this.issuedAt > (this.ttl * 2) / 3;
    if (!due && key === this.namesKey) return Promise.resolve();
    this.running = this.issue(names)
      .then(() => {
        this.issuedAt = Date.now();
        this.namesKey = key;
      })
      .catch((err: Error) => {
        this.log.warn(`API certificates: ${err.message}; retrying in 3 s`);
        setTimeout(() => void this.check(), 3000).unref();
      })
      .finally(() => (this.running = undefined));
    return this.running;
  }

  private async issue(names: { ips: string[]; dns: string[] }): Promise<void> {
    const dir = path.join(this.o.secretsDir, 'apid');
    const commonName = (this.o.hostname ?? os.hostname)();
    // The X.509 library loads when a certificate is first issued, not with machined: under
    // emulation its loading alone is a second of machined's start.
    const { issueClientCert, issueServerCert, newCSR } = await import('../pki/certs.ts');
    const { generateKeyPair, privateKeyToPem } = await import('../pki/keys.ts');
    if (this.id.type === 'controlplane') {
      const ca = { crt: this.id.ca.crt, key: this.id.ca.key! };
      const server = await issueServerCert(ca, { commonName, dnsNames: names.dns, ipAddresses: names.ips, ttlMs: this.ttl });
      const client = await issueClientCert(ca, { commonName: `apid@${commonName}`, roles: [IMPERSONATOR_ROLE], ttlMs: this.ttl });
      // trustd first: it signs with the CA and serves with apid's certificate.
      const tdir = path.join(this.o.secretsDir, 'trustd');
      await writeFileAtomic(path.join(tdir, 'ca.crt'), ca.crt);
      await writeFileAtomic(path.join(tdir, 'ca.key'), ca.key);
      await writeFileAtomic(path.join(tdir, 'token'), this.id.token);
      await this.writeApid(dir, ca.crt, server.crt, server.key, client);
      this.o.onIssued?.({ names, ca: ca.crt, crt: server.crt, key: server.key });
    } else {
      const keys = await generateKeyPair();
      const csr = await newCSR(keys, { commonName, dnsNames: names.dns, ipAddresses: names.ips });
      const { ca, crt } = await this.askTrustd(csr);
      const key = await privateKeyToPem(keys.privateKey);
      await this.writeApid(dir, ca, crt, key);
      this.o.onIssued?.({ names, ca, crt, key });
    }
    this.log.info(`API certificates issued for ${[...names.ips, ...names.dns].join(', ')}`);
  }

  private async writeApid(dir: string, ca: string, crt: string, key: string, client?: { crt: string; key: string }): Promise<void> {
    await writeFileAtomic(path.join(dir, 'ca.crt'), ca);
    if (client) {
      await writeFileAtomic(path.join(dir, 'client.key'), client.key);
      await writeFileAtomic(path.join(dir, 'client.crt'), client.crt);
    }
    // Key before certificate: a reader that sees the new certificate also sees its key.
    await writeFileAtomic(path.join(dir, 'server.key'), key);
    await writeFileAtomic(path.join(dir, 'server.crt'), crt);
  }

  private askTrustd(csr: string): Promise<{ ca: string; crt: string }> {
    const host = this.id.controlPlaneHost!;
    const target = `${net.isIPv6(host) ? `[${host}]` : host}:${this.o.trustdPort ?? 50001}`;
    const Security = serviceClient('securityapi.SecurityService');
    // The worker trusts the OS CA from its configuration to verify trustd.
    const client = new Security(target, new PeerCredentials(Buffer.from(this.id.ca.crt))) as unknown as grpc.Client & {
      Certificate: (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: { ca: Buffer; crt: Buffer }) => void) => void;
    };
    const md = new grpc.Metadata();
    md.set('token', this.id.token);
    return new Promise((resolve, reject) => {
      client.Certificate({ csr: Buffer.from(csr) }, md, { deadline: Date.now() + 15_000 }, (err, res) => {
        client.close();
        if (err) return reject(new Error(`trustd at ${target}: ${err.details || err.message}`));
        resolve({ ca: Buffer.from(res!.ca).toString('utf8'), crt: Buffer.from(res!.crt).toString('utf8') });
      });
    });
  }
}
