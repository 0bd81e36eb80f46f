// apid end to end on loopback: real node processes (machined in host mode supervising apid,
// and trustd on the control plane), real unix sockets, real mTLS with certificates from the
// real PKI. Nodes listen on 127.0.0.10-14 and the worker on 127.0.0.20.
import crypto from 'node:crypto';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { serviceClient } from '../../src/contract/protos.ts';
import { generateSecrets, type SecretsBundle } from '../../src/contract/secrets.ts';
import { newCA } from '../../src/pki/ca.ts';
import { issueClientCert, newCSR, rolesOf, certificateInfo } from '../../src/pki/certs.ts';
import { generateKeyPair } from '../../src/pki/keys.ts';
import { HostNode } from '../lib/nodes.ts';
import { freePort } from '../lib/ports.ts';

type Reply = { messages: Array<{ metadata?: { hostname?: string; error?: string }; version?: { tag: string } }> };
type MachineClient = grpc.Client & {
  Version: (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: Reply) => void) => void;
  Reboot: (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: unknown) => void) => void;
};

const Machine = serviceClient('machine.MachineService');
const Security = serviceClient('securityapi.SecurityService');

function machineClient(endpoint: string, creds: grpc.ChannelCredentials): MachineClient {
  return new Machine(endpoint, creds) as unknown as MachineClient;
}

function version(c: MachineClient, md = new grpc.Metadata()): Promise<Reply> {
  return new Promise((resolve, reject) => c.Version({}, md, { deadline: Date.now() + 20_000 }, (e, r) => (e ? reject(e) : resolve(r!))));
}

function withNodes(key: 'node' | 'nodes', values: string[]): grpc.Metadata {
  const md = new grpc.Metadata();
  for (const v of values) md.add(key, v);
  return md;
}

describe('apid over real mTLS between real node processes', () => {
  let secrets: SecretsBundle;
  let caPem: string;
  const nodes: HostNode[] = [];
  let worker: HostNode;
  let port: number;
  let trustdPort: number;
  let admin: grpc.ChannelCredentials;
  let reader: grpc.ChannelCredentials;

  beforeAll(async () => {
    port = await freePort();
    trustdPort = await freePort();
    secrets = await generateSecrets();
    caPem = secrets.certs.os.crt;
    const cfg = generateConfigs({ clusterName: 'it', endpoint: 'https://127.0.0.10:6443', secrets });
    for (let i = 0; i < 5; i++) {
      nodes.push(
        new HostNode({
          name: `cp${i}`,
          address: `127.0.0.${10 + i}`,
          apiPort: port,
          config: cfg.controlplane,
          services: i === 0 ? ['apid', 'trustd'] : ['apid'],
          ...(i === 0 ? { trustdPort } : {}),
          env: { BRONZE_API_CERT_TTL_MS: '15000', BRONZE_API_CERT_CHECK_MS: '1000' },
        }).start(),
      );
    }
    worker = new HostNode({ name: 'worker', address: '127.0.0.20', apiPort: port, config: cfg.worker, services: ['apid'], env: { BRONZE_TRUSTD_PORT: String(trustdPort) } });
    await Promise.all(nodes.map((n) => n.waitFor(/serving the API on/, 60_000)));
    await nodes[0]!.waitFor(/signing certificates on/, 30_000);
    worker.start();
    await worker.waitFor(/serving the API on/, 60_000);

    const a = await issueClientCert(secrets.certs.os, { commonName: 'admin', roles: ['os:admin'], ttlMs: 3600_000 });
    const r = await issueClientCert(secrets.certs.os, { commonName: 'reader', roles: ['os:reader'], ttlMs: 3600_000 });
    admin = grpc.credentials.createSsl(Buffer.from(caPem), Buffer.from(a.key), Buffer.from(a.crt));
    reader = grpc.credentials.createSsl(Buffer.from(caPem), Buffer.from(r.key), Buffer.from(r.crt));
  }, 120_000);

  afterAll(async () => {
    await Promise.all([...nodes, worker].map((n) => n?.stop()));
  });

  it('answers an admin, stamping nothing for a local call', async () => {
    const r = await version(machineClient(nodes[0]!.endpoint, admin));
    expect(r.messages).toHaveLength(1);
    expect(r.messages[0]!.version!.tag).toMatch(/^v\d/);
  });

  it('refuses a client without a certificate: UNAUTHENTICATED', async () => {
    const c = machineClient(nodes[0]!.endpoint, grpc.credentials.createSsl(Buffer.from(caPem)));
    await expect(version(c)).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED, details: expect.stringMatching(/client certificate/) });
  });

  it('refuses a certificate from another CA: UNAUTHENTICATED', async () => {
    const other = await newCA({ commonName: 'evil', validityDays: 1 });
    const cert = await issueClientCert(other, { commonName: 'mallory', roles: ['os:admin'], ttlMs: 3600_000 });
    const c = machineClient(nodes[0]!.endpoint, grpc.credentials.createSsl(Buffer.from(caPem), Buffer.from(cert.key), Buffer.from(cert.crt)));
    await expect(version(c)).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
  });

  it('refuses Reboot to an os:reader: PERMISSION_DENIED naming the roles', async () => {
    const c = machineClient(nodes[0]!.endpoint, reader);
    const err = await new Promise<grpc.ServiceError>((resolve) => c.Reboot({}, new grpc.Metadata(), {}, (e) => resolve(e!)));
    expect(err.code).toBe(grpc.status.PERMISSION_DENIED);
    expect(err.details).toMatch(/Reboot requires one of os:admin, os:operator; the caller has roles os:reader/);
    // the reader may still read
    expect((await version(c)).messages).toHaveLength(1);
  });

  it('routes `node` to another node and stamps its reply', async () => {
    const r = await version(machineClient(nodes[0]!.endpoint, reader), withNodes('node', [nodes[3]!.o.address]));
    expect(r.messages.map((m) => m.metadata?.hostname)).toEqual([nodes[3]!.o.address]);
  });

  it('streams through the proxy: fan-out stamped per node, and a follow ended by the client', async () => {
    type LogsClient = grpc.Client & { Logs: (req: object, md: grpc.Metadata) => grpc.ClientReadableStream<{ metadata?: { hostname?: string }; bytes: Buffer }> };
    const c = new Machine(nodes[0]!.endpoint, admin) as unknown as LogsClient;
    const targets = [nodes[1]!.o.address, nodes[2]!.o.address];
    const got: Array<{ metadata?: { hostname?: string }; bytes: Buffer }> = [];
    await new Promise<void>((resolve, reject) => {
      const s = c.Logs({ namespace: 'system', id: 'machined', tail_lines: 3 }, withNodes('nodes', targets));
      s.on('data', (m) => got.push(m));
      s.on('error', reject);
      s.on('end', () => resolve());
    });
    for (const t of targets) expect(got.filter((m) => m.metadata?.hostname === t).length).toBe(3);
    // follow: the first lines arrive, then the client goes away and the call ends as CANCELLED
    const follow = c.Logs({ namespace: 'system', id: 'machined', tail_lines: 1, follow: true }, withNodes('node', [nodes[3]!.o.address]));
    const first = await new Promise<{ metadata?: { hostname?: string } }>((resolve) => follow.once('data', resolve));
    expect(first.metadata?.hostname).toBe(nodes[3]!.o.address);
    const ended = new Promise<grpc.ServiceError>((resolve) => follow.on('error', resolve));
    follow.cancel();
    expect((await ended).code).toBe(grpc.status.CANCELLED);
  });

  it('fans out to 5 nodes with one stopped: 4 answers and 1 error entry', async () => {
    await nodes[4]!.stop();
    const targets = nodes.map((n) => n.o.address);
    const r = await version(machineClient(nodes[0]!.endpoint, admin), withNodes('nodes', targets));
    expect(r.messages).toHaveLength(5);
    const ok = r.messages.filter((m) => !m.metadata?.error);
    const failed = r.messages.filter((m) => m.metadata?.error);
    expect(ok.map((m) => m.metadata!.hostname).sort()).toEqual(targets.slice(0, 4).sort());
    expect(ok.every((m) => m.version?.tag)).toBe(true);
    expect(failed).toHaveLength(1);
    expect(failed[0]!.metadata!.hostname).toBe(targets[4]);
    expect(failed[0]!.metadata!.error).toMatch(/connect|refused|unavailable|No connection/i);
  }, 60_000);

  it('gave the worker a server-auth certificate from trustd, without roles', async () => {
    const peer = await new Promise<tls.PeerCertificate>((resolve, reject) => {
      const s = tls.connect({ host: worker.o.address, port, ca: caPem, servername: undefined, checkServerIdentity: () => undefined }, () => {
        resolve(s.getPeerCertificate());
        s.end();
      });
      s.on('error', reject);
    });
    expect(peer.subject.O).toBeUndefined();
    expect(peer.issuer.CN).toBe('bronze');
    expect(String(peer.subjectaltname)).toContain('IP Address:127.0.0.20');
    const r = await version(machineClient(worker.endpoint, admin));
    expect(r.messages).toHaveLength(1);
  });

  it('trustd refuses a wrong token and never grants a role asked for in the CSR', async () => {
    const c = new Security(`127.0.0.10:${trustdPort}`, grpc.credentials.createSsl(Buffer.from(caPem))) as unknown as grpc.Client & {
      Certificate: (req: object, md: grpc.Metadata, cb: (e: grpc.ServiceError | null, r?: { crt: Buffer }) => void) => void;
    };
    const csr = await newCSR(await generateKeyPair(), { commonName: 'sneaky', ipAddresses: ['127.0.0.99'], organization: ['os:admin'] });
    const call = (token: string) =>
      new Promise<{ crt: Buffer }>((resolve, reject) => {
        const md = new grpc.Metadata();
        md.set('token', token);
        c.Certificate({ csr: Buffer.from(csr) }, md, (e, r) => (e ? reject(e) : resolve(r!)));
      });
    await expect(call('aaaaaa.bbbbbbbbbbbbbbbb')).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });
    const res = await call(secrets.trustdinfo.token);
    const pem = Buffer.from(res.crt).toString();
    expect(rolesOf(pem)).toEqual([]);
    expect(certificateInfo(pem).extKeyUsage ?? []).not.toContain('clientAuth');
  });

  it('renews its serving certificate before expiry without restarting apid', async () => {
    const serial = () =>
      new Promise<string>((resolve, reject) => {
        // Only the serial matters here; validity is checked by the real call at the end.
        const s = tls.connect({ host: nodes[1]!.o.address, port, rejectUnauthorized: false }, () => {
          resolve(s.getPeerCertificate().serialNumber);
          s.end();
        });
        s.on('error', reject);
      });
    const pidLine = await nodes[1]!.waitFor(/service apid: Running: Process started \(pid \d+\)/);
    const first = await serial();
    const deadline = Date.now() + 30_000;
    let now = first;
    while (now === first && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 500));
      now = await serial();
    }
    expect(now).not.toBe(first);
    expect(nodes[1]!.output.filter((l) => /service apid: Running: Process started/.test(l))).toEqual([pidLine]);
    expect(nodes[1]!.output.some((l) => /certificates renewed/.test(l))).toBe(true);
    // and the new certificate serves real calls
    expect((await version(machineClient(nodes[1]!.endpoint, admin))).messages).toHaveLength(1);
  }, 60_000);

  it('uses TLS 1.3 only', async () => {
    const err = await new Promise<Error | undefined>((resolve) => {
      const s = tls.connect({ host: nodes[0]!.o.address, port, ca: caPem, maxVersion: 'TLSv1.2', checkServerIdentity: () => undefined }, () => {
        s.end();
        resolve(undefined);
      });
      s.on('error', resolve);
    });
    expect(err).toBeDefined();
    void crypto;
  });
});
