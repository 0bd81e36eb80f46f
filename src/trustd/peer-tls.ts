// trustd's listener: TLS terminated here, then each connection handed to the gRPC server
// (grpc-js's connection injector), so that a handler can see the caller's certificate.
//
// Why not grpc-js's own TLS: callers of Certificate have no certificate yet, and callers of the
// registry's Hello present their API certificate, which is server-auth only. A server that asks
// for a client certificate without requiring one accepts both, but OpenSSL's client-purpose
// check marks the server-auth certificate unauthorized, and grpc-js's getAuthContext() gives
// nothing for an unauthorized peer. Here the certificate is kept per connection (by the peer
// address as call.getPeer() prints it) and checked by the handler (worker-identity.ts).
import net from 'node:net';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import type { ApidCertificateSource } from '../daemon/certs.ts';
import type { Logger } from '../lib/log.ts';
import { splitHostPort } from '../lib/hostport.ts';

export interface PeerTlsListener {
  /** The DER certificate the peer of `call.getPeer()` presented, if any. */
  peerCertificate(peer: string): Buffer | undefined;
  readonly port: number;
  close(): Promise<void>;
}

/** "[::]:50001", "10.0.0.2:50001" → host and port. */
export function splitListen(listen: string): { host: string; port: number } {
  const { host, port } = splitHostPort(listen);
  if (port === undefined) throw new Error(`listen address ${JSON.stringify(listen)} is not host:port`);
  return { host: host || '::', port };
}

/** What grpc-js's getPeer() says of a socket. */
const peerOf = (s: net.Socket) => (s.remotePort ? `${s.remoteAddress}:${s.remotePort}` : String(s.remoteAddress));

export interface PeerTlsOptions {
  /** Connections at once, at most (default 512). */
  maxConnections?: number;
  /** A TLS handshake must finish within it (default 10 s). */
  handshakeTimeoutMs?: number;
}

export async function listenPeerTls(server: grpc.Server, certs: ApidCertificateSource, listen: string, log: Logger, o: PeerTlsOptions = {}): Promise<PeerTlsListener> {
  const current = await certs.ready();
  const context = (c: typeof current): tls.SecureContextOptions => ({ ca: c.ca, cert: c.serverCert, key: c.serverKey });
  const injector = server.createConnectionInjector(grpc.ServerCredentials.createInsecure());
  const peers = new Map<string, Buffer>();
  const tlsServer = tls.createServer({
    ...context(current),
    requestCert: true,
    rejectUnauthorized: false,
    ALPNProtocols: ['h2'],
    handshakeTimeout: o.handshakeTimeoutMs ?? 10_000,
  });
  tlsServer.maxConnections = o.maxConnections ?? 512;
  // A renewed certificate takes effect for the next handshake.
  certs.onChange((c) => tlsServer.setSecureContext(context(c)));
  tlsServer.on('secureConnection', (s: tls.TLSSocket) => {
    s.on('error', () => s.destroy());
    if (s.alpnProtocol !== 'h2') return void s.destroy();
    const key = peerOf(s);
    const raw = s.getPeerCertificate()?.raw;
    if (raw) {
      peers.set(key, raw);
      s.once('close', () => peers.get(key) === raw && peers.delete(key));
    } else {
      peers.delete(key);
    }
    injector.injectConnection(s);
  });
  tlsServer.on('tlsClientError', () => {
    // A failed handshake: nothing reached gRPC.
  });
  const { host, port } = splitListen(listen);
  await new Promise<void>((resolve, reject) => {
    tlsServer.once('error', reject);
    tlsServer.listen(port, host, () => {
      tlsServer.off('error', reject);
      resolve();
    });
  });
  tlsServer.on('error', (err) => log.warn(`listener: ${err.message}`));
  return {
    peerCertificate: (peer) => peers.get(peer),
    port: (tlsServer.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        injector.destroy();
        tlsServer.close(() => resolve());
      }),
  };
}
