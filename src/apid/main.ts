// apid: the node's API gateway. It serves health and Version on its unix socket for machined,
// and the API on :50000: TLS 1.3, a client certificate verified against the OS CA, the
// caller's roles checked against the RBAC table, and every call routed to this node's daemons
// or to other nodes (src/apid/proxy.ts). Certificates come from machined and are swapped in
// while serving when renewed.
import path from 'node:path';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { StderrLogger } from '../lib/log.ts';
import { startupTimes } from '../lib/startup.ts';
import { runDaemon, serveDaemon, shutdownServer } from '../daemon/serve.ts';
import { ApidCertificateSource } from '../daemon/certs.ts';
import { apidListenAddress, secretsDir } from '../contract/paths.ts';
import { PeerCredentials } from '../lib/peer-credentials.ts';
import { ApiProxy } from './proxy.ts';
import { SelfIdentity, splitHostPort } from './router.ts';

/**
 * How many request headers apid takes, and their total size: a `nodes` list is one header per
 * node as talosctl sends it, and Node's HTTP/2 default (128 headers) would refuse a call naming
 * more than about a hundred nodes with RESOURCE_EXHAUSTED.
 */
export const HEADER_LIMITS = { maxHeaderListPairs: 4096, settings: { maxHeaderListSize: 256 * 1024 } } as const;

/** Server credentials whose HTTP/2 server takes HEADER_LIMITS (grpc-js has no option for them). */
function withHeaderLimits(creds: grpc.ServerCredentials): grpc.ServerCredentials {
  const base = creds._getConstructorOptions.bind(creds);
  creds._getConstructorOptions = () => {
    const o = base();
    return o && { ...o, ...HEADER_LIMITS, settings: { ...o.settings, ...HEADER_LIMITS.settings } };
  };
  return creds;
}

function bind(server: grpc.Server, address: string, creds: grpc.ServerCredentials): Promise<number> {
  return new Promise((resolve, reject) => server.bindAsync(address, creds, (err, port) => (err ? reject(err) : resolve(port))));
}

export async function main(): Promise<void> {
  tls.DEFAULT_MIN_VERSION = 'TLSv1.3';
  const log = new StderrLogger('apid');
  await runDaemon('apid', log, async () => {
    const local = await serveDaemon('apid', log);
    const listen = apidListenAddress();
    const listenHost = splitHostPort(listen).host;
    const peerPort = Number(process.env.BRONZE_APID_PEER_PORT ?? 50000);
    // Fan-out limits (tests shorten the deadline): see src/apid/proxy.ts.
    const fanoutTimeoutMs = Number(process.env.BRONZE_APID_FANOUT_TIMEOUT_MS ?? 30_000);
    const fanoutConcurrency = Number(process.env.BRONZE_APID_FANOUT_CONCURRENCY ?? 32);

    const certs = new ApidCertificateSource(path.join(secretsDir(), 'apid'), log);
    let peerCreds: grpc.ChannelCredentials | undefined;
    const proxy = new ApiProxy({
      self: new SelfIdentity(() => (listenHost === '::' || listenHost === '0.0.0.0' ? [] : [listenHost])),
      peerPort,
      peerCredentials: () => peerCreds,
      log,
      fanoutTimeoutMs,
      fanoutConcurrency,
      maintenance: () => certs.maintenance,
    });
    certs.onChange((c) => {
      peerCreds = c.clientCert && c.clientKey ? new PeerCredentials(c.ca, c.clientKey, c.clientCert) : undefined;
      proxy.resetPeers();
    });
    certs.start();
    // The connection to machined is made while apid waits for its certificates, not by the first call.
    void proxy.connectMachined();

    // The API serves once machined has given apid its certificates, but apid listens at once,
    // while it waits for them (most of a second at boot, while machined makes them): under
    // QEMU/TCG making the gRPC server, its HTTP/2 server and the socket took apid 0.66 s once
    // they had come. Until they are there, grpc-js closes every connection as it comes
    // (CertificateProviderServerCredentials has no context yet), which a client sees as
    // UNAVAILABLE, as it does a port not yet listening; from then on it sets its TLS context
    // from them.
    let stopping = false;
    // No channelz: nothing reads it, and its bookkeeping is work on every call.
    const server = new grpc.Server({ 'grpc.enable_channelz': 0 });
    for (const s of proxy.services()) server.addService(s.definition, s.implementation);
    // The CA and identity come from the certificate source; client certificates are requested
    // but checked per call, so that a caller without one gets a clear UNAUTHENTICATED.
    const creds = withHeaderLimits(grpc.experimental.createCertificateProviderServerCredentials(certs, certs, false));
    if (!certs.certs) log.info(`waiting for certificates in ${path.join(secretsDir(), 'apid')}`);
    void Promise.all([bind(server, listen, creds), certs.ready()])
      .then(([port]) => {
        if (!stopping) log.info(`serving the API on ${listenHost}:${port} (TLS 1.3, client certificates checked against the OS CA; ${startupTimes()})`);
      })
      .catch((err: Error) => {
        // Without its listener apid is of no use: exit, and machined restarts it.
        if (stopping) return;
        log.error(`serving the API on ${listen}: ${err.message}`);
        process.exit(1);
      });

    return {
      ...local,
      close: async () => {
        stopping = true;
        certs.stop();
        proxy.close();
        await Promise.all([local.close(), shutdownServer(server)]);
      },
    };
  });
}
