// The install/upgrade/reset/rollback handlers through a real grpc-js server on a temporary
// unix socket, with a fake Lifecycle that records what it was asked and reads uploads to the
// end (sha256). What must hold: the upload arrives whole and in order as an AsyncIterable,
// progress comes back as Progress messages, the stream ends (or the reply is sent) before the
// reboot is asked for, errors keep their status and never reboot, a client's cancel aborts the
// Lifecycle's signal, and bad requests are refused before the Lifecycle is called.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { serviceClient, serviceDefinition } from '../../contract/protos.ts';
import { ApiError } from './common.ts';
import { type InstallOptions, type Lifecycle, type ProgressEvent, type RepairOptions, type ResetOptions, type UpgradeOptions, lifecycleHandlers } from './lifecycle.ts';

type Progress = { metadata: unknown; stage: string; message: string; done: string; total: string };
type AnyClient = grpc.Client & Record<string, (...args: any[]) => any>;

const MiB = 1 << 20;
/** An upload of this size is refused by FakeLifecycle after its first chunk. */
const REFUSED_SIZE = 64 * MiB;

class FakeLifecycle implements Lifecycle {
  readonly log: string[] = [];
  upgrades: Array<{ o: UpgradeOptions; size: number; uploaded: boolean; bytes: number; sha256: string; aborted: boolean }> = [];
  installs: InstallOptions[] = [];
  reboots: Array<{ reason: string; actorId: string }> = [];
  resets: Array<{ o: ResetOptions; actorId: string }> = [];
  rollbacks: string[] = [];
  /** Resolves the next time the Lifecycle's signal aborts. */
  aborted: Promise<void> = Promise.resolve();
  failRollback = false;
  /** checkRollback's refusal, before the reply (undefined: none). */
  refuseRollback: string | undefined;

  async checkRollback(): Promise<void> {
    if (this.refuseRollback) throw new ApiError(grpc.status.FAILED_PRECONDITION, this.refuseRollback);
  }

  async upgrade(o: UpgradeOptions, upload: AsyncIterable<Buffer> | undefined, size: number, progress: (p: ProgressEvent) => void, signal: AbortSignal): Promise<void> {
    const rec = { o, size, uploaded: !!upload, bytes: 0, sha256: '', aborted: false };
    this.upgrades.push(rec);
    let over = false; // the signal also aborts once the stream is over
    signal.addEventListener('abort', () => (rec.aborted ||= !over));
    if (o.image.endsWith('/unsigned')) throw new ApiError(grpc.status.INVALID_ARGUMENT, 'upgrade image refused, nothing was written: no signature');
    if (o.image.endsWith('/hang')) {
      progress({ stage: 'download', message: o.image });
      await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
      throw new ApiError(grpc.status.CANCELLED, 'upgrade cancelled, nothing was written');
    }
    if (upload && o.image === '' && size === REFUSED_SIZE) {
      // Like the image verifier: a reader pulls in the background, and the header already
      // says no while that reader waits for the next chunk.
      const reading = (async () => {
        for await (const chunk of upload) rec.bytes += chunk.length;
      })().catch(() => {});
      await new Promise((r) => setTimeout(r, 50));
      void reading;
      // A last progress message still being written when the call ends with the error.
      progress({ stage: 'receive', message: 'upload', done: rec.bytes, total: size });
      throw new ApiError(grpc.status.INVALID_ARGUMENT, 'upgrade image refused, nothing was written: not a Bronze upgrade image');
    }
    if (upload) {
      const hash = crypto.createHash('sha256');
      progress({ stage: 'receive', message: 'upload', done: 0, total: size });
      for await (const chunk of upload) {
        hash.update(chunk);
        rec.bytes += chunk.length;
        if (rec.bytes % (2 * MiB) === 0) progress({ stage: 'receive', message: 'upload', done: rec.bytes, total: size });
      }
      rec.sha256 = hash.digest('hex');
    } else {
      progress({ stage: 'download', message: o.image, done: 10, total: 10 });
    }
    progress({ stage: 'verify', message: 'signature and checksums good' });
    progress({ stage: 'write', message: 'slot B', done: 1, total: 1 });
    over = true;
    this.log.push('upgrade done');
  }

  async install(o: InstallOptions, progress: (p: ProgressEvent) => void): Promise<void> {
    this.installs.push(o);
    if (o.disk === '/dev/vda') throw new ApiError(grpc.status.FAILED_PRECONDITION, '/dev/vda holds data: install with wipe to overwrite it');
    for (const stage of ['partition', 'format', 'write', 'bootloader']) progress({ stage, message: o.disk });
    this.log.push('install done');
  }

  repairs: RepairOptions[] = [];
  async repair(o: RepairOptions, progress: (p: ProgressEvent) => void): Promise<void> {
    this.repairs.push(o);
    if (o.labels.includes('EPHEMERAL')) throw new ApiError(grpc.status.DATA_LOSS, 'repair of EPHEMERAL failed: xfs_repair exited with 1');
    progress({ stage: 'repair', message: 'STATE: Phase 1 - find and verify superblock...' });
    progress({ stage: 'verify', message: 'STATE mounts again' });
  }

  reboot(reason: string, actorId: string): void {
    this.reboots.push({ reason, actorId });
    this.log.push(`reboot: ${reason}`);
  }

  async reset(o: ResetOptions, actorId: string): Promise<void> {
    this.resets.push({ o, actorId });
    this.log.push('reset');
  }

  async rollback(actorId: string): Promise<void> {
    this.rollbacks.push(actorId);
    this.log.push('rollback');
    if (this.failRollback) throw new ApiError(grpc.status.FAILED_PRECONDITION, 'cannot roll back: slot A holds no image');
  }
}

/** The handlers' wait between a reply and the hand-over: long enough for a loaded machine's client to see the reply first. */
const AFTER_REPLY_MS = 250;

describe('lifecycle API handlers', () => {
  let dir: string;
  let server: grpc.Server;
  let bare: grpc.Server;
  let client: AnyClient;
  let none: AnyClient;
  let lc: FakeLifecycle;
  const errors: unknown[] = [];

  async function serve(lifecycle: Lifecycle | undefined, socket: string): Promise<grpc.Server> {
    const s = new grpc.Server();
    s.addService(serviceDefinition('machine.MachineService'), lifecycleHandlers({ get lifecycle() { return lifecycle === undefined ? undefined : lc; }, afterReplyMs: AFTER_REPLY_MS, onError: (e) => errors.push(e) }));
    await new Promise<void>((resolve, reject) => s.bindAsync(`unix:${socket}`, grpc.ServerCredentials.createInsecure(), (e) => (e ? reject(e) : resolve())));
    return s;
  }

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-lifecycle-api-'));
    lc = new FakeLifecycle();
    server = await serve(lc, path.join(dir, 'machined.sock'));
    bare = await serve(undefined, path.join(dir, 'bare.sock'));
    const Machine = serviceClient('machine.MachineService');
    client = new Machine(`unix:${path.join(dir, 'machined.sock')}`, grpc.credentials.createInsecure()) as unknown as AnyClient;
    none = new Machine(`unix:${path.join(dir, 'bare.sock')}`, grpc.credentials.createInsecure()) as unknown as AnyClient;
  });

  beforeEach(() => {
    lc = new FakeLifecycle();
    errors.length = 0;
  });

  afterAll(() => {
    client?.close();
    none?.close();
    server?.forceShutdown();
    bare?.forceShutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  function unary<T = any>(c: AnyClient, method: string, req: object): Promise<T> {
    return new Promise((resolve, reject) => c[method]!(req, (err: grpc.ServiceError | null, res: T) => (err ? reject(err) : resolve(res))));
  }

  /** Drives an UpgradeStream: the first message, then `data` in chunks; resolves with the progress, or rejects. */
  function upgradeStream(first: object, data?: Buffer, chunk = MiB, opts: { endEarlyAt?: number } = {}): Promise<{ progress: Progress[]; endedAt: number }> {
    return new Promise((resolve, reject) => {
      const call = client.UpgradeStream!() as grpc.ClientDuplexStream<object, Progress>;
      const progress: Progress[] = [];
      call.on('data', (m: Progress) => progress.push(m));
      call.on('error', reject);
      call.on('end', () => resolve({ progress, endedAt: Date.now() }));
      void (async () => {
        call.write(first);
        const stop = opts.endEarlyAt ?? data?.length ?? 0;
        for (let off = 0; data && off < stop; off += chunk) {
          if (!call.write({ chunk: data.subarray(off, Math.min(stop, off + chunk)) })) await new Promise((r) => call.once('drain', r));
        }
        call.end();
      })();
    });
  }

  async function until(what: string, ok: () => boolean, ms = 2000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!ok()) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  }

  describe('UpgradeStream', () => {
    it('hands the upload to the Lifecycle intact, streams progress, ends, and only then reboots', async () => {
      const data = crypto.randomBytes(6 * MiB + 12345);
      const { progress, endedAt } = await upgradeStream({ request: { image: '', preserve: true, force: true }, size: data.length }, data);
      expect(lc.upgrades).toHaveLength(1);
      expect(lc.upgrades[0]).toMatchObject({ o: { image: '', preserve: true, stage: false, force: true }, size: data.length, uploaded: true, bytes: data.length, aborted: false });
      expect(lc.upgrades[0]!.sha256).toBe(crypto.createHash('sha256').update(data).digest('hex'));
      expect(progress.map((p) => p.stage)).toEqual(['receive', 'receive', 'receive', 'receive', 'verify', 'write', 'reboot']);
      expect(progress[1]).toMatchObject({ stage: 'receive', done: String(2 * MiB), total: String(data.length), metadata: null });
      expect(lc.reboots).toEqual([]); // not yet: the stream has just ended
      await until('the reboot', () => lc.reboots.length > 0);
      const actorId = lc.reboots[0]!.actorId;
      expect(lc.reboots).toEqual([{ reason: 'API Upgrade request', actorId }]);
      expect(progress.at(-1)!.message).toBe(`upgrade done: rebooting (actor id ${actorId})`);
      expect(Date.now()).toBeGreaterThanOrEqual(endedAt);
      expect(lc.log).toEqual(['upgrade done', 'reboot: API Upgrade request']);
    });

    it('passes a URL on without an upload', async () => {
      const { progress } = await upgradeStream({ request: { image: 'https://images.example/bronze-upgrade.tar', stage: true } });
      expect(lc.upgrades[0]).toMatchObject({ o: { image: 'https://images.example/bronze-upgrade.tar', stage: true }, size: 0, uploaded: false });
      expect(progress.map((p) => p.stage)).toEqual(['download', 'verify', 'write', 'reboot']);
      await until('the reboot', () => lc.reboots.length > 0);
    });

    it('refuses malformed requests before the Lifecycle sees them', async () => {
      const cases: Array<[object, RegExp]> = [
        [{ size: 10 }, /^the first message must carry the upgrade request$/],
        [{ request: { image: '/tmp/bronze.tar' } }, /"\/tmp\/bronze.tar" is not an http:\/\/ or https:\/\/ URL/],
        [{ request: { image: '' } }, /^no image: give a URL in request.image, or the size of the image/],
      ];
      for (const [first, re] of cases) {
        await expect(upgradeStream(first)).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: expect.stringMatching(re) });
      }
      expect(lc.upgrades).toEqual([]);
    });

    it('an upload shorter or longer than announced is INVALID_ARGUMENT, and nothing reboots', async () => {
      const data = crypto.randomBytes(3 * MiB);
      await expect(upgradeStream({ request: {}, size: data.length }, data, MiB, { endEarlyAt: 2 * MiB })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: `the upload ended after ${2 * MiB} of the ${3 * MiB} bytes announced`,
      });
      await expect(upgradeStream({ request: {}, size: 100 }, data)).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'the client sent more than the 100 bytes it announced',
      });
      await new Promise((r) => setTimeout(r, AFTER_REPLY_MS + 100));
      expect(lc.reboots).toEqual([]);
    });

    it('a Lifecycle error ends the stream with its status; nothing reboots', async () => {
      await expect(upgradeStream({ request: { image: 'http://x/unsigned' } })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'upgrade image refused, nothing was written: no signature',
      });
      await new Promise((r) => setTimeout(r, AFTER_REPLY_MS + 100));
      expect(lc.reboots).toEqual([]);
    });

    it('a refusal while the client is still sending ends the call with its status (no hang)', async () => {
      const data = Buffer.alloc(REFUSED_SIZE, 0x5a);
      await expect(upgradeStream({ request: {}, size: data.length }, data)).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'upgrade image refused, nothing was written: not a Bronze upgrade image',
      });
      expect(lc.upgrades[0]!.bytes).toBeLessThan(REFUSED_SIZE);
      await new Promise((r) => setTimeout(r, AFTER_REPLY_MS + 100));
      expect(lc.reboots).toEqual([]);
    }, 20_000);

    it('a client that cancels aborts the Lifecycle\'s signal', async () => {
      const call = client.UpgradeStream!() as grpc.ClientDuplexStream<object, Progress>;
      call.on('error', () => {});
      const first = new Promise((r) => call.once('data', r));
      call.write({ request: { image: 'https://x/hang' } });
      await first;
      call.cancel();
      await until('the abort', () => lc.upgrades[0]?.aborted === true);
      await new Promise((r) => setTimeout(r, AFTER_REPLY_MS + 100));
      expect(lc.reboots).toEqual([]);
    });
  });

  describe('Install', () => {
    it('streams the stages, ends, then reboots', async () => {
      const progress = await new Promise<Progress[]>((resolve, reject) => {
        const out: Progress[] = [];
        const s = client.Install!({ disk: '/dev/sdb', wipe: true, extra_kernel_args: ['console=ttyS0'] }) as grpc.ClientReadableStream<Progress>;
        s.on('data', (m: Progress) => out.push(m));
        s.on('error', reject);
        s.on('end', () => resolve(out));
      });
      expect(lc.installs).toEqual([{ disk: '/dev/sdb', wipe: true, image: '', extraKernelArgs: ['console=ttyS0'] }]);
      expect(progress.map((p) => p.stage)).toEqual(['partition', 'format', 'write', 'bootloader', 'reboot']);
      await until('the reboot', () => lc.reboots.length > 0);
      expect(lc.reboots[0]!.reason).toBe('API Install request');
      expect(progress.at(-1)!.message).toContain(lc.reboots[0]!.actorId);
    });

    it('refuses a missing disk or a non-URL image; passes the Lifecycle\'s refusal on', async () => {
      const err = (req: object) =>
        new Promise<grpc.ServiceError>((resolve) => {
          const s = client.Install!(req) as grpc.ClientReadableStream<Progress>;
          s.on('data', () => {});
          s.on('error', resolve);
          s.on('end', () => resolve(new Error('ended without an error') as grpc.ServiceError));
        });
      expect(await err({})).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: 'install needs the disk to install to (e.g. /dev/vda)' });
      expect(await err({ disk: '/dev/sdb', image: 'ftp://x' })).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: expect.stringContaining('"ftp://x" is not an http:// or https:// URL') });
      expect(lc.installs).toEqual([]);
      expect(await err({ disk: '/dev/vda' })).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, details: '/dev/vda holds data: install with wipe to overwrite it' });
      await new Promise((r) => setTimeout(r, AFTER_REPLY_MS + 100));
      expect(lc.reboots).toEqual([]);
    });
  });

  describe('Repair', () => {
    const run = (req: object) =>
      new Promise<{ progress: Progress[]; error?: grpc.ServiceError }>((resolve) => {
        const out: Progress[] = [];
        const s = client.Repair!(req) as grpc.ClientReadableStream<Progress>;
        s.on('data', (m: Progress) => out.push(m));
        s.on('error', (error: grpc.ServiceError) => resolve({ progress: out, error }));
        s.on('end', () => resolve({ progress: out }));
      });

    it('streams xfs_repair\'s progress, ends, then reboots', async () => {
      const r = await run({ labels: ['state'] });
      expect(r.error).toBeUndefined();
      expect(lc.repairs).toEqual([{ labels: ['STATE'], zeroLog: false }]);
      expect(r.progress.map((p) => p.stage)).toEqual(['repair', 'verify', 'reboot']);
      await until('the reboot', () => lc.reboots.length > 0);
      expect(lc.reboots[0]!.reason).toBe('API Repair request');
    });

    it('refuses no label or one that is not a system volume before the Lifecycle sees it; a failed repair keeps its status and nothing reboots', async () => {
      expect((await run({})).error).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: expect.stringContaining('name the system volumes to repair') });
      expect((await run({ labels: ['BOOT'] })).error).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: 'cannot repair BOOT: only STATE and EPHEMERAL can be repaired' });
      expect(lc.repairs).toEqual([]);
      expect((await run({ labels: ['EPHEMERAL'], zero_log: true })).error).toMatchObject({ code: grpc.status.DATA_LOSS });
      expect(lc.repairs).toEqual([{ labels: ['EPHEMERAL'], zeroLog: true }]);
      await new Promise((r) => setTimeout(r, AFTER_REPLY_MS + 100));
      expect(lc.reboots).toEqual([]);
    });
  });

  describe('Upgrade (unary, Talos-compatible)', () => {
    it('replies once the image is written, then reboots with the actor id of the reply', async () => {
      const reply = await unary(client, 'Upgrade', { image: 'https://images.example/u.tar', preserve: true });
      lc.log.push('reply');
      expect(reply.messages).toEqual([{ metadata: null, ack: 'Upgrade request received', actor_id: expect.stringMatching(/^[0-9a-f-]{36}$/) }]);
      await until('the reboot', () => lc.reboots.length > 0);
      expect(lc.log).toEqual(['upgrade done', 'reply', 'reboot: API Upgrade request']);
      expect(lc.reboots[0]!.actorId).toBe(reply.messages[0].actor_id);
      expect(lc.upgrades[0]).toMatchObject({ o: { image: 'https://images.example/u.tar', preserve: true }, uploaded: false });
    });

    it('takes URLs only, and passes the Lifecycle\'s error on without rebooting', async () => {
      await expect(unary(client, 'Upgrade', { image: 'ghcr.io/siderolabs/installer:v1.7.0' })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
      await expect(unary(client, 'Upgrade', { image: 'https://x/unsigned' })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: expect.stringMatching(/refused/) });
      await new Promise((r) => setTimeout(r, AFTER_REPLY_MS + 100));
      expect(lc.reboots).toEqual([]);
    });
  });

  describe('Reset and Rollback', () => {
    it('Reset checks the labels, replies with the actor id, then hands over', async () => {
      const reply = await unary(client, 'Reset', { graceful: true, reboot: true, system_partitions_to_wipe: [{ label: 'STATE', wipe: true }, { label: 'state' }] });
      lc.log.push('reply');
      const actorId = reply.messages[0].actor_id;
      expect(actorId).toMatch(/^[0-9a-f-]{36}$/);
      await until('the reset', () => lc.resets.length > 0);
      expect(lc.resets).toEqual([{ o: { graceful: true, reboot: true, labels: ['STATE'] }, actorId }]);
      expect(lc.log).toEqual(['reply', 'reset']);
      // nothing named: the Lifecycle's default (STATE and EPHEMERAL)
      await unary(client, 'Reset', {});
      await until('the second reset', () => lc.resets.length > 1);
      expect(lc.resets[1]!.o).toEqual({ graceful: false, reboot: false, labels: [] });
    });

    it('Reset refuses what cannot be wiped, naming it, before replying', async () => {
      await expect(unary(client, 'Reset', { system_partitions_to_wipe: [{ label: 'EPHEMERAL' }, { label: 'META' }, { label: 'BOOT' }] })).rejects.toMatchObject({
        code: grpc.status.INVALID_ARGUMENT,
        details: 'cannot wipe META, BOOT: only STATE and EPHEMERAL can be wiped',
      });
      await expect(unary(client, 'Reset', { user_disks_to_wipe: ['/dev/sdc'] })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, details: expect.stringContaining('/dev/sdc') });
      await new Promise((r) => setTimeout(r, AFTER_REPLY_MS + 100));
      expect(lc.resets).toEqual([]);
    });

    it('Rollback replies, then hands over; a failure after the reply goes to onError', async () => {
      lc.failRollback = true;
      const reply = await unary(client, 'Rollback', {});
      expect(reply.messages).toEqual([{ metadata: null }]);
      await until('the rollback', () => lc.rollbacks.length > 0 && errors.length > 0);
      expect(lc.rollbacks[0]).toMatch(/^[0-9a-f-]{36}$/);
      expect((errors[0] as Error).message).toBe('cannot roll back: slot A holds no image');
    });
  });

  it('Rollback passes checkRollback\'s refusal to the caller, before anything is handed over', async () => {
    lc.refuseRollback = 'cannot roll back: slot B holds no image';
    await expect(unary(client, 'Rollback', {})).rejects.toMatchObject({ code: grpc.status.FAILED_PRECONDITION, details: 'cannot roll back: slot B holds no image' });
    await new Promise((r) => setTimeout(r, AFTER_REPLY_MS + 100));
    expect(lc.rollbacks).toEqual([]);
  });

  it('without a Lifecycle every one of them is UNAVAILABLE', async () => {
    const msg = { code: grpc.status.UNAVAILABLE, details: 'this node cannot install or upgrade' };
    await expect(unary(none, 'Upgrade', { image: 'https://x/y' })).rejects.toMatchObject(msg);
    await expect(unary(none, 'Reset', {})).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE, details: 'this node cannot reset or roll back' });
    await expect(unary(none, 'Rollback', {})).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE, details: 'this node cannot reset or roll back' });
    const streamErr = (s: grpc.ClientReadableStream<unknown>) => new Promise<grpc.ServiceError>((resolve) => s.on('error', resolve));
    expect(await streamErr(none.Install!({ disk: '/dev/sdb' }))).toMatchObject(msg);
    const bidi = none.UpgradeStream!() as grpc.ClientDuplexStream<object, unknown>;
    const e = streamErr(bidi);
    bidi.write({ request: { image: 'https://x/y' } });
    bidi.end();
    expect(await e).toMatchObject(msg);
  });
});
