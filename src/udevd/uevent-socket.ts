// The kernel's uevent multicast: a NETLINK_KOBJECT_UEVENT socket, which Node cannot open,
// through koffi. socket() and bind() are plain calls; waiting is a poll() made through koffi's
// `.async`, so it blocks on a worker thread while the event loop runs. poll() also watches an
// eventfd that close() writes to, so stopping is immediate; once poll() returns, the socket is
// drained on the main thread with non-blocking recvfrom() (errno is reliable there).
//
// One worker thread stays blocked while the source is open: count it against
// UV_THREADPOOL_SIZE when several such readers run in one process.
import os from 'node:os';
import { koffi } from '../lib/native.ts';
import { SyscallError } from '../lib/sys.ts';
import { MAX_UEVENT_SIZE } from './uevent.ts';
import { socketLibc, type SocketLibc } from '../lib/libc-sockets.ts';

export interface UeventHandlers {
  /** One datagram, as received (parse it with parseUevent). */
  message(msg: Buffer): void;
  /** The kernel dropped messages (ENOBUFS): the receiver should rescan. */
  overflow(): void;
  /** The source failed and stopped. */
  error(err: Error): void;
}

/** Where uevents come from: the kernel in production, a test's hand in unit tests. */
export interface UeventSource {
  start(handlers: UeventHandlers): void;
  close(): Promise<void>;
}

const AF_NETLINK = 16;
const SOCK_DGRAM = 2;
const SOCK_NONBLOCK = 0o4000;
const SOCK_CLOEXEC = 0o2000000;
const NETLINK_KOBJECT_UEVENT = 15;
const SOL_SOCKET = 1;
const SO_RCVBUF = 8;
const SO_RCVBUFFORCE = 33;
const MSG_DONTWAIT = 0x40;
const EFD_NONBLOCK = 0o4000;
const EFD_CLOEXEC = 0o2000000;
const POLLIN = 1;
/** The kernel's multicast group for uevents (udev daemons re-broadcast on group 2). */
const KERNEL_GROUP = 1;
const RCVBUF = 8 << 20;

type Libc = SocketLibc;
const lib = socketLibc;

function check(call: string, rc: number): number {
  if (rc < 0) throw new SyscallError(call, koffi().errno());
  return rc;
}

export class NetlinkUeventSource implements UeventSource {
  #fd = -1;
  #wake = -1;
  #closing = false;
  #done: Promise<void> | undefined;
  readonly #buf = Buffer.alloc(MAX_UEVENT_SIZE + 1);
  readonly #addr = Buffer.alloc(12);
  readonly #addrlen = Buffer.alloc(4);
  readonly #pfds = Buffer.alloc(16);

  /** Opens and binds the socket now, so nothing the kernel sends after this is missed. */
  constructor() {
    const c = lib();
    this.#fd = check('socket(AF_NETLINK, NETLINK_KOBJECT_UEVENT)', c.socket(AF_NETLINK, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT));
    try {
      const size = Buffer.alloc(4);
      size.writeInt32LE(RCVBUF);
      // A coldplug trigger makes a burst; FORCE needs CAP_NET_ADMIN, else the capped size will do.
      if (c.setsockopt(this.#fd, SOL_SOCKET, SO_RCVBUFFORCE, size, 4) < 0) c.setsockopt(this.#fd, SOL_SOCKET, SO_RCVBUF, size, 4);
      const sa = Buffer.alloc(12); // sockaddr_nl: family, pad, pid (0: the kernel assigns), groups
      sa.writeUInt16LE(AF_NETLINK, 0);
      sa.writeUInt32LE(0, 4);
      sa.writeUInt32LE(KERNEL_GROUP, 8);
      check('bind(NETLINK_KOBJECT_UEVENT)', c.bind(this.#fd, sa, 12));
      this.#wake = check('eventfd', c.eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
    } catch (err) {
      this.#closeFds();
      throw err;
    }
  }

  start(handlers: UeventHandlers): void {
    if (this.#done) throw new Error('uevent source already started');
    this.#pfds.writeInt32LE(this.#fd, 0);
    this.#pfds.writeInt16LE(POLLIN, 4);
    this.#pfds.writeInt32LE(this.#wake, 8);
    this.#pfds.writeInt16LE(POLLIN, 12);
    this.#done = new Promise<void>((resolve) => {
      const loop = () => {
        if (this.#closing) return resolve();
        this.#pfds.writeInt16LE(0, 6);
        this.#pfds.writeInt16LE(0, 14);
        lib().poll.async(this.#pfds, 2, -1, (err, rc) => {
          if (this.#closing) return resolve();
          if (err || rc < 0) {
            // EINTR is the only expected failure; anything else repeats, so give up.
            if (rc < 0 && koffi().errno() === os.constants.errno.EINTR) return loop();
            handlers.error(err instanceof Error ? err : new Error(`poll failed (${rc})`));
            return resolve();
          }
          try {
            this.#drain(handlers);
          } catch (e) {
            handlers.error(e as Error);
            return resolve();
          }
          loop();
        });
      };
      loop();
    });
  }

  #drain(handlers: UeventHandlers): void {
    const c = lib();
    for (let i = 0; i < 4096; i++) {
      this.#addrlen.writeUInt32LE(this.#addr.length, 0);
      const n = Number(c.recvfrom(this.#fd, this.#buf, this.#buf.length, MSG_DONTWAIT, this.#addr, this.#addrlen));
      if (n < 0) {
        const errno = koffi().errno();
        if (errno === os.constants.errno.EAGAIN || errno === os.constants.errno.EINTR) return;
        if (errno === os.constants.errno.ENOBUFS) {
          handlers.overflow();
          continue;
        }
        throw new SyscallError('recvfrom(NETLINK_KOBJECT_UEVENT)', errno);
      }
      // Only the kernel (port 0) speaks on this group; drop anything else.
      if (this.#addr.readUInt32LE(4) !== 0) continue;
      handlers.message(Buffer.from(this.#buf.subarray(0, Math.min(n, this.#buf.length))));
    }
  }

  async close(): Promise<void> {
    if (this.#closing) return this.#done;
    this.#closing = true;
    if (this.#done && this.#wake >= 0) {
      const one = Buffer.alloc(8);
      one.writeBigUInt64LE(1n);
      lib().write(this.#wake, one, 8);
      await this.#done;
    }
    this.#closeFds();
  }

  #closeFds(): void {
    if (this.#fd >= 0) lib().close(this.#fd);
    if (this.#wake >= 0) lib().close(this.#wake);
    this.#fd = -1;
    this.#wake = -1;
  }
}

/** A source fed by hand: tests push kernel-format messages through it. */
export class ManualUeventSource implements UeventSource {
  #handlers: UeventHandlers | undefined;
  closed = false;

  start(handlers: UeventHandlers): void {
    this.#handlers = handlers;
  }

  push(msg: Buffer): void {
    if (!this.#handlers) throw new Error('source not started');
    if (!this.closed) this.#handlers.message(msg);
  }

  overflow(): void {
    this.#handlers?.overflow();
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}
