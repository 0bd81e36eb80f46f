// Classic BPF programs in `tcpdump -dd` form for the capture tests (no tcpdump on the hosts
// that run them): what `tcpdump -dd -y EN10MB` would give for these expressions, restricted
// to IPv4.

/** `udp dst port <port>` (IPv4) on an Ethernet-framed link. */
export function udpDstPort(port: number): string {
  return [
    '{ 0x28, 0, 0, 0x0000000c },', // ldh [12]             ethertype
    '{ 0x15, 0, 6, 0x00000800 },', // jeq #0x800           IPv4, else drop
    '{ 0x30, 0, 0, 0x00000017 },', // ldb [23]             protocol
    '{ 0x15, 0, 4, 0x00000011 },', // jeq #17              UDP, else drop
    '{ 0xb1, 0, 0, 0x0000000e },', // ldxb 4*([14]&0xf)    IP header length
    '{ 0x48, 0, 0, 0x00000010 },', // ldh [x + 16]         UDP destination port
    `{ 0x15, 0, 1, 0x${port.toString(16).padStart(8, '0')} },`,
    '{ 0x6, 0, 0, 0x00040000 },', // ret #262144
    '{ 0x6, 0, 0, 0x00000000 },', // ret #0
  ].join('\n');
}

/** `icmp` (IPv4) on an Ethernet-framed link. */
export const ICMP = ['{ 0x28, 0, 0, 0x0000000c },', '{ 0x15, 0, 3, 0x00000800 },', '{ 0x30, 0, 0, 0x00000017 },', '{ 0x15, 0, 1, 0x00000001 },', '{ 0x6, 0, 0, 0x00040000 },', '{ 0x6, 0, 0, 0x00000000 },'].join('\n');
