// TLS credentials for gRPC calls to other nodes by address: apid's to other nodes' apid, and
// machined's to etcd, trustd and the cluster registry. grpc-js's own createSsl() sends the
// target's host as the TLS ServerName (SNI) even when it is an IP address, which RFC 6066 does
// not permit and Node warns about ([DEP0123]) on the first call to a node named by its address.
// These credentials do what grpc-js does otherwise (one secure context, h2 by ALPN, the peer
// checked against the CA and its name or IP SAN) but set the ServerName only for names; an
// address is still verified against the certificate's IP SANs (Node checks `host` when no
// ServerName is given).
import net from 'node:net';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';

type Connector = grpc.experimental.SecureConnector;

/** What tls.connect is given for a target: the ServerName only when the host is a name. */
export function peerTlsOptions(host: string): Pick<tls.ConnectionOptions, 'host' | 'servername' | 'ALPNProtocols'> {
  return { host, ...(net.isIP(host) ? {} : { servername: host }), ALPNProtocols: ['h2'] };
}

/** The host a channel target names ("10.0.0.2:50000", "[fd00::2]:50000", "node1"). */
function hostOf(target: grpc.experimental.GrpcUri): string {
  const hp = grpc.experimental.splitHostPort(target.path);
  return hp?.host ?? target.path;
}

export class PeerCredentials extends grpc.ChannelCredentials {
  readonly #context: tls.SecureContext;

  /** `key` and `cert`: the client certificate, for mutual TLS (none: server-verified only). */
  constructor(ca: Buffer, key?: Buffer, cert?: Buffer) {
    super();
    this.#context = tls.createSecureContext({ ca, ...(key && cert ? { key, cert } : {}) });
  }

  _isSecure(): boolean {
    return true;
  }

  _equals(other: grpc.ChannelCredentials): boolean {
    return other === this;
  }

  _createSecureConnector(target: grpc.experimental.GrpcUri, _options: grpc.ChannelOptions, callCredentials?: grpc.CallCredentials): Connector {
    const options = { secureContext: this.#context, ...peerTlsOptions(hostOf(target)) };
    const creds = callCredentials ?? grpc.credentials.createEmpty();
    // Handshakes in progress: a peer that accepts and never answers must not keep its socket
    // once the channel is closed (grpc-js destroys the connector then, not the handshake).
    const pending = new Map<tls.TLSSocket, net.Socket>();
    return {
      connect: (socket) =>
        new Promise((resolve, reject) => {
          const s = tls.connect({ ...options, socket }, () => {
            pending.delete(s);
            if (!s.authorized) {
              reject(s.authorizationError);
              s.destroy();
              return;
            }
            resolve({ socket: s, secure: true });
          });
          pending.set(s, socket);
          s.on('error', (err) => {
            pending.delete(s);
            reject(err);
          });
          s.on('close', () => {
            if (pending.delete(s)) reject(new Error('the connection closed during the TLS handshake'));
          });
        }),
      waitForReady: () => Promise.resolve(),
      getCallCredentials: () => creds,
      destroy: () => {
        // The TCP socket too: destroying a TLS socket mid-handshake leaves the one it wraps open.
        for (const [s, tcp] of pending) {
          s.destroy();
          tcp.destroy();
        }
      },
    };
  }
}
