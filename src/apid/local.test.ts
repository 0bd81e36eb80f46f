// LocalChannel, apid's unary client for this node's daemons, against a real grpc-js server on
// a unix socket: replies pass as raw bytes with the roles metadata, and every outcome (status
// and message, unknown method, handler exception, oversized reply, deadline, no daemon, a
// restarted daemon) is what a grpc-js client gets in the same case.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalChannel, MAX_RECEIVE_MESSAGE_BYTES } from './local.ts';

const raw = (b: Buffer) => b;
const method = (name: string): grpc.MethodDefinition<Buffer, Buffer> => ({
  path: `/test.Daemon/${name}`,
  requestStream: false,
  responseStream: false,
  requestSerialize: raw,
  requestDeserialize: raw,
  responseSerialize: raw,
  responseDeserialize: raw,
});
const METHODS = ['Echo', 'Fail', 'Empty', 'Big', 'Throw', 'Slow', 'Hang'] as const;
const definition = Object.fromEntries(METHODS.map((m) => [m, method(m)])) as grpc.ServiceDefinition;

type Outcome = { ok: Buffer; code?: undefined } | { code: number; details: string };

describe('LocalChannel: unary gRPC over a unix socket, as grpc-js would', () => {
  let dir: string;
  let socket: string;
  let server: grpc.Server | undefined;
  let channel: LocalChannel;
  let reference: grpc.Client;
  const deadlines: number[] = [];

  async function serve(): Promise<void> {
    const s = new grpc.Server();
    s.addService(definition, {
      Echo: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) =>
        cb(null, Buffer.concat([Buffer.from(`${call.metadata.get('bronze-role').join(',')}|`), call.request])),
      Fail: (_call: unknown, cb: grpc.sendUnaryData<Buffer>) => cb({ code: grpc.status.FAILED_PRECONDITION, details: 'naïve: 100% not ready, "quoted"\nand a second line' }),
      Empty: (_call: unknown, cb: grpc.sendUnaryData<Buffer>) => cb(null, Buffer.alloc(0)),
      Big: (_call: unknown, cb: grpc.sendUnaryData<Buffer>) => cb(null, Buffer.alloc(MAX_RECEIVE_MESSAGE_BYTES + 1)),
      Throw: () => {
        throw new Error('handler blew up');
      },
      Slow: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
        deadlines.push(Number(call.getDeadline()));
        setTimeout(() => cb(null, Buffer.from('late')), 1000);
      },
      Hang: () => {},
    });
    await new Promise<void>((resolve, reject) => s.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
    server = s;
  }

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-apid-local-'));
    socket = path.join(dir, 'daemon.sock');
    await serve();
    channel = new LocalChannel(socket);
    reference = new grpc.Client(`unix:${socket}`, grpc.credentials.createInsecure());
  });

  afterAll(() => {
    channel?.close();
    reference?.close();
    server?.forceShutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const viaChannel = (name: string, body = Buffer.from('hi'), deadline = Infinity): Promise<Outcome> =>
    channel.unary(`/test.Daemon/${name}`, body, { 'bronze-role': 'os:admin' }, deadline).then(
      (ok) => ({ ok }),
      (e: { code: number; details: string }) => ({ code: e.code, details: e.details }),
    );
  const viaGrpcJs = (name: string, body = Buffer.from('hi'), deadline: grpc.Deadline = Infinity): Promise<Outcome> =>
    new Promise((resolve) => {
      const md = new grpc.Metadata();
      md.set('bronze-role', 'os:admin');
      reference.makeUnaryRequest(`/test.Daemon/${name}`, raw, raw, body, md, { deadline }, (e, r) => resolve(e ? { code: e.code, details: e.details } : { ok: r! }));
    });

  it('relays the request and the reply as raw bytes, with the metadata', async () => {
    const body = Buffer.from([0, 1, 2, 255, 0x0a]);
    expect(await viaChannel('Echo', body)).toEqual({ ok: Buffer.concat([Buffer.from('os:admin|'), body]) });
    expect(await viaChannel('Empty')).toEqual({ ok: Buffer.alloc(0) });
    // many at once on the one connection
    const many = await Promise.all(Array.from({ length: 200 }, (_, i) => viaChannel('Echo', Buffer.from(String(i)))));
    expect(many.map((o) => ('ok' in o ? o.ok.toString() : o.details))).toEqual(Array.from({ length: 200 }, (_, i) => `os:admin|${i}`));
  });

  it('gives the same outcome as a grpc-js client for errors', async () => {
    for (const name of ['Fail', 'Throw', 'Big', 'Nope']) {
      const got = await viaChannel(name);
      expect(got, name).toEqual(await viaGrpcJs(name));
      expect('code' in got && got.code, name).not.toBe(grpc.status.OK);
    }
    expect(await viaChannel('Fail')).toEqual({ code: grpc.status.FAILED_PRECONDITION, details: 'naïve: 100% not ready, "quoted"\nand a second line' });
  });

  it('ends a call at its deadline, which the daemon also sees', async () => {
    const t = Date.now();
    const got = await viaChannel('Slow', Buffer.from('x'), Date.now() + 200);
    expect(got).toMatchObject({ code: grpc.status.DEADLINE_EXCEEDED });
    expect(Date.now() - t).toBeLessThan(900);
    expect(deadlines.at(-1)).toBeGreaterThan(t);
    expect(deadlines.at(-1)).toBeLessThan(t + 1000);
    expect((await viaGrpcJs('Slow', Buffer.from('x'), Date.now() + 200)).code).toBe(grpc.status.DEADLINE_EXCEEDED);
  });

  it('is UNAVAILABLE while the daemon is down, and reconnects once it is back', async () => {
    server!.forceShutdown();
    await new Promise((r) => setTimeout(r, 50));
    fs.rmSync(socket, { force: true });
    const down = await viaChannel('Echo');
    expect(down).toMatchObject({ code: grpc.status.UNAVAILABLE, details: expect.stringMatching(/ENOENT/) });
    expect((await viaGrpcJs('Echo')).code).toBe(grpc.status.UNAVAILABLE);
    await serve();
    expect(await viaChannel('Echo', Buffer.from('again'))).toEqual({ ok: Buffer.from('os:admin|again') });
  });

  it('is UNAVAILABLE when the daemon goes away during a call', async () => {
    // (grpc-js says CANCELLED when the server closes with GOAWAY(CANCEL), as if the caller had
    // cancelled; a gateway says what happened: the daemon is unavailable, try again.)
    const call = viaChannel('Hang');
    await new Promise((r) => setTimeout(r, 100));
    server!.forceShutdown();
    expect(await call).toMatchObject({ code: grpc.status.UNAVAILABLE, details: expect.stringMatching(/^Connection dropped/) });
    await serve();
    expect(await viaChannel('Echo', Buffer.from('back'))).toEqual({ ok: Buffer.from('os:admin|back') });
  });

  it('refuses calls once closed', async () => {
    const c = new LocalChannel(socket);
    expect(await c.unary('/test.Daemon/Echo', Buffer.from('a'), {}, Infinity)).toEqual(Buffer.from('|a'));
    c.close();
    await expect(c.unary('/test.Daemon/Echo', Buffer.from('a'), {}, Infinity)).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
  });
});
