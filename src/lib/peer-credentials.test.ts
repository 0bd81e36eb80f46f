// apid's TLS towards other nodes: the ServerName (SNI) goes out for names only, never for an
// address (RFC 6066; Node's DEP0123), and the peer is still verified against the CA and its
// IP or DNS SANs.
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceClient, serviceDefinition } from '../contract/protos.ts';
import { newCA, type CertAndKey } from '../pki/ca.ts';
import { issueClientCert, issueServerCert } from '../pki/certs.ts';
import { PeerCredentials, peerTlsOptions } from './peer-credentials.ts';

type HealthClient = grpc.Client & { Check: (req: object, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: { status: string }) => void) => void };
const Health = serviceClient('grpc.health.v1.Health');

function check(target: string, creds: grpc.ChannelCredentials): Promise<string> {
  const c = new Health(target, creds) as unknown as HealthClient;
  return new Promise<string>((resolve, reject) =>
    c.Check({ service: '' }, { deadline: Date.now() + 5000 }, (e, r) => {
      c.close();
      if (e) reject(e);
      else resolve(r!.status);
    }),
  );
}

describe('PeerCredentials', () => {
  let ca: CertAndKey;
  let client: CertAndKey;
  let server: grpc.Server;
  let port: number;
  let sniServer: tls.Server;
  let sniPort: number;
  const sni: Array<string | false | null> = [];
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.message);

  beforeAll(async () => {
    process.on('warning', onWarning);
    ca = await newCA({ commonName: 'os', validityDays: 1 });
    const srv = await issueServerCert(ca, { commonName: 'node', dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], ttlMs: 3600_000 });
    client = await issueClientCert(ca, { commonName: 'apid', roles: ['os:impersonator'], ttlMs: 3600_000 });
    server = new grpc.Server();
    server.addService(serviceDefinition('grpc.health.v1.Health'), { Check: (_c: unknown, cb: grpc.sendUnaryData<object>) => cb(null, { status: 'SERVING' }) });
    const creds = grpc.ServerCredentials.createSsl(Buffer.from(ca.crt), [{ private_key: Buffer.from(srv.key), cert_chain: Buffer.from(srv.crt) }], true);
    port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', creds, (e, p) => (e ? reject(e) : resolve(p))));
    // A bare TLS server that only records the ServerName each client sent.
    sniServer = tls.createServer({ key: srv.key, cert: srv.crt, ALPNProtocols: ['h2'] }, (s) => {
      sni.push(s.servername);
      s.destroy();
    });
    sniPort = await new Promise<number>((resolve) => sniServer.listen(0, '127.0.0.1', () => resolve((sniServer.address() as { port: number }).port)));
  });

  afterAll(() => {
    process.off('warning', onWarning);
    server.forceShutdown();
    sniServer.close();
  });

  const creds = () => new PeerCredentials(Buffer.from(ca.crt), Buffer.from(client.key), Buffer.from(client.crt));

  it('sets the ServerName for names only', () => {
    expect(peerTlsOptions('10.5.0.2')).not.toHaveProperty('servername');
    expect(peerTlsOptions('fd00::2')).not.toHaveProperty('servername');
    expect(peerTlsOptions('node1.example')).toMatchObject({ servername: 'node1.example', host: 'node1.example' });
  });

  it('sends no SNI to an address, and the name to a name', async () => {
    await expect(check(`127.0.0.1:${sniPort}`, creds())).rejects.toBeDefined();
    await expect(check(`localhost:${sniPort}`, creds())).rejects.toBeDefined();
    expect(sni).toEqual([false, 'localhost']);
    expect(warnings.filter((w) => /ServerName to an IP address/.test(w))).toEqual([]);
  });

  it('verifies the peer by its IP SAN or DNS SAN, and refuses another CA', async () => {
    expect(await check(`127.0.0.1:${port}`, creds())).toBe('SERVING');
    expect(await check(`localhost:${port}`, creds())).toBe('SERVING');
    const other = await newCA({ commonName: 'other', validityDays: 1 });
    const foreign = new PeerCredentials(Buffer.from(other.crt), Buffer.from(client.key), Buffer.from(client.crt));
    await expect(check(`127.0.0.1:${port}`, foreign)).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
    expect(warnings.filter((w) => /ServerName to an IP address/.test(w))).toEqual([]);
  });
});
