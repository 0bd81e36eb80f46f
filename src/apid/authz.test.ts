// apid's per-connection role cache (ConnectionRoles): the client certificate is read once per
// TLS connection, and roles never pass from one connection (one certificate) to another.
// First with stand-in calls (the cache's own rules), then over real mTLS: a fake machined on a
// unix socket, the real ApiProxy served as apid serves it (certificates from
// ApidCertificateSource, client certificates requested, checked per call), and clients holding
// certificates with different roles, interleaved.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { serviceClient, serviceDefinition } from '../contract/protos.ts';
import { silentLogger } from '../lib/log.ts';
import { newCA } from '../pki/ca.ts';
import { issueClientCert, issueServerCert } from '../pki/certs.ts';
import { ConnectionRoles, IMPERSONATOR_ROLE, ROLES_METADATA, sessionOf, type AuthenticatedCall } from './authz.ts';
import { ApidCertificateSource } from '../daemon/certs.ts';
import { ApiProxy } from './proxy.ts';
import { SelfIdentity } from './router.ts';

/** A stand-in for a grpc-js server call: its certificate's Organizations, on `session`. */
function fakeCall(session: object | undefined, orgs: string[] | undefined, md = new grpc.Metadata()) {
  const getAuthContext = vi.fn(() => ({
    transportSecurityType: 'ssl',
    sslPeerCertificate: orgs ? ({ subject: { O: orgs.length === 1 ? orgs[0] : orgs }, raw: Buffer.from('x') } as unknown as tls.PeerCertificate) : undefined,
  }));
  const call = { metadata: md, getAuthContext, ...(session ? { call: { stream: { session } } } : {}) };
  return call as AuthenticatedCall & { getAuthContext: typeof getAuthContext };
}

describe('ConnectionRoles', () => {
  it('reads a connection\'s certificate once, and each connection\'s own', () => {
    const cache = new ConnectionRoles();
    const a = { socket: {} };
    const b = { socket: {} };
    const adminCall = () => fakeCall(a, ['os:admin']);
    const first = adminCall();
    expect(cache.rolesOf(first)).toEqual(['os:admin']);
    const again = adminCall();
    expect(cache.rolesOf(again)).toEqual(['os:admin']);
    expect(first.getAuthContext).toHaveBeenCalledTimes(1);
    expect(again.getAuthContext).not.toHaveBeenCalled();
    // Another connection, another certificate: read, and never given the first one's roles.
    expect(cache.rolesOf(fakeCall(b, ['os:reader']))).toEqual(['os:reader']);
    expect(cache.rolesOf(fakeCall(b, ['os:admin']))).toEqual(['os:reader']); // a connection's certificate cannot change
    expect(cache.rolesOf(fakeCall(a, ['os:reader']))).toEqual(['os:admin']);
    expect(cache.reads).toBe(2);
  });

  it('remembers a connection without a verified certificate as such', () => {
    const cache = new ConnectionRoles();
    const s = { socket: {} };
    expect(cache.rolesOf(fakeCall(s, undefined))).toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    expect(cache.rolesOf(fakeCall(s, ['os:admin']))).toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    expect(cache.rolesOf(fakeCall({ socket: {} }, ['os:admin']))).toEqual(['os:admin']);
  });

  it('takes an impersonator\'s relayed roles from each call\'s metadata, never from the cache', () => {
    const cache = new ConnectionRoles();
    const s = { socket: {} };
    const relayed = (roles: string) => {
      const md = new grpc.Metadata();
      md.set(ROLES_METADATA, roles);
      return fakeCall(s, [IMPERSONATOR_ROLE], md);
    };
    expect(cache.rolesOf(relayed('os:reader'))).toEqual(['os:reader']);
    expect(cache.rolesOf(relayed('os:admin,os:bogus'))).toEqual(['os:admin']);
    expect(cache.rolesOf(fakeCall(s, [IMPERSONATOR_ROLE]))).toEqual([]);
    expect(cache.reads).toBe(1);
  });

  it('caches nothing when the call shows no connection', () => {
    const cache = new ConnectionRoles();
    expect(sessionOf({ call: { stream: {} } })).toBeUndefined();
    expect(sessionOf({ call: { stream: { session: 'x' } } })).toBeUndefined();
    expect(cache.rolesOf(fakeCall(undefined, ['os:admin']))).toEqual(['os:admin']);
    expect(cache.rolesOf(fakeCall(undefined, ['os:reader']))).toEqual(['os:reader']);
    expect(cache.reads).toBe(2);
  });
});

type VersionReply = { messages: Array<{ version?: { tag: string } }> };
type Cb<T> = (e: grpc.ServiceError | null, r?: T) => void;
type MachineClient = grpc.Client & {
  Version: (req: object, md: grpc.Metadata, cb: Cb<VersionReply>) => void;
  Reboot: (req: object, md: grpc.Metadata, cb: Cb<unknown>) => void;
};

describe('apid over mTLS reads each connection\'s roles once and keeps them to it', () => {
  let dir: string;
  let machined: grpc.Server;
  let apid: grpc.Server;
  let proxy: ApiProxy;
  let certs: ApidCertificateSource;
  let endpoint: string;
  let port: number;
  const clients: grpc.Client[] = [];
  const credsFor: Record<string, grpc.ChannelCredentials> = {};

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-apid-authz-'));
    process.env.BRONZE_RUN_DIR = path.join(dir, 'run');
    const socket = path.join(dir, 'run', 'machined', 'machined.sock');
    fs.mkdirSync(path.dirname(socket), { recursive: true });

    // The fake machined answers Version with the roles apid vouched for, as the version tag.
    machined = new grpc.Server();
    machined.addService(serviceDefinition('machine.MachineService'), {
      Version: (call: grpc.ServerUnaryCall<unknown, unknown>, cb: grpc.sendUnaryData<unknown>) =>
        cb(null, { messages: [{ version: { tag: call.metadata.get(ROLES_METADATA).join(',') } }] }),
      Reboot: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => cb(null, { messages: [{}] }),
    });
    await new Promise<void>((resolve, reject) => machined.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));

    const ca = await newCA({ commonName: 'test', validityDays: 1 });
    const server = await issueServerCert(ca, { commonName: 'apid', ipAddresses: ['127.0.0.1'], ttlMs: 3600_000 });
    const certDir = path.join(dir, 'secrets', 'apid');
    fs.mkdirSync(certDir, { recursive: true });
    fs.writeFileSync(path.join(certDir, 'ca.crt'), ca.crt);
    fs.writeFileSync(path.join(certDir, 'server.crt'), server.crt);
    fs.writeFileSync(path.join(certDir, 'server.key'), server.key);
    certs = new ApidCertificateSource(certDir, silentLogger);
    certs.start();
    await certs.ready();

    proxy = new ApiProxy({ self: new SelfIdentity(), peerPort: 1, peerCredentials: () => undefined, log: silentLogger, maintenance: () => false });
    apid = new grpc.Server();
    for (const s of proxy.services()) apid.addService(s.definition, s.implementation);
    port = await new Promise<number>((resolve, reject) =>
      apid.bindAsync('127.0.0.1:0', grpc.experimental.createCertificateProviderServerCredentials(certs, certs, false), (e, p) => (e ? reject(e) : resolve(p))),
    );
    endpoint = `127.0.0.1:${port}`;

    for (const [name, roles] of Object.entries({ admin: ['os:admin'], reader: ['os:reader'], operator: ['os:operator'], relay: [IMPERSONATOR_ROLE] })) {
      const c = await issueClientCert(ca, { commonName: name, roles, ttlMs: 3600_000 });
      credsFor[name] = grpc.credentials.createSsl(Buffer.from(ca.crt), Buffer.from(c.key), Buffer.from(c.crt));
    }
    credsFor.none = grpc.credentials.createSsl(Buffer.from(ca.crt));
    const expired = await issueClientCert(ca, { commonName: 'old', roles: ['os:admin'], ttlMs: 3600_000, now: new Date(Date.now() - 3 * 3600_000) });
    credsFor.expired = grpc.credentials.createSsl(Buffer.from(ca.crt), Buffer.from(expired.key), Buffer.from(expired.crt));
    const future = await issueClientCert(ca, { commonName: 'early', roles: ['os:admin'], ttlMs: 3600_000, now: new Date(Date.now() + 2 * 86_400_000) });
    credsFor.future = grpc.credentials.createSsl(Buffer.from(ca.crt), Buffer.from(future.key), Buffer.from(future.crt));
    const otherCa = await newCA({ commonName: 'another cluster', validityDays: 1 });
    const foreign = await issueClientCert(otherCa, { commonName: 'stranger', roles: ['os:admin'], ttlMs: 3600_000 });
    credsFor.foreign = grpc.credentials.createSsl(Buffer.from(ca.crt), Buffer.from(foreign.key), Buffer.from(foreign.crt));
  });

  afterAll(() => {
    for (const c of clients) c.close();
    proxy?.close();
    certs?.stop();
    for (const s of [apid, machined]) s?.forceShutdown();
    delete process.env.BRONZE_RUN_DIR;
    vi.restoreAllMocks();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  /** A client on its own connection (grpc-js shares connections between equal channels otherwise). */
  function client(name: string): MachineClient {
    const c = new (serviceClient('machine.MachineService'))(endpoint, credsFor[name]!, { 'grpc.use_local_subchannel_pool': 1 }) as unknown as MachineClient;
    clients.push(c);
    return c;
  }
  const version = (c: MachineClient, md = new grpc.Metadata()) =>
    new Promise<string>((resolve, reject) => c.Version({}, md, (e, r) => (e ? reject(e) : resolve(r!.messages[0]!.version!.tag))));
  const reboot = (c: MachineClient) => new Promise<grpc.ServiceError | null>((resolve) => c.Reboot({}, new grpc.Metadata(), (e) => resolve(e)));

  it('gives every call its own connection\'s roles, calls interleaved across certificates', async () => {
    const spy = vi.spyOn(tls.TLSSocket.prototype, 'getPeerCertificate');
    // apid's reads: on its side of a connection (the clients' TLS reads the server's certificate too).
    const reads = () => spy.mock.contexts.filter((s) => (s as tls.TLSSocket).localPort === port).length;
    const admin = client('admin');
    const reader = client('reader');
    const operator = client('operator');
    const none = client('none');
    for (let round = 0; round < 5; round++) {
      const [a, r, o, n] = await Promise.all([
        version(admin),
        version(reader),
        version(operator),
        version(none).then(
          () => undefined,
          (e: grpc.ServiceError) => e,
        ),
      ]);
      expect([a, r, o]).toEqual(['os:admin', 'os:reader', 'os:operator']);
      expect(n).toMatchObject({ code: grpc.status.UNAUTHENTICATED });
      // Right after the admin's call, the reader is still only a reader.
      expect(await reboot(admin)).toBeNull();
      const denied = await reboot(reader);
      expect(denied).toMatchObject({ code: grpc.status.PERMISSION_DENIED });
      expect(denied!.details).toMatch(/the caller has roles os:reader$/);
    }
    // Each connection's certificate was read once, not once per call (the connection without
    // one too: once, to say why it has no roles).
    expect(reads()).toBe(4);
    // A new connection is read afresh.
    expect(await version(client('reader'))).toBe('os:reader');
    expect(reads()).toBe(5);
    spy.mockRestore();
  });

  it('says why a certificate gives no roles: none, expired, not yet valid, another CA (issue 17)', async () => {
    const refused = (name: string) => version(client(name)).then(() => undefined as unknown as grpc.ServiceError, (e: grpc.ServiceError) => e);
    const none = await refused('none');
    expect(none).toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    expect(none.details).toMatch(/^no client certificate was presented: .*maintenance mode takes --insecure/);
    const expired = await refused('expired');
    expect(expired.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(expired.details).toMatch(/^your client certificate \(CN old, valid \S+Z to \S+Z\) has expired \(this node's clock says \S+Z\): get a new one: `bronzectl config new`/);
    const future = await refused('future');
    expect(future.details).toMatch(/^your client certificate \(CN early, valid \S+Z to \S+Z\) is not valid yet \(this node's clock says .*`bronzectl time`/);
    const foreign = await refused('foreign');
    expect(foreign.details).toMatch(/^your client certificate \(CN stranger, .*\) is issued by "another cluster", not by this cluster's OS CA: your client config is for another cluster/);
  });

  it('relays an impersonator\'s per-call roles, on one connection', async () => {
    const relay = client('relay');
    const as = (roles: string) => {
      const md = new grpc.Metadata();
      md.set(ROLES_METADATA, roles);
      return md;
    };
    expect(await version(relay, as('os:reader'))).toBe('os:reader');
    expect(await version(relay, as('os:admin'))).toBe('os:admin');
    expect(await version(relay, as('os:reader'))).toBe('os:reader');
  });
});
