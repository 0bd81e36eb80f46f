// The host side of a node's second NIC in the e2e tests: a QEMU socket network (one UDP
// datagram per Ethernet frame) whose other end is the test. It answers the node's ARP for
// 10.9.0.1 and sends it ICMP echo requests; the node is 10.9.0.2 (MAC 52:54:00:00:09:02).
import dgram from 'node:dgram';

export const NODE_MAC = Buffer.from([0x52, 0x54, 0x00, 0x00, 0x09, 0x02]);
const HOST_MAC = Buffer.from([0x02, 0x00, 0x00, 0x00, 0x09, 0x01]);
const NODE_IP = Buffer.from([10, 9, 0, 2]);
const HOST_IP = Buffer.from([10, 9, 0, 1]);

function checksum(b: Buffer): number {
  let sum = 0;
  for (let i = 0; i + 1 < b.length; i += 2) sum += b.readUInt16BE(i);
  if (b.length % 2) sum += b[b.length - 1]! << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return ~sum & 0xffff;
}

/** An Ethernet frame: ICMP echo request from the host side to the node. */
export function echoRequest(seq: number): Buffer {
  const icmp = Buffer.concat([Buffer.from([8, 0, 0, 0, 0x42, 0x42, seq >> 8, seq & 0xff]), Buffer.from(`bronze-ping-${seq}`)]);
  icmp.writeUInt16BE(checksum(icmp), 2);
  const ip = Buffer.alloc(20);
  ip[0] = 0x45;
  ip.writeUInt16BE(20 + icmp.length, 2);
  ip.writeUInt16BE(seq, 4);
  ip[8] = 64;
  ip[9] = 1;
  HOST_IP.copy(ip, 12);
  NODE_IP.copy(ip, 16);
  ip.writeUInt16BE(checksum(ip), 10);
  return Buffer.concat([NODE_MAC, HOST_MAC, Buffer.from([0x08, 0x00]), ip, icmp]);
}

/** The host side of the node's eth1: a QEMU socket network (one UDP datagram per frame). */
export class HostSide {
  readonly sock = dgram.createSocket('udp4');
  readonly replies: number[] = [];

  constructor(readonly qemuPort: number) {
    this.sock.on('message', (f) => {
      const type = f.readUInt16BE(12);
      if (type === 0x0806 && f.readUInt16BE(20) === 1 && f.subarray(38, 42).equals(HOST_IP)) {
        // ARP who-has 10.9.0.1: answer as the host side.
        const reply = Buffer.concat([f.subarray(6, 12), HOST_MAC, Buffer.from([0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 2]), HOST_MAC, HOST_IP, f.subarray(22, 28), f.subarray(28, 32)]);
        this.sock.send(reply, this.qemuPort, '127.0.0.1');
      } else if (type === 0x0800 && f[23] === 1 && f[34] === 0 && f.subarray(26, 30).equals(NODE_IP)) {
        this.replies.push(f.readUInt16BE(40)); // echo reply: its sequence number
      }
    });
  }

  listen(port: number): Promise<void> {
    return new Promise((r) => this.sock.bind(port, '127.0.0.1', () => r()));
  }

  ping(seq: number): void {
    this.sock.send(echoRequest(seq), this.qemuPort, '127.0.0.1');
  }

  close(): void {
    this.sock.close();
  }
}
