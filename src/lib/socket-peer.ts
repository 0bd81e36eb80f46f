// Who is at the other end of a unix socket: the kernel's SO_PEERCRED (the pid, uid and gid of
// the process that connected, as they were when it connected), read with getsockopt
// (lib/libc-sockets.ts) on the accepted socket's descriptor. Node offers no way to read it.
import type net from 'node:net';
import { socketLibc } from './libc-sockets.ts';
import { checkSyscall } from './sys.ts';

const SOL_SOCKET = 1;
const SO_PEERCRED = 17;

export interface PeerCredentials {
  pid: number;
  uid: number;
  gid: number;
}

/** SO_PEERCRED of the socket with descriptor `fd`. */
export function peerCredentialsOfFd(fd: number): PeerCredentials {
  const ucred = Buffer.alloc(12);
  const len = Buffer.alloc(4);
  len.writeUInt32LE(ucred.length, 0);
  checkSyscall(`getsockopt(${fd}, SO_PEERCRED)`, socketLibc().getsockopt(fd, SOL_SOCKET, SO_PEERCRED, ucred, len));
  if (len.readUInt32LE(0) !== ucred.length) throw new Error(`getsockopt(${fd}, SO_PEERCRED): ${len.readUInt32LE(0)} bytes, not 12`);
  return { pid: ucred.readInt32LE(0), uid: ucred.readUInt32LE(4), gid: ucred.readUInt32LE(8) };
}

/** SO_PEERCRED of an accepted unix socket; throws when Node does not show its descriptor. */
export function peerCredentials(socket: net.Socket): PeerCredentials {
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  if (typeof fd !== 'number' || fd < 0) throw new Error('the connection has no file descriptor to read its peer from');
  return peerCredentialsOfFd(fd);
}
