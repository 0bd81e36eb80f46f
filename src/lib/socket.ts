// Sockets Node cannot open (netlink, UDP bound to a device before it has an address), through
// koffi. Every socket is non-blocking: reads never block the event loop. Waiting for data is
// one poll(2) over every open socket, run through koffi's `.async` on a libuv worker thread,
// so the whole daemon holds a single worker however many sockets it reads (the pool has 4).
//
// Why poll on the worker and recv on the main thread rather than `recv.async`: errno is
// thread-local, and after an async call koffi().errno() reads the main thread's, so a failed
// recv on the worker could not say why. A non-blocking recv on the main thread after poll
// reports EAGAIN, ENOBUFS (netlink overrun) and the rest exactly. An eventfd in the poll set
// wakes the worker when the set changes or a socket closes, so no fd is closed under a poll.
import os from 'node:os';
import { koffi } from './native.ts';
import { SyscallError } from './sys.ts';
import { socketLibc, type SocketLibc } from './libc-sockets.ts';

export const AF_INET = 2;
export const AF_INET6 = 10;
export const AF_NETLINK = 16;
export const SOCK_DGRAM = 2;
export const SOCK_RAW = 3;
const SOCK_NONBLOCK = 0o4000;
const SOCK_CLOEXEC = 0o2000000;
export const SOL_SOCKET = 1;
export const SO_REUSEADDR = 2;
export const SO_BROADCAST = 6;
export const SO_RCVBUF = 8;
export const SO_BINDTODEVICE = 25;
export const SO_RCVBUFFORCE = 33;
const MSG_TRUNC = 0x20;
const MSG_DONTWAIT = 0x40;
const POLLIN = 0x1;
const POLLERR = 0x8;
const POLLHUP = 0x10;
const POLLNVAL = 0x20;
const EFD_NONBLOCK = 0o4000;
const EFD_CLOEXEC = 0o2000000;
const EAGAIN = os.constants.errno.EAGAIN;
const EINTR = os.constants.errno.EINTR;

type Libc = SocketLibc;
const lib = socketLibc;

function errno(): number {
  return koffi().errno();
}

function check(call: string, rc: number): number {
  if (rc < 0) throw new SyscallError(call, errno());
  return rc;
}

export class SocketClosedError extends Error {
  override name = 'SocketClosedError';
  constructor(what: string) {
    super(`${what}: socket closed`);
  }
}

// ---------------------------------------------------------------------------------------------
// The poller: one poll(2) at a time over every socket someone waits on, plus the wake eventfd.

interface Waiter {
  fd: number;
  resolve: () => void;
  reject: (err: Error) => void;
}

export class Poller {
  readonly #waiters = new Set<Waiter>();
  #wakeFd = -1;
  #polling = false;
  #closed = false;
  /** Sockets closed while a poll was in flight: closed when it returns. */
  #deferredClose: number[] = [];

  #ensureWake(): void {
    if (this.#wakeFd < 0) this.#wakeFd = check('eventfd', lib().eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  }

  /** Resolves when fd is readable (or has an error to report: the next recv says which). */
  waitReadable(fd: number): Promise<void> {
    if (this.#closed) return Promise.reject(new SocketClosedError('poller'));
    this.#ensureWake();
    return new Promise<void>((resolve, reject) => {
      this.#waiters.add({ fd, resolve, reject });
      if (this.#polling) this.#wake();
      else this.#loop();
    });
  }

  /** Closes fd now, or right after the poll in flight returns; fails its waiters. */
  closeFd(fd: number, what: string): void {
    for (const w of [...this.#waiters]) {
      if (w.fd !== fd) continue;
      this.#waiters.delete(w);
      w.reject(new SocketClosedError(what));
    }
    if (this.#polling) {
      this.#deferredClose.push(fd);
      this.#wake();
    } else {
      lib().close(fd);
    }
  }

  /** Stops the poller (tests); sockets still open must be closed by their owners. */
  close(): void {
    this.#closed = true;
    if (shared === this) shared = undefined;
    for (const w of this.#waiters) w.reject(new SocketClosedError('poller'));
    this.#waiters.clear();
    if (this.#polling) this.#wake();
    else this.#closeWake();
  }

  #closeWake(): void {
    if (this.#wakeFd >= 0) lib().close(this.#wakeFd);
    this.#wakeFd = -1;
  }

  #wake(): void {
    const one = Buffer.alloc(8);
    one.writeBigUInt64LE(1n);
    lib().write(this.#wakeFd, one, 8);
  }

  #loop(): void {
    if (this.#polling) return;
    if (this.#waiters.size === 0 || this.#closed) {
      if (this.#closed) this.#closeWake();
      return;
    }
    const fds = [...new Set([...this.#waiters].map((w) => w.fd))];
    const set = Buffer.alloc(8 * (fds.length + 1));
    set.writeInt32LE(this.#wakeFd, 0);
    set.writeInt16LE(POLLIN, 4);
    fds.forEach((fd, i) => {
      set.writeInt32LE(fd, 8 * (i + 1));
      set.writeInt16LE(POLLIN, 8 * (i + 1) + 4);
    });
    this.#polling = true;
    lib().poll.async(set, fds.length + 1, -1, (err, rc) => {
      this.#polling = false;
      for (const fd of this.#deferredClose.splice(0)) lib().close(fd);
      if (set.readInt16LE(6) !== 0) {
        const drain = Buffer.alloc(8);
        lib().read(this.#wakeFd, drain, 8);
      }
      if (err || rc < 0) {
        // EINTR or a koffi failure: wake everyone; they recv, see EAGAIN and wait again.
        for (const w of this.#waiters) w.resolve();
        this.#waiters.clear();
      } else {
        const ready = new Set<number>();
        fds.forEach((fd, i) => {
          if (set.readInt16LE(8 * (i + 1) + 6) & (POLLIN | POLLERR | POLLHUP | POLLNVAL)) ready.add(fd);
        });
        for (const w of [...this.#waiters]) {
          if (!ready.has(w.fd)) continue;
          this.#waiters.delete(w);
          w.resolve();
        }
      }
      this.#loop();
    });
  }
}

let shared: Poller | undefined;

/** The process's poller. */
export function poller(): Poller {
  shared ??= new Poller();
  return shared;
}

// ---------------------------------------------------------------------------------------------
// Sockets.

export class RawSocket {
  #fd: number;
  #closed = false;

  private constructor(
    fd: number,
    readonly what: string,
    private readonly poll: Poller,
  ) {
    this.#fd = fd;
  }

  static open(domain: number, type: number, protocol: number, what: string, p: Poller = poller()): RawSocket {
    const fd = check(`socket(${what})`, lib().socket(domain, type | SOCK_NONBLOCK | SOCK_CLOEXEC, protocol));
    return new RawSocket(fd, what, p);
  }

  get fd(): number {
    return this.#fd;
  }

  get closed(): boolean {
    return this.#closed;
  }

  #live(call: string): number {
    if (this.#closed) throw new SocketClosedError(`${call}(${this.what})`);
    return this.#fd;
  }

  setsockopt(level: number, name: number, value: Buffer, call = `setsockopt(${level}, ${name})`): void {
    check(`${call} on ${this.what}`, lib().setsockopt(this.#live('setsockopt'), level, name, value, value.length));
  }

  setsockoptInt(level: number, name: number, value: number, call?: string): void {
    const b = Buffer.alloc(4);
    b.writeInt32LE(value);
    this.setsockopt(level, name, b, call);
  }

  bind(addr: Buffer): void {
    check(`bind(${this.what})`, lib().bind(this.#live('bind'), addr, addr.length));
  }

  /** Sends one datagram (to addr, or the bound/connected peer). */
  sendto(data: Buffer, addr: Buffer | null = null): void {
    const fd = this.#live('sendto');
    for (;;) {
      const rc = lib().sendto(fd, data, data.length, 0, addr, addr ? addr.length : 0);
      if (rc >= 0) return;
      const e = errno();
      if (e !== EINTR) throw new SyscallError(`sendto(${this.what})`, e);
    }
  }

  /**
   * One datagram if one is queued, else undefined. `truncated` when it was longer than buf;
   * `length` is its whole length.
   */
  tryRecv(buf: Buffer): { data: Buffer; truncated: boolean; length: number } | undefined {
    const fd = this.#live('recv');
    for (;;) {
      const rc = Number(lib().recv(fd, buf, buf.length, MSG_DONTWAIT | MSG_TRUNC));
      if (rc >= 0) {
        const n = Math.min(rc, buf.length);
        return { data: Buffer.from(buf.subarray(0, n)), truncated: rc > buf.length, length: rc };
      }
      const e = errno();
      if (e === EAGAIN) return undefined;
      if (e !== EINTR) throw new SyscallError(`recv(${this.what})`, e);
    }
  }

  /** The next datagram; waits on the poller's worker thread, never on the event loop. */
  async recv(buf: Buffer): Promise<{ data: Buffer; truncated: boolean; length: number }> {
    for (;;) {
      const got = this.tryRecv(buf);
      if (got) return got;
      await this.poll.waitReadable(this.#live('recv'));
    }
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.poll.closeFd(this.#fd, this.what);
    this.#fd = -1;
  }
}

/** struct sockaddr_in for addr:port (addr dotted IPv4). */
export function sockaddrIn(addr: string, port: number): Buffer {
  const b = Buffer.alloc(16);
  b.writeUInt16LE(AF_INET, 0);
  b.writeUInt16BE(port, 2);
  const parts = addr.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) throw new Error(`bad IPv4 address ${addr}`);
  parts.forEach((p, i) => b.writeUInt8(p, 4 + i));
  return b;
}

/** struct sockaddr_nl (pid 0: the kernel assigns one). */
export function sockaddrNl(groups: number, pid = 0): Buffer {
  const b = Buffer.alloc(12);
  b.writeUInt16LE(AF_NETLINK, 0);
  b.writeUInt32LE(pid, 4);
  b.writeUInt32LE(groups >>> 0, 8);
  return b;
}
