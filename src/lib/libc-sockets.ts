// The libc socket and file-descriptor calls Node does not offer (netlink, packet and
// device-bound sockets, eventfd), bound once through koffi and shared by networkd and udevd.
// poll() has an `.async` form that blocks on a libuv worker thread instead of the event loop.
import { koffi } from './native.ts';

export interface SocketLibc {
  socket: (domain: number, type: number, protocol: number) => number;
  bind: (fd: number, addr: Buffer, len: number) => number;
  setsockopt: (fd: number, level: number, name: number, value: Buffer, len: number) => number;
  getsockopt: (fd: number, level: number, name: number, value: Buffer, len: Buffer) => number;
  sendto: (fd: number, buf: Buffer, len: number, flags: number, addr: Buffer | null, addrlen: number) => number;
  recv: (fd: number, buf: Buffer, len: number, flags: number) => number;
  recvfrom: (fd: number, buf: Buffer, len: number, flags: number, addr: Buffer, addrlen: Buffer) => number | bigint;
  close: (fd: number) => number;
  poll: ((fds: Buffer, n: number, timeout: number) => number) & {
    async: (fds: Buffer, n: number, timeout: number, cb: (err: unknown, rc: number) => void) => void;
  };
  eventfd: (initval: number, flags: number) => number;
  read: (fd: number, buf: Buffer, len: number) => number;
  write: (fd: number, buf: Buffer, len: number) => number;
}

let bound: SocketLibc | undefined;

export function socketLibc(): SocketLibc {
  if (bound) return bound;
  const c = koffi().load('libc.so.6');
  bound = {
    socket: c.func('int socket(int domain, int type, int protocol)'),
    bind: c.func('int bind(int fd, const void *addr, uint32_t len)'),
    setsockopt: c.func('int setsockopt(int fd, int level, int name, const void *value, uint32_t len)'),
    getsockopt: c.func('int getsockopt(int fd, int level, int name, void *value, void *len)'),
    sendto: c.func('intptr_t sendto(int fd, const void *buf, size_t len, int flags, const void *addr, uint32_t addrlen)'),
    recv: c.func('intptr_t recv(int fd, void *buf, size_t len, int flags)'),
    recvfrom: c.func('intptr_t recvfrom(int fd, void *buf, size_t len, int flags, void *addr, void *addrlen)'),
    close: c.func('int close(int fd)'),
    poll: c.func('int poll(void *fds, unsigned long nfds, int timeout)') as SocketLibc['poll'],
    eventfd: c.func('int eventfd(unsigned int initval, int flags)'),
    read: c.func('intptr_t read(int fd, void *buf, size_t len)'),
    write: c.func('intptr_t write(int fd, const void *buf, size_t len)'),
  };
  return bound;
}
