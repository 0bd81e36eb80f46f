// The DHCP client's socket on a real link: UDP, bound to 0.0.0.0:68 and to the device
// (SO_BINDTODEVICE) with SO_BROADCAST, opened through koffi because Node's dgram cannot bind
// to a device. This works before the link has any address: broadcasts leave with source
// 0.0.0.0 and the kernel accepts limited broadcasts (255.255.255.255) on the device. After
// the lease is applied, renewals go unicast to the server from the leased address.
import { initNative } from '../../lib/native.ts';
import { AF_INET, RawSocket, SOCK_DGRAM, SOL_SOCKET, SO_BINDTODEVICE, SO_BROADCAST, SO_REUSEADDR, type Poller, sockaddrIn } from '../../lib/socket.ts';
import type { DhcpTransport } from './client.ts';
import { CLIENT_PORT, SERVER_PORT } from './packet.ts';

export class UdpTransport implements DhcpTransport {
  #sock: RawSocket | undefined;
  #closed = false;

  private constructor(
    readonly link: string,
    sock: RawSocket,
    /** Called when receiving fails for good (the socket is closed then). */
    private readonly onError: (err: Error) => void,
  ) {
    this.#sock = sock;
  }

  static async open(link: string, opts: { onError?: (err: Error) => void; poller?: Poller } = {}): Promise<UdpTransport> {
    await initNative();
    const sock = RawSocket.open(AF_INET, SOCK_DGRAM, 0, `dhcp ${link}`, opts.poller);
    try {
      sock.setsockoptInt(SOL_SOCKET, SO_REUSEADDR, 1, 'setsockopt(SO_REUSEADDR)');
      sock.setsockoptInt(SOL_SOCKET, SO_BROADCAST, 1, 'setsockopt(SO_BROADCAST)');
      sock.setsockopt(SOL_SOCKET, SO_BINDTODEVICE, Buffer.from(`${link}\0`), `setsockopt(SO_BINDTODEVICE, ${link})`);
      sock.bind(sockaddrIn('0.0.0.0', CLIENT_PORT));
    } catch (err) {
      sock.close();
      throw err;
    }
    return new UdpTransport(link, sock, opts.onError ?? (() => {}));
  }

  start(onPacket: (data: Buffer) => void): void {
    const sock = this.#sock;
    if (!sock) return;
    const buf = Buffer.alloc(4096);
    void (async () => {
      while (!this.#closed) {
        try {
          const { data, truncated } = await sock.recv(buf);
          if (!truncated && !this.#closed) onPacket(data);
        } catch (err) {
          if (this.#closed) return;
          this.close();
          this.onError(err as Error);
          return;
        }
      }
    })();
  }

  send(data: Buffer, to: 'broadcast' | string): void {
    if (!this.#sock) throw new Error(`dhcp ${this.link}: transport closed`);
    this.#sock.sendto(data, sockaddrIn(to === 'broadcast' ? '255.255.255.255' : to, SERVER_PORT));
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#sock?.close();
    this.#sock = undefined;
  }
}
