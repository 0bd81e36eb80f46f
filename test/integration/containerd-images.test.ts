// Image pull, import, list and remove against real daemons started here: Debian's containerd
// (its own temp root and socket, CRI off) and Debian's docker-registry on loopback, serving a
// busybox image built by test/fixtures/busybox-image.ts; a fault proxy in front of the registry
// drops, stalls and corrupts blobs. Needs root (containerd mounts overlays to unpack).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ContainerdClient, connectContainerd } from '../../src/containerd/client.ts';
import { contentInfo } from '../../src/containerd/content.ts';
import { getImage, imageRunConfig, listImages, removeImage } from '../../src/containerd/images.ts';
import { importImage } from '../../src/containerd/import.ts';
import { pullImage } from '../../src/containerd/pull.ts';
import { RegistryError } from '../../src/containerd/registry.ts';
import type { PullProgress } from '../../src/containerd/types.ts';
import { snapshotExists } from '../../src/containerd/unpack.ts';
import { nodePlatform } from '../../src/containerd/platform.ts';
import { selfSignedServerCert } from '../../src/pki/self-signed.ts';
import { type BuiltImage, buildBusyboxImage, dockerSaveArchive, fileChunks, ociArchive, pushImage, writeOciArchive } from '../fixtures/busybox-image.ts';
import { type ContainerdDaemon, haveContainerd, startContainerd } from '../fixtures/containerd.ts';
import { type FaultProxy, startFaultProxy } from '../fixtures/fault-proxy.ts';
import { type RegistryDaemon, haveRegistry, startRegistry } from '../fixtures/registry.ts';

const NS = 'bronze-test';
const ARCH = nodePlatform().architecture;

describe.skipIf(!haveContainerd || !haveRegistry)('containerd images: pull, import, list, remove (real containerd and registry)', () => {
  let ctd: ContainerdDaemon;
  let reg: RegistryDaemon;
  let proxy: FaultProxy;
  let c: ContainerdClient;
  let img: BuiltImage;
  let multi: BuiltImage;
  let tmp: string;

  beforeAll(async () => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-images-it-'));
    [ctd, reg] = await Promise.all([startContainerd(), startRegistry()]);
    proxy = await startFaultProxy(reg.url);
    c = connectContainerd(ctd.socket);
    img = await buildBusyboxImage({ cmd: ['httpd', '-f'], env: ['PATH=/bin', 'A=1'], workingDir: '/tmp' });
    // Several repositories, so that each test pulls blobs of its own (the store is shared).
    await pushImage(img, reg.url, 'busybox', '1');
    // An index over two architectures (the foreign one a copy, labelled otherwise).
    multi = await buildBusyboxImage({ binaries: { amd64: '/bin/busybox', arm64: '/bin/busybox' }, files: { 'etc/multi': 'x\n' } });
    await pushImage(multi, reg.url, 'multi', 'v1');
  }, 60_000);

  afterAll(async () => {
    c?.close();
    await proxy?.close();
    await Promise.all([ctd?.stop(), reg?.stop()]);
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  const viaProxy = () => ({ [reg.host]: { endpoints: [`http://${proxy.host}`] } });
  const direct = () => ({ [reg.host]: { endpoints: [`http://${reg.host}`] } });

  it('pulls by tag, reporting progress, into content, snapshots and an image record', async () => {
    const progress: PullProgress[] = [];
    const r = await pullImage(c, NS, `${reg.host}/busybox:1`, { registries: direct(), onProgress: (p) => progress.push(p) });
    expect(r.name).toBe(`${reg.host}/busybox:1`);
    expect(r.digest).toBe(img.top.digest);
    expect(r.fetchedBytes).toBe(img.layers[ARCH]!.size + img.configs[ARCH]!.size);
    const layer = img.layers[ARCH]!;
    expect(progress.some((p) => p.digest === layer.digest && p.done && p.offset === layer.size)).toBe(true);
    const rec = await getImage(c, NS, r.name);
    expect(rec?.target.digest).toBe(img.top.digest);
    const run = await imageRunConfig(c, NS, `${reg.host}/busybox:1`);
    expect(run.config).toMatchObject({ Cmd: ['httpd', '-f'], Env: ['PATH=/bin', 'A=1'], WorkingDir: '/tmp' });
    expect(run.chainId).toBe(img.diffIds[ARCH]);
    expect(await snapshotExists(c, NS, 'overlayfs', run.chainId)).toBe(true);
    // The labels containerd's GC follows: manifest → config and layers, config → snapshot.
    const m = await contentInfo(c, NS, img.manifests[ARCH]!.digest);
    expect(m?.labels).toMatchObject({ 'containerd.io/gc.ref.content.config': img.configs[ARCH]!.digest, 'containerd.io/gc.ref.content.l.0': layer.digest });
    expect((await contentInfo(c, NS, img.configs[ARCH]!.digest))?.labels['containerd.io/gc.ref.snapshot.overlayfs']).toBe(run.chainId);
    expect((await contentInfo(c, NS, layer.digest))?.labels['containerd.io/uncompressed']).toBe(img.diffIds[ARCH]);
  });

  it('does not fetch a present image again', async () => {
    proxy.blobBytes = 0;
    proxy.blobRequests = [];
    proxy.manifestRequests = 0;
    const again = await pullImage(c, NS, `${reg.host}/busybox:1`, { registries: viaProxy() });
    expect(again.fetchedBytes).toBe(0);
    expect(proxy.blobRequests).toEqual([]);
    expect(proxy.manifestRequests).toBe(1); // the tag is resolved again, nothing more
    // A container start's pull does not even ask the registry.
    const offline = await pullImage(c, NS, `${reg.host}/busybox:1`, { registries: { [reg.host]: { endpoints: ['http://127.0.0.1:9'], skipFallback: true } }, policy: 'ifNotPresent' });
    expect(offline.digest).toBe(img.top.digest);
  });

  it('picks this node’s platform from an index', async () => {
    const r = await pullImage(c, NS, `${reg.host}/multi:v1`, { registries: direct() });
    expect(r.digest).toBe(multi.top.digest);
    const run = await imageRunConfig(c, NS, `${reg.host}/multi:v1`);
    expect(run.image.manifestDesc.digest).toBe(multi.manifests[ARCH]!.digest);
    const idx = await contentInfo(c, NS, multi.top.digest);
    expect(idx?.labels['containerd.io/gc.ref.content.m.0']).toBe(multi.manifests[ARCH]!.digest);
  });

  it('survives a registry that drops the connection, then one that stalls, mid-blob', async () => {
    const other = await buildBusyboxImage({ files: { 'etc/stall': 'y\n' } });
    await pushImage(other, reg.url, 'flaky', '1');
    const layer = other.layers[ARCH]!;
    proxy.faults = [
      { kind: 'drop', digest: layer.digest, times: 2 },
      { kind: 'stall', digest: layer.digest, times: 1 },
    ];
    proxy.blobRequests = [];
    try {
      const r = await pullImage(c, NS, `${reg.host}/flaky:1`, { registries: viaProxy(), stallTimeoutMs: 500 });
      expect(r.digest).toBe(other.top.digest);
    } finally {
      proxy.faults = [];
    }
    const gets = proxy.blobRequests.filter((b) => b.digest === layer.digest);
    expect(gets.length).toBe(4);
    // Resumed from where each attempt stopped, not from 0.
    expect(gets.slice(1).every((g) => g.range && /^bytes=[1-9]\d*-$/.test(g.range))).toBe(true);
    expect((await contentInfo(c, NS, layer.digest))?.size).toBe(layer.size);
    expect(await snapshotExists(c, NS, 'overlayfs', other.diffIds[ARCH]!)).toBe(true);
  });

  it('refuses a blob whose digest does not match, naming both, and creates no image', async () => {
    const bad = await buildBusyboxImage({ files: { 'etc/bad': 'z\n' } });
    await pushImage(bad, reg.url, 'bad', '1');
    const layer = bad.layers[ARCH]!;
    proxy.faults = [{ kind: 'flip', digest: layer.digest }];
    try {
      const err = await pullImage(c, NS, `${reg.host}/bad:1`, { registries: viaProxy() }).catch((e: Error) => e);
      expect(err).toBeInstanceOf(Error);
      expect((err as Error).message).toMatch(new RegExp(`digest mismatch.*expected ${layer.digest}, got sha256:[0-9a-f]{64}`));
    } finally {
      proxy.faults = [];
    }
    expect(await getImage(c, NS, `${reg.host}/bad:1`)).toBeUndefined();
    expect(await contentInfo(c, NS, layer.digest)).toBeUndefined();
  });

  it('says when an image is not in the registry, and when the registry is unreachable', async () => {
    const err = await pullImage(c, NS, `${reg.host}/nope:1`, { registries: direct() }).catch((e: Error) => e);
    expect(err).toBeInstanceOf(RegistryError);
    expect((err as Error).message).toBe(`image ${reg.host}/nope:1 not found in registry ${reg.host}`);
    const down = await pullImage(c, NS, '127.0.0.1:9/busybox:1', { registries: { '127.0.0.1:9': { endpoints: ['http://127.0.0.1:9'] } } }).catch((e: Error) => e);
    expect((down as RegistryError).kind).toBe('unreachable');
    expect((down as Error).message).toMatch(/registry 127\.0\.0\.1:9 unreachable/);
  });

  it('uses Basic auth: refused without credentials, pulled with them', async () => {
    proxy.basicAuth = { username: 'bronze', password: 's3cret' };
    try {
      const refused = await pullImage(c, NS, `${reg.host}/busybox:1`, { registries: viaProxy(), policy: 'always' }).catch((e: Error) => e);
      expect((refused as RegistryError).kind).toBe('auth');
      expect((refused as Error).message).toMatch(new RegExp(`registry ${proxy.host} requires credentials`));
      const wrong = await pullImage(c, NS, `${reg.host}/busybox:1`, { registries: { ...viaProxy(), [proxy.host]: { endpoints: [], auth: { username: 'bronze', password: 'no' } } } }).catch((e: Error) => e);
      expect((wrong as RegistryError).kind).toBe('auth');
      expect((wrong as Error).message).toMatch(/refused authorization.*HTTP 401/);
      const ok = await pullImage(c, NS, `${reg.host}/busybox:1`, { registries: { ...viaProxy(), [proxy.host]: { endpoints: [], auth: { username: 'bronze', password: 's3cret' } } } });
      expect(ok.digest).toBe(img.top.digest);
    } finally {
      proxy.basicAuth = undefined;
    }
  });

  it("uses Docker's token protocol (Bearer) with the configured credentials", async () => {
    proxy.bearer = { token: 'tok-123', username: 'bronze', password: 'pw' };
    proxy.tokenRequests = [];
    try {
      const refused = await pullImage(c, NS, `${reg.host}/multi:v1`, { registries: { ...viaProxy(), [proxy.host]: { endpoints: [], auth: { username: 'bronze', password: 'bad' } } } }).catch((e: Error) => e);
      expect((refused as RegistryError).kind).toBe('auth');
      expect((refused as Error).message).toMatch(/refused authorization.*token service/);
      const ok = await pullImage(c, NS, `${reg.host}/multi:v1`, { registries: { ...viaProxy(), [proxy.host]: { endpoints: [], auth: { auth: Buffer.from('bronze:pw').toString('base64') } } } });
      expect(ok.digest).toBe(multi.top.digest);
      expect(proxy.tokenRequests.at(-1)).toBe('?service=fault-proxy&scope=repository%3Amulti%3Apull');
    } finally {
      proxy.bearer = undefined;
    }
  });

  it('speaks TLS to an https endpoint: refused without its CA, pulled with it or with insecureSkipVerify', async () => {
    const { crt, key } = selfSignedServerCert({ commonName: '127.0.0.1', ipAddresses: ['127.0.0.1'], ttlMs: 86_400_000 });
    const tls = await startFaultProxy(reg.url, { tls: { key, cert: crt } });
    try {
      const mirror = { [reg.host]: { endpoints: [tls.url], skipFallback: true } };
      const refused = await pullImage(c, NS, `${reg.host}/busybox:1`, { registries: mirror }).catch((e: Error) => e);
      expect((refused as RegistryError).kind).toBe('unreachable');
      expect((refused as Error).message).toMatch(/certificate/);
      const withCa = await pullImage(c, NS, `${reg.host}/busybox:1`, { registries: { ...mirror, [tls.host]: { endpoints: [], tls: { ca: crt } } } });
      expect(withCa.digest).toBe(img.top.digest);
      const skip = await pullImage(c, NS, `${reg.host}/busybox:1`, { registries: { ...mirror, [tls.host]: { endpoints: [], tls: { insecureSkipVerify: true } } } });
      expect(skip.digest).toBe(img.top.digest);
      expect(tls.manifestRequests).toBe(2);
    } finally {
      await tls.close();
    }
  });

  it('imports an oci-archive (gzip) without a registry', async () => {
    const arch = await buildBusyboxImage({ files: { 'etc/imported': 'i\n' } });
    const file = path.join(tmp, 'busybox.tar.gz');
    await writeOciArchive(arch, file, 'docker.io/library/imported:1', { gzip: true });
    const got = await importImage(c, NS, fileChunks(file));
    expect(got.map((i) => [i.name, i.digest])).toEqual([['docker.io/library/imported:1', arch.top.digest]]);
    const run = await imageRunConfig(c, NS, 'imported:1');
    expect(await snapshotExists(c, NS, 'overlayfs', run.chainId)).toBe(true);
  });

  it('imports a plain tar, and refuses an archive with a corrupt blob without creating its image', async () => {
    const plain = await buildBusyboxImage({ files: { 'etc/plain': 'p\n' } });
    const bytes = await ociArchive(plain, 'plain.example/tools/plain:2');
    const got = await importImage(c, NS, (async function* () {
      for (let i = 0; i < bytes.length; i += 10_000) yield bytes.subarray(i, i + 10_000);
    })());
    expect(got.map((i) => i.name)).toEqual(['plain.example/tools/plain:2']);

    const broken = await buildBusyboxImage({ files: { 'etc/broken': 'b\n' } });
    const tarBytes = Buffer.from(await ociArchive(broken, 'docker.io/library/broken:1'));
    const layer = broken.layers[ARCH]!;
    const at = tarBytes.indexOf(layer.data.subarray(0, 64));
    expect(at).toBeGreaterThan(0);
    tarBytes[at + 1000] = tarBytes[at + 1000]! ^ 0xff;
    const err = await importImage(c, NS, (async function* () {
      yield tarBytes;
    })()).catch((e: Error) => e);
    expect((err as Error).message).toMatch(new RegExp(`digest mismatch.*expected ${layer.digest}, got sha256:`));
    expect(await getImage(c, NS, 'docker.io/library/broken:1')).toBeUndefined();
    expect(await contentInfo(c, NS, layer.digest)).toBeUndefined();
  });

  it('imports an older docker-save archive (no OCI layout), named by its RepoTags', async () => {
    const saved = await buildBusyboxImage({ files: { 'etc/saved': 's\n' } });
    const bytes = await dockerSaveArchive(saved, ['saved:1', 'ghcr.io/acme/saved:1']);
    const got = await importImage(c, NS, (async function* () {
      yield bytes;
    })());
    expect(got.map((i) => i.name)).toEqual(['docker.io/library/saved:1', 'ghcr.io/acme/saved:1']);
    const run = await imageRunConfig(c, NS, 'saved:1');
    expect(run.chainId).toBe(saved.diffIds[ARCH]);
    expect(run.image.manifest.layers[0]!.mediaType).toBe('application/vnd.docker.image.rootfs.diff.tar');
    expect(await snapshotExists(c, NS, 'overlayfs', run.chainId)).toBe(true);
  });

  it('lists and removes images', async () => {
    const names = (await listImages(c, NS)).map((i) => i.name);
    expect(names).toEqual(expect.arrayContaining([`${reg.host}/busybox:1`, `${reg.host}/multi:v1`, 'docker.io/library/imported:1']));
    const bb = (await listImages(c, NS)).find((i) => i.name === `${reg.host}/busybox:1`)!;
    expect(bb.size).toBe(img.top.size + img.configs[ARCH]!.size + img.layers[ARCH]!.size);
    await removeImage(c, NS, `${reg.host}/busybox:1`);
    expect(await getImage(c, NS, `${reg.host}/busybox:1`)).toBeUndefined();
    await expect(removeImage(c, NS, `${reg.host}/busybox:1`)).rejects.toThrow(/not found/);
  });
});

describe.skipIf(!fs.existsSync('/bin/busybox'))('the busybox test image (test/fixtures/busybox-image.ts)', () => {
  it('is deterministic: the same inputs give the same digests', async () => {
    const a = await buildBusyboxImage({ files: { 'www/index.html': 'hi\n' }, index: true });
    const b = await buildBusyboxImage({ files: { 'www/index.html': 'hi\n' }, index: true });
    expect(a.top.digest).toBe(b.top.digest);
    expect(a.top.mediaType).toBe('application/vnd.oci.image.index.v1+json');
    expect(Buffer.compare(await ociArchive(a, 'x.example/a:1'), await ociArchive(b, 'x.example/a:1'))).toBe(0);
  });
});
