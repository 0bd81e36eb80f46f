import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newCA, type CertAndKey } from '../pki/ca.ts';
import { issueServerCert } from '../pki/certs.ts';
import { ApidCertificateSource } from '../daemon/certs.ts';
import { PeerCredentials } from '../lib/peer-credentials.ts';
import { serviceClient, serviceDefinition } from '../contract/protos.ts';
import { listenPeerTls, splitListen, type PeerTlsListener } from './peer-tls.ts';
import { peerAddress } from './main.ts';

describe('trustd listen addresses and peers', () => {
  it('splits host:port, IPv6 in brackets, an empty host as all', () => {
    expect(splitListen('[::]:50001')).toEqual({ host: '::', port: 50001 });
    expect(splitListen('10.0.0.2:50001')).toEqual({ host: '10.0.0.2', port: 50001 });
    expect(splitListen(':50001')).toEqual({ host: '::', port: 50001 });
    expect(() => splitListen('50001')).toThrow(/listen address "50001" is not host:port/);
  });

  it("takes the address of grpc-js's peer text", () => {
    expect(peerAddress('10.0.0.2:4321')).toBe('10.0.0.2');
    expect(peerAddress('::ffff:127.0.0.1:4321')).toBe('::ffff:127.0.0.1');
    expect(peerAddress('unknown')).toBe('unknown');
  });
});

describe("trustd's TLS listener: a handler sees the certificate its caller presented (server-auth only) or none", () => {
  let dir: string;
  let ca: CertAndKey;
  let server: grpc.Server;
  let listener: PeerTlsListener;
  let certs: ApidCertificateSource;
  const log = { info() {}, warn() {}, error() {} } as never;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'peer-tls-'));
    ca = await newCA({ commonName: 'os', validityDays: 1 });
    const srv = await issueServerCert(ca, { commonName: 'trustd', ipAddresses: ['127.0.0.1'], ttlMs: 3600_000 });
    fs.writeFileSync(path.join(dir, 'ca.crt'), ca.crt);
    fs.writeFileSync(path.join(dir, 'server.key'), srv.key!);
    fs.writeFileSync(path.join(dir, 'server.crt'), srv.crt);
    certs = new ApidCertificateSource(dir, log);
    certs.start();
    server = new grpc.Server();
    server.addService(serviceDefinition('bronze.cluster.Registry'), {
      Hello: (call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        const raw = listener.peerCertificate(call.getPeer());
        cb(null, { members: [{ hostname: raw ? `cert-${raw.length}` : 'none' }] });
      },
    });
    listener = await listenPeerTls(server, certs, '127.0.0.1:0', log);
  });

  afterAll(async () => {
    await listener?.close();
    server?.forceShutdown();
    certs?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const hello = async (creds: grpc.ChannelCredentials) => {
    const Registry = serviceClient('bronze.cluster.Registry');
    const c = new Registry(`127.0.0.1:${listener.port}`, creds) as any;
    try {
      return await new Promise<any>((resolve, reject) => c.Hello({}, (e: Error | null, r: unknown) => (e ? reject(e) : resolve(r))));
    } finally {
      c.close();
    }
  };

  it('a server-auth certificate (which OpenSSL would not authorize as a client) reaches the handler; no certificate is served too', async () => {
    const worker = await issueServerCert(ca, { commonName: 'w', ipAddresses: ['10.0.0.9'], ttlMs: 3600_000 });
    const withCert = await hello(new PeerCredentials(Buffer.from(ca.crt), Buffer.from(worker.key!), Buffer.from(worker.crt)));
    expect(withCert.members[0].hostname).toMatch(/^cert-\d+$/);
    const without = await hello(new PeerCredentials(Buffer.from(ca.crt)));
    expect(without.members[0].hostname).toBe('none');
  });
});
