// Test aid: a scriptable NTP server on loopback (127.0.0.1, a free port), answering in the
// test process with the real time plus an offset, or misbehaving on request.
import dgram from 'node:dgram';
import { Leap, Mode, type NtpPacket, ZERO_TIMESTAMP, asciiRefId, decodePacket, encodePacket, unixMsToNtp } from './ntp.ts';

export interface FakeBehaviour {
  /** The server's clock relative to the real time, ms. */
  offsetMs: number;
  stratum: number;
  leap: number;
  /** Answer with a kiss-o'-death carrying this code. */
  kiss?: string;
  /** Do not answer. */
  drop: boolean;
  /** Hold the reply back this long (ms). */
  delayMs: number;
  /** Send a reply with a wrong origin timestamp first. */
  spoofFirst: boolean;
  mode: number;
  zeroTransmit: boolean;
}

export class FakeNtpServer {
  readonly behaviour: FakeBehaviour = { offsetMs: 0, stratum: 2, leap: Leap.NONE, drop: false, delayMs: 0, spoofFirst: false, mode: Mode.SERVER, zeroTransmit: false };
  requests = 0;
  #sock: dgram.Socket | undefined;
  port = 0;
  readonly address = '127.0.0.1';

  static async start(b: Partial<FakeBehaviour> = {}): Promise<FakeNtpServer> {
    const s = new FakeNtpServer();
    Object.assign(s.behaviour, b);
    await s.#listen();
    return s;
  }

  get spec(): string {
    return `${this.address}:${this.port}`;
  }

  #now(): number {
    return performance.timeOrigin + performance.now() + this.behaviour.offsetMs;
  }

  async #listen(): Promise<void> {
    const sock = dgram.createSocket('udp4');
    this.#sock = sock;
    sock.on('message', (msg, rinfo) => {
      this.requests++;
      const b = this.behaviour;
      if (b.drop) return;
      let req;
      try {
        req = decodePacket(msg);
      } catch {
        return;
      }
      const rx = unixMsToNtp(this.#now());
      const reply = (origin = req.transmitTime): Buffer => {
        const p: NtpPacket = {
          leap: b.kiss ? Leap.UNSYNC : b.leap,
          version: 4,
          mode: b.mode,
          stratum: b.kiss ? 0 : b.stratum,
          poll: req.poll,
          precision: -20,
          rootDelay: 0.001,
          rootDispersion: 0.002,
          referenceId: b.kiss ? asciiRefId(b.kiss) : 0x7f000001,
          referenceTime: unixMsToNtp(this.#now() - 10_000),
          originTime: origin,
          receiveTime: rx,
          transmitTime: b.zeroTransmit ? ZERO_TIMESTAMP : unixMsToNtp(this.#now()),
        };
        return encodePacket(p);
      };
      const send = () => {
        if (b.spoofFirst) sock.send(reply({ seconds: 1, fraction: 2 }), rinfo.port, rinfo.address);
        sock.send(reply(), rinfo.port, rinfo.address);
      };
      if (b.delayMs > 0) setTimeout(send, b.delayMs);
      else send();
    });
    await new Promise<void>((resolve) => sock.bind(0, this.address, () => resolve()));
    this.port = sock.address().port;
  }

  async close(): Promise<void> {
    const s = this.#sock;
    this.#sock = undefined;
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  }
}


export { prng } from '../../test/lib/prng.ts';
