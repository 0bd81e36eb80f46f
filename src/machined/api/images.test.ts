import { EventEmitter } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { describe, expect, it } from 'vitest';
import { MemoryWorkloads } from '../../containerd/testing.ts';
import { RegistryError } from '../../containerd/registry.ts';
import { serviceClient } from '../../contract/protos.ts';
import { DefinitionRegistry } from '../../contract/resources/registry.ts';
import { MemoryState } from '../../state/memory.ts';
import { Supervisor } from '../supervisor/supervisor.ts';
import { EventBus } from './events.ts';
import { startMachinedApi } from './server.ts';
import { imageHandlers, imageNamespace, layerId, pinnedName } from './images.ts';
import { callStream, callUnary, collect } from './testing.ts';

const CRI = { driver: 'CRI', namespace: 'NS_CRI' };
const SYSTEM = { driver: 'CONTAINERD', namespace: 'NS_SYSTEM' };
const DIGEST = `sha256:${'ab'.repeat(32)}`;

function setup() {
  const w = new MemoryWorkloads();
  return { w, h: imageHandlers({ workloads: () => w }) };
}

/** Runs the Import handler on a client stream of `messages`; resolves with the reply or rejects with { code, message }. */
function callImport(handler: unknown, messages: unknown[]): Promise<any> {
  const call = Object.assign(new EventEmitter(), {
    paused: false,
    pause() {
      this.paused = true;
    },
    resume() {
      this.paused = false;
    },
  });
  return new Promise((resolve, reject) => {
    (handler as grpc.handleClientStreamingCall<any, any>)(call as unknown as grpc.ServerReadableStream<any, any>, (err, reply) => {
      if (err) reject({ code: (err as grpc.ServiceError).code, message: (err as Error).message });
      else resolve(reply);
    });
    void (async () => {
      for (const m of messages) {
        call.emit('data', m);
        while (call.paused) await new Promise((r) => setImmediate(r));
      }
      call.emit('end');
    })();
  });
}

describe('imageNamespace', () => {
  it("NS_CRI is Bronze's containers' namespace, NS_SYSTEM containerd's system; Talos's refusals", () => {
    expect(imageNamespace(CRI)).toBe('taloscontainers');
    expect(imageNamespace(SYSTEM)).toBe('system');
    expect(imageNamespace({ driver: 'CRI', namespace: 'NS_SYSTEM' })).toBe('system');
    expect(() => imageNamespace({ driver: 'CONTAINERD', namespace: 'NS_CRI' })).toThrow('cannot use CRI namespace with containerd driver');
    expect(() => imageNamespace(null)).toThrow('invalid containerd namespace "NS_UNKNOWN"');
    expect(() => imageNamespace({ driver: 7, namespace: 'NS_SYSTEM' })).toThrow('invalid containerd driver');
  });
});

describe('layerId and pinnedName', () => {
  it("as Talos: 12 hex digits; the name pinned to the digest, tag dropped, registry port kept", () => {
    expect(layerId(DIGEST)).toBe('abababababab');
    const img = { name: '10.0.2.2:5000/busybox:1', digest: DIGEST, size: 1, createdAt: new Date(0) };
    expect(pinnedName('10.0.2.2:5000/busybox:1', img)).toBe(`10.0.2.2:5000/busybox@${DIGEST}`);
    expect(pinnedName('10.0.2.2:5000/busybox', { ...img, name: '10.0.2.2:5000/busybox' })).toBe(`10.0.2.2:5000/busybox@${DIGEST}`);
    expect(pinnedName(`busybox@${DIGEST}`, { ...img, name: `docker.io/library/busybox@${DIGEST}` })).toBe(`docker.io/library/busybox@${DIGEST}`);
  });
});

describe('List', () => {
  it('one message per image of the namespace, sorted by name', async () => {
    const { w, h } = setup();
    w.addImage('taloscontainers', { name: 'b:1', digest: DIGEST, size: 2048, createdAt: new Date(1_700_000_000_500) });
    w.addImage('taloscontainers', { name: 'a:1' });
    w.addImage('system', { name: 'sys:1' });
    const msgs = await collect(h.List, { containerd: CRI });
    expect(msgs.map((m) => m.name)).toEqual(['a:1', 'b:1']);
    expect(msgs[1]).toEqual({ name: 'b:1', digest: DIGEST, size: 2048, created_at: { seconds: 1_700_000_000, nanos: 500_000_000 }, labels: {} });
    expect((await collect(h.List, { containerd: SYSTEM })).map((m) => m.name)).toEqual(['sys:1']);
  });

  it('no runtime yet → UNAVAILABLE; bad instance → INVALID_ARGUMENT', async () => {
    const none = imageHandlers({ workloads: () => undefined });
    await expect(collect(none.List, { containerd: CRI })).rejects.toEqual({ code: 14, message: 'containerd is not running yet' });
    await expect(collect(setup().h.List, {})).rejects.toMatchObject({ code: 3 });
  });
});

describe('Pull', () => {
  it("progress per layer, then the image's pinned name", async () => {
    const { w, h } = setup();
    w.pulls.set('10.0.2.2:5000/busybox:1', {
      digest: DIGEST,
      steps: [
        { digest: '', offset: 0, total: 0, done: false },
        { digest: `sha256:${'1'.repeat(64)}`, offset: 100, total: 1000, done: false },
        { digest: `sha256:${'1'.repeat(64)}`, offset: 1000, total: 1000, done: true },
      ],
    });
    const msgs = await collect(h.Pull, { containerd: CRI, image_ref: '10.0.2.2:5000/busybox:1' });
    const progress = msgs.filter((m) => m.pull_progress).map((m) => m.pull_progress);
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.every((p) => p.layer_id === '111111111111')).toBe(true);
    expect(progress.at(-1).progress).toMatchObject({ status: 'DOWNLOAD_COMPLETE', offset: 1000, total: 1000 });
    expect(msgs.at(-1)).toEqual({ name: `10.0.2.2:5000/busybox@${DIGEST}` });
    expect(w.calls).toContain('pullImage taloscontainers 10.0.2.2:5000/busybox:1');
    expect(await w.listImages('taloscontainers')).toHaveLength(1);
  });

  it("a pull failing answers the runtime's code; no ref → INVALID_ARGUMENT", async () => {
    const { w, h } = setup();
    w.pulls.set('nope:1', { fail: Object.assign(new Error('nope:1: not found'), { code: 5 }) });
    const pull = h.Pull;
    await expect(collect(pull, { containerd: CRI, image_ref: 'nope:1' })).rejects.toEqual({ code: 5, message: 'nope:1: not found' });
    await expect(collect(pull, { containerd: CRI, image_ref: ' ' })).rejects.toEqual({ code: 3, message: 'image reference is required' });
  });

  it("a registry's failure answers its kind's status, not INTERNAL", async () => {
    const { w, h } = setup();
    w.pulls.set('private:1', { fail: new RegistryError('auth', 'pulling private:1: unauthorized') });
    w.pulls.set('gone:1', { fail: new RegistryError('not-found', 'image gone:1 not found in registry r') });
    w.pulls.set('far:1', { fail: new Error('pull failed', { cause: new RegistryError('unreachable', 'r: connection refused') }) });
    await expect(collect(h.Pull, { containerd: CRI, image_ref: 'private:1' })).rejects.toEqual({ code: 7, message: 'pulling private:1: unauthorized' });
    await expect(collect(h.Pull, { containerd: CRI, image_ref: 'gone:1' })).rejects.toEqual({ code: 5, message: 'image gone:1 not found in registry r' });
    await expect(collect(h.Pull, { containerd: CRI, image_ref: 'far:1' })).rejects.toEqual({ code: 14, message: 'pull failed' });
  });

  it('the client going away mid-pull ends the stream quietly', async () => {
    const { w, h } = setup();
    const steps = Array.from({ length: 50 }, (_, i) => ({ digest: DIGEST, offset: i, total: 50, done: i === 49 }));
    w.pulls.set('big:1', { steps });
    const s = callStream(h.Pull, { containerd: CRI, image_ref: 'big:1' });
    await s.waitFor(1);
    s.cancel();
    await s.done;
    expect(s.error).toBeUndefined();
  });
});

describe('Import', () => {
  it('the instance first, then the archive in chunks; answers the first image name', async () => {
    const { w, h } = setup();
    w.importNames = ['10.0.2.2:5000/busybox:1', 'other:2'];
    const reply = await callImport(h.Import, [{ request: 'containerd', containerd: CRI }, { request: 'image_chunk', image_chunk: { bytes: Buffer.from('abc') } }, { request: 'image_chunk', image_chunk: { bytes: Buffer.from('def') } }]);
    expect(reply).toEqual({ name: '10.0.2.2:5000/busybox:1' });
    expect(w.imported.map(String)).toEqual(['abcdef']);
    expect(w.calls).toContain('importImage taloscontainers');
  });

  it('refuses a stream without the instance first, a second instance, an archive with no image', async () => {
    const { w, h } = setup();
    await expect(callImport(h.Import, [{ request: 'image_chunk', image_chunk: { bytes: Buffer.from('x') } }])).rejects.toMatchObject({ code: 3, message: expect.stringContaining('containerd instance is required') });
    await expect(callImport(h.Import, [{ request: 'containerd', containerd: CRI }, { request: 'containerd', containerd: CRI }])).rejects.toMatchObject({ code: 3, message: expect.stringContaining('image chunk') });
    w.importNames = [];
    await expect(callImport(h.Import, [{ request: 'containerd', containerd: CRI }])).rejects.toEqual({ code: 3, message: 'no images imported from archive' });
  });

  it("the runtime's error keeps its status through a wrapper (cause)", async () => {
    const { w, h } = setup();
    w.importImage = async () => {
      throw new Error('importing the archive failed', { cause: Object.assign(new Error('content digest mismatch'), { code: 9 }) });
    };
    await expect(callImport(h.Import, [{ request: 'containerd', containerd: CRI }])).rejects.toEqual({ code: 9, message: 'importing the archive failed' });
  });

  it('no runtime yet → UNAVAILABLE', async () => {
    await expect(callImport(imageHandlers({ workloads: () => undefined }).Import, [{ request: 'containerd', containerd: CRI }])).rejects.toEqual({ code: 14, message: 'containerd is not running yet' });
  });
});

describe('Remove and Verify', () => {
  it('removes an image; an unknown one → NOT_FOUND naming it', async () => {
    const { w, h } = setup();
    w.addImage('taloscontainers', { name: 'a:1' });
    const remove = h.Remove;
    expect(await callUnary(remove, { containerd: CRI, image_ref: 'a:1' })).toEqual({});
    expect(await w.listImages('taloscontainers')).toEqual([]);
    await expect(callUnary(remove, { containerd: CRI, image_ref: 'a:1' })).rejects.toEqual({ code: 5, message: 'image a:1 not found' });
  });

  it('Verify: no rules on Bronze, so nothing is verified', async () => {
    const { h } = setup();
    expect(await callUnary(h.Verify, { image_ref: 'a:1' })).toMatchObject({ verified: false });
  });
});

describe("machined's API server", () => {
  it('serves machine.ImageService and the container calls over its socket, Import as a client stream', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-images-'));
    const w = new MemoryWorkloads();
    let up = false;
    const api = await startMachinedApi({
      supervisor: new Supervisor([]),
      log: { lines: () => [], follow: () => () => {} },
      events: new EventBus(),
      state: new MemoryState(),
      registry: new DefinitionRegistry(),
      requestSequence: () => {},
      socket: path.join(dir, 'machined.sock'),
      workloads: () => (up ? w : undefined),
    });
    const creds = grpc.credentials.createInsecure();
    const images = new (serviceClient('machine.ImageService'))(`unix:${api.socket}`, creds) as any;
    const machine = new (serviceClient('machine.MachineService'))(`unix:${api.socket}`, creds) as any;
    const unaryCall = (c: any, m: string, req: object) => new Promise<any>((resolve, reject) => c[m](req, (e: unknown, r: unknown) => (e ? reject(e) : resolve(r))));
    try {
      await expect(unaryCall(machine, 'Containers', { namespace: 'taloscontainers' })).rejects.toMatchObject({ code: 14, details: 'containerd is not running yet' });
      up = true;
      const reply = await new Promise<any>((resolve, reject) => {
        const call = images.Import((e: unknown, r: unknown) => (e ? reject(e) : resolve(r)));
        call.write({ containerd: CRI });
        call.write({ image_chunk: { bytes: Buffer.from('oci-') } });
        call.write({ image_chunk: { bytes: Buffer.from('archive') } });
        call.end();
      });
      expect(reply).toEqual({ name: 'import/image:1' });
      expect(w.imported.map(String)).toEqual(['oci-archive']);
      const listed: any[] = await new Promise((resolve, reject) => {
        const out: any[] = [];
        const call = images.List({ containerd: CRI });
        call.on('data', (m: any) => out.push(m));
        call.on('error', reject);
        call.on('end', () => resolve(out));
      });
      expect(listed.map((m) => m.name)).toEqual(['import/image:1']);
      w.addContainer('taloscontainers', { id: 'web', image: 'import/image:1' });
      expect((await unaryCall(machine, 'Containers', { namespace: 'taloscontainers' })).messages[0].containers[0]).toMatchObject({ id: 'web', status: 'RUNNING' });
      expect(await unaryCall(machine, 'Restart', { namespace: 'taloscontainers', id: 'web' })).toMatchObject({ messages: [{}] });
    } finally {
      images.close();
      machine.close();
      await api.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
