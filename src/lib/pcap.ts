// The classic pcap file format (what tcpdump -w writes and Talos's PacketCapture streams):
// a 24-byte global header, then per packet a 16-byte record header and the captured bytes.
// Little-endian, microsecond timestamps (magic 0xa1b2c3d4).

export const PCAP_MAGIC = 0xa1b2c3d4;
/** Link types (tcpdump's DLT/LINKTYPE numbers). */
export const LINKTYPE_ETHERNET = 1;
export const LINKTYPE_RAW = 101;

export function pcapFileHeader(snaplen: number, linktype: number): Buffer {
  const b = Buffer.alloc(24);
  b.writeUInt32LE(PCAP_MAGIC, 0);
  b.writeUInt16LE(2, 4);
  b.writeUInt16LE(4, 6);
  b.writeInt32LE(0, 8); // thiszone
  b.writeUInt32LE(0, 12); // sigfigs
  b.writeUInt32LE(snaplen, 16);
  b.writeUInt32LE(linktype, 20);
  return b;
}

/** One record: header + data; `timeMs` is a Unix time in (fractional) milliseconds. */
export function pcapRecord(timeMs: number, data: Buffer, origLen: number): Buffer {
  const b = Buffer.alloc(16 + data.length);
  const sec = Math.floor(timeMs / 1000);
  b.writeUInt32LE(sec, 0);
  b.writeUInt32LE(Math.min(999_999, Math.floor((timeMs - sec * 1000) * 1000)), 4);
  b.writeUInt32LE(data.length, 8);
  b.writeUInt32LE(origLen, 12);
  data.copy(b, 16);
  return b;
}

export interface PcapPacket {
  timeMs: number;
  data: Buffer;
  origLen: number;
}

/** Reads a pcap byte stream as it arrives: push() bytes, get whole packets back. */
export class PcapReader {
  #buf: Buffer = Buffer.alloc(0);
  header: { snaplen: number; linktype: number } | undefined;

  push(chunk: Buffer): PcapPacket[] {
    this.#buf = this.#buf.length ? Buffer.concat([this.#buf, chunk]) : chunk;
    const out: PcapPacket[] = [];
    if (!this.header) {
      if (this.#buf.length < 24) return out;
      const magic = this.#buf.readUInt32LE(0);
      if (magic !== PCAP_MAGIC) throw new Error(`not a pcap stream (magic 0x${magic.toString(16)})`);
      this.header = { snaplen: this.#buf.readUInt32LE(16), linktype: this.#buf.readUInt32LE(20) };
      this.#buf = this.#buf.subarray(24);
    }
    while (this.#buf.length >= 16) {
      const incl = this.#buf.readUInt32LE(8);
      if (this.#buf.length < 16 + incl) break;
      out.push({
        timeMs: this.#buf.readUInt32LE(0) * 1000 + this.#buf.readUInt32LE(4) / 1000,
        data: Buffer.from(this.#buf.subarray(16, 16 + incl)),
        origLen: this.#buf.readUInt32LE(12),
      });
      this.#buf = this.#buf.subarray(16 + incl);
    }
    return out;
  }
}
