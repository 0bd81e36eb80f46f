import { execFileSync } from 'node:child_process';
import { createHash, createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { pack } from 'tar-stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UpgradeImageError, parseUpgradeManifest, verifyManifestSignature, verifyUpgradeImage, type VerifyUpgradeImageOptions } from './image.ts';

const ROOT = resolve(import.meta.dirname, '../..');

const trusted = generateKeyPairSync('ed25519');
const other = generateKeyPairSync('ed25519');
const trustedPem = trusted.publicKey.export({ type: 'spki', format: 'pem' });

const vmlinuz = Buffer.alloc(3000, 'k');
const initramfs = Buffer.from(Array.from({ length: 70_001 }, (_, i) => (i * 7) & 0xff));

interface Entry {
  name: string;
  data: Buffer;
  type?: 'file' | 'directory' | 'symlink';
}

const ROOTHASH = '5e'.repeat(32);
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function manifestJson(over: Record<string, unknown> = {}, files: Record<string, Buffer> = { vmlinuz, 'initramfs.xz': initramfs }): Buffer {
  const m = {
    format: 'bronze-upgrade/1',
    version: 'v0.2.0',
    arch: 'amd64',
    roothash: ROOTHASH,
    files: Object.fromEntries(Object.entries(files).map(([n, b]) => [n, { size: b.length, sha256: sha256(b) }])),
    ...over,
  };
  return Buffer.from(`${JSON.stringify(m)}\n`);
}

function signed(manifest: Buffer, key: KeyObject = trusted.privateKey): Entry[] {
  return [
    { name: 'manifest.json', data: manifest },
    { name: 'manifest.sig', data: sign(null, manifest, key) },
  ];
}

const payload = (): Entry[] => [
  { name: 'vmlinuz', data: vmlinuz },
  { name: 'initramfs.xz', data: initramfs },
];

async function tarOf(entries: Entry[]): Promise<Buffer> {
  const p = pack();
  const out = (async () => {
    const chunks: Buffer[] = [];
    for await (const c of p) chunks.push(Buffer.from(c as Uint8Array));
    return Buffer.concat(chunks);
  })();
  for (const e of entries) {
    const header = { name: e.name, type: e.type ?? 'file', mtime: new Date(0), ...(e.type === 'symlink' ? { linkname: 'x' } : {}) };
    await new Promise<void>((res, rej) => p.entry(header, e.data, (err) => (err ? rej(err) : res())));
  }
  p.finalize();
  return out;
}

const goodImage = () => tarOf([...signed(manifestJson()), ...payload()]);

/** A stream of the image in small, odd-sized chunks, as a network would give it. */
function chunked(image: Buffer, size = 777): Readable {
  const parts: Buffer[] = [];
  for (let i = 0; i < image.length; i += size) parts.push(image.subarray(i, i + size));
  return Readable.from(parts);
}

let stageDir: string;
beforeEach(() => {
  stageDir = mkdtempSync(join(tmpdir(), 'bronze-stage-'));
});
afterEach(() => rmSync(stageDir, { recursive: true, force: true }));

const verifyImage = (image: Buffer | Readable | AsyncIterable<Buffer>, opts: Partial<VerifyUpgradeImageOptions> = {}) =>
  verifyUpgradeImage(Buffer.isBuffer(image) ? chunked(image) : image, { trustedKeyPem: trustedPem, stageDir, arch: 'amd64', ...opts });

async function expectRejected(image: Buffer | Readable | AsyncIterable<Buffer>, reason: string, message: RegExp, opts: Partial<VerifyUpgradeImageOptions> = {}) {
  const err = await verifyImage(image, opts).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpgradeImageError);
  expect((err as UpgradeImageError).message).toMatch(message);
  expect((err as UpgradeImageError).reason).toBe(reason);
  expect(readdirSync(stageDir)).toEqual([]);
}

describe('verifyUpgradeImage', () => {
  it('stages the files of a good image and returns its manifest', async () => {
    const image = await goodImage();
    const progress: number[] = [];
    const r = await verifyImage(image, { onProgress: (n) => progress.push(n) });
    expect(r.manifest).toEqual(JSON.parse(manifestJson().toString()));
    expect(r.files).toEqual({ vmlinuz: join(stageDir, 'vmlinuz'), 'initramfs.xz': join(stageDir, 'initramfs.xz') });
    expect(readFileSync(r.files.vmlinuz)).toEqual(vmlinuz);
    expect(readFileSync(r.files['initramfs.xz'])).toEqual(initramfs);
    expect(progress.at(-1)).toBe(image.length);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  it('reads any async iterable of buffers, in one chunk or byte by byte', async () => {
    const image = await goodImage();
    await verifyImage(
      (async function* () {
        yield image;
      })(),
    );
    rmSync(join(stageDir, 'vmlinuz'));
    rmSync(join(stageDir, 'initramfs.xz'));
    await verifyImage(
      (async function* () {
        for (let i = 0; i < 6000; i++) yield image.subarray(i, i + 1);
        yield image.subarray(6000);
      })(),
    );
    expect(readdirSync(stageDir).sort()).toEqual(['initramfs.xz', 'vmlinuz']);
  });

  it('makes the stage directory when missing', async () => {
    const dir = join(stageDir, 'a', 'b');
    const r = await verifyImage(await goodImage(), { stageDir: dir });
    expect(readFileSync(join(dir, 'vmlinuz'))).toEqual(vmlinuz);
    expect(r.files.vmlinuz).toBe(join(dir, 'vmlinuz'));
  });

  it('ignores what follows the end of the archive', async () => {
    const image = await goodImage();
    await verifyImage(Buffer.concat([image, Buffer.from('trailing garbage that is no tar header at all'.repeat(30))]));
    expect(readdirSync(stageDir).sort()).toEqual(['initramfs.xz', 'vmlinuz']);
  });

  it('rejects a tampered byte in a file: hash mismatch', async () => {
    const image = await goodImage();
    const at = image.indexOf(initramfs.subarray(5000, 5064)) + 10;
    image[at] = image[at]! ^ 1;
    await expectRejected(image, 'hash-mismatch', /^hash mismatch for initramfs\.xz: sha256 [0-9a-f]{64}, the manifest says/);
    const image2 = await goodImage();
    const at2 = image2.indexOf(vmlinuz.subarray(0, 64)) + 2999;
    image2[at2] = 0;
    await expectRejected(image2, 'hash-mismatch', /^hash mismatch for vmlinuz/);
  });

  it('rejects a tampered manifest: bad signature', async () => {
    const manifest = manifestJson();
    const [m, sig] = signed(manifest);
    const altered = Buffer.from(manifest.toString().replace('v0.2.0', 'v0.2.1'));
    await expectRejected(await tarOf([{ ...m!, data: altered }, sig!, ...payload()]), 'bad-signature', /^bad signature: manifest\.json is not signed by the trusted key/);
  });

  it('rejects an image signed with another key', async () => {
    await expectRejected(await tarOf([...signed(manifestJson(), other.privateKey), ...payload()]), 'bad-signature', /bad signature.*signed by another key/);
  });

  it('rejects a signature of the wrong size', async () => {
    const [m] = signed(manifestJson());
    await expectRejected(await tarOf([m!, { name: 'manifest.sig', data: Buffer.alloc(100) }, ...payload()]), 'not-an-image', /manifest\.sig is 100 bytes, at most 64/);
    await expectRejected(await tarOf([m!, { name: 'manifest.sig', data: Buffer.alloc(10) }, ...payload()]), 'bad-signature', /^bad signature: manifest\.sig is 10 bytes, an Ed25519 signature is 64/);
    await expectRejected(await tarOf([m!, { name: 'manifest.sig', data: Buffer.alloc(0) }, ...payload()]), 'bad-signature', /manifest\.sig is 0 bytes/);
  });

  it('rejects an unsigned image', async () => {
    await expectRejected(await tarOf([{ name: 'manifest.json', data: manifestJson() }, ...payload()]), 'not-an-image', /^not a Bronze upgrade image: manifest\.sig must follow manifest\.json, found "vmlinuz": it is unsigned/);
    await expectRejected(await tarOf([{ name: 'manifest.json', data: manifestJson() }]), 'not-an-image', /^not a Bronze upgrade image: .*unsigned/);
  });

  it('rejects entries in the wrong order', async () => {
    const [m, sig] = signed(manifestJson());
    await expectRejected(await tarOf([...payload(), m!, sig!]), 'not-an-image', /^not a Bronze upgrade image: its first entry is "vmlinuz", not manifest\.json/);
    await expectRejected(await tarOf([sig!, m!, ...payload()]), 'not-an-image', /first entry is "manifest\.sig"/);
    await expectRejected(await tarOf([{ ...m!, name: './manifest.json' }, sig!, ...payload()]), 'not-an-image', /first entry is "\.\/manifest\.json"/);
  });

  it('rejects an image for another architecture', async () => {
    const image = await tarOf([...signed(manifestJson({ arch: 'arm64' })), ...payload()]);
    await expectRejected(image, 'wrong-arch', /^wrong architecture: the image is for arm64, this node is amd64/);
    await verifyImage(image, { arch: 'arm64' });
  });

  it('rejects a truncated image', async () => {
    const image = await goodImage();
    const inInitramfs = image.indexOf(initramfs.subarray(30_000, 30_064));
    await expectRejected(image.subarray(0, inInitramfs), 'truncated', /^truncated: the image ends inside initramfs\.xz/);
    await expectRejected(image.subarray(0, 700), 'truncated', /^truncated: the image ends inside manifest\.json/);
    await expectRejected(image.subarray(0, 1024 + 512 + 10), 'truncated', /^truncated: the image ends inside manifest\.sig/);
    await expectRejected(image.subarray(0, 1024 + 300), 'truncated', /^truncated: the image ends inside the header of the entry after manifest\.json/);
    // Cut at an entry's end: the tar is whole, a file is missing.
    const afterVmlinuz = image.indexOf(vmlinuz) + 3072;
    await expectRejected(image.subarray(0, afterVmlinuz), 'missing-file', /^missing initramfs\.xz: the image ends before it/);
    await expectRejected(image.subarray(0, 2048), 'missing-file', /^missing vmlinuz, initramfs\.xz/);
  });

  it('rejects a corrupt entry header', async () => {
    const image = await goodImage();
    image.fill(0x41, 1024, 1024 + 512);
    await expectRejected(image, 'not-an-image', /^corrupt upgrade image: the entry after manifest\.json is not a tar entry/);
  });

  it('rejects what is not a tar at all', async () => {
    await expectRejected(Buffer.from('<html><body>404 not found</body></html>\n'.repeat(50)), 'not-an-image', /^not a Bronze upgrade image: not a tar archive/);
    await expectRejected(Buffer.from('short'), 'not-an-image', /^not a Bronze upgrade image: not a tar archive/);
    await expectRejected(Buffer.alloc(0), 'not-an-image', /^not a Bronze upgrade image: it is empty/);
  });

  it('rejects unknown, duplicate and non-file entries', async () => {
    const sig = signed(manifestJson());
    const [k, i] = payload();
    const extra = { name: 'extra', data: Buffer.from('hello') };
    await expectRejected(await tarOf([...sig, k!, extra, i!]), 'unexpected-entry', /^unexpected entry "extra" in the image/);
    await expectRejected(await tarOf([...sig, k!, i!, extra]), 'unexpected-entry', /^unexpected entry "extra" in the image/);
    await expectRejected(await tarOf([...sig, k!, k!, i!]), 'unexpected-entry', /^duplicate entry "vmlinuz"/);
    await expectRejected(await tarOf([...sig, { name: 'vmlinuz', data: Buffer.alloc(0), type: 'symlink' }, i!]), 'unexpected-entry', /"vmlinuz": a symlink, not a regular file/);
  });

  it('rejects a signed manifest that is not valid', async () => {
    const withExtraFile = manifestJson({}, { vmlinuz, 'initramfs.xz': initramfs, 'evil.sh': Buffer.from('x') });
    await expectRejected(await tarOf([...signed(withExtraFile), ...payload()]), 'bad-manifest', /^bad manifest: files: Unrecognized key: "evil\.sh"/);
    const noInitramfs = manifestJson({}, { vmlinuz });
    await expectRejected(await tarOf([...signed(noInitramfs), ...payload()]), 'bad-manifest', /^bad manifest: files\.initramfs\.xz:/);
    await expectRejected(await tarOf([...signed(manifestJson({ format: 'bronze-upgrade/2' })), ...payload()]), 'bad-manifest', /format "bronze-upgrade\/2" is not "bronze-upgrade\/1"/);
    await expectRejected(await tarOf([...signed(Buffer.from('{"format":')), ...payload()]), 'bad-manifest', /^bad manifest: manifest\.json is not JSON/);
    await expectRejected(await tarOf([...signed(manifestJson({ version: '../x' })), ...payload()]), 'bad-manifest', /^bad manifest: version:/);
  });

  it('rejects a file whose size is not the manifest’s', async () => {
    const manifest = manifestJson({}, { vmlinuz: Buffer.concat([vmlinuz, Buffer.from('!')]), 'initramfs.xz': initramfs });
    await expectRejected(await tarOf([...signed(manifest), ...payload()]), 'size-mismatch', /^size mismatch for vmlinuz: 3000 bytes, the manifest says 3001/);
  });

  it('stops at the byte limit', async () => {
    const image = await goodImage();
    await expectRejected(image, 'too-large', /^too large: the image is over the limit of 74000 bytes/, { maxBytes: 74_000 });
    await expectRejected(image, 'too-large', /^too large: the image's files are 73001 bytes/, { maxBytes: 73_000 });
    await verifyImage(image, { maxBytes: image.length });
  });

  it('reports a source that fails', async () => {
    const image = await goodImage();
    async function* broken() {
      yield image.subarray(0, 40_000);
      throw new Error('connection reset by peer');
    }
    await expectRejected(broken(), 'read-failed', /^reading the image failed: connection reset by peer/);
  });

  it('refuses a trusted key that is not an Ed25519 public key', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 }).publicKey.export({ type: 'spki', format: 'pem' });
    await expectRejected(await goodImage(), 'bad-key', /is rsa, not Ed25519/, { trustedKeyPem: rsa });
    await expectRejected(await goodImage(), 'bad-key', /not a public key/, { trustedKeyPem: 'nonsense' });
  });
});

describe('parseUpgradeManifest', () => {
  it('accepts the manifest upgrade.sh writes and checks the architecture when asked', () => {
    const m = manifestJson({ arch: 'arm64' });
    expect(parseUpgradeManifest(m).arch).toBe('arm64');
    expect(() => parseUpgradeManifest(m, { arch: 'amd64' })).toThrow(/wrong architecture/);
  });
});

describe('image-builder/upgrade.sh', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bronze-upgrade-sh-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const run = (script: string, args: string[], env: Record<string, string>) =>
    execFileSync(join(ROOT, 'image-builder', script), args, { env: { ...process.env, ...env }, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

  it('builds a reproducible image that the node verifies, signed by the key signing-key.sh names', async () => {
    const key = join(dir, 'key.pem');
    writeFileSync(key, trusted.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    writeFileSync(join(dir, 'vmlinuz'), vmlinuz);
    writeFileSync(join(dir, 'initramfs.xz'), initramfs);
    writeFileSync(join(dir, 'roothash'), `${ROOTHASH}\n`);
    const env = { BRONZE_SIGNING_KEY: key, SOURCE_DATE_EPOCH: '1700000000', BRONZE_VERSION: 'v9.8.7-rc.1' };
    run('upgrade.sh', ['amd64', dir, join(dir, 'a.tar')], env);
    run('upgrade.sh', ['amd64', dir, join(dir, 'b.tar')], env);
    const image = readFileSync(join(dir, 'a.tar'));
    expect(readFileSync(join(dir, 'b.tar')).equals(image)).toBe(true);
    // The manifest is the first entry, exactly as specified.
    expect(image.subarray(0, 13).toString()).toBe('manifest.json');
    const manifest = { format: 'bronze-upgrade/1', version: 'v9.8.7-rc.1', arch: 'amd64', roothash: ROOTHASH, files: { vmlinuz: { size: 3000, sha256: sha256(vmlinuz) }, 'initramfs.xz': { size: 70_001, sha256: sha256(initramfs) } } };
    expect(image.includes(Buffer.from(`${JSON.stringify(manifest)}\n`))).toBe(true);

    run('signing-key.sh', ['--public', join(dir, 'pub.pem')], env);
    const r = await verifyUpgradeImage(Readable.from([image]), { trustedKeyPem: readFileSync(join(dir, 'pub.pem')), stageDir, arch: 'amd64' });
    expect(r.manifest).toEqual(manifest);
    expect(readFileSync(r.files['initramfs.xz'])).toEqual(initramfs);
  });

  it('signing-key.sh makes the development key once, and its public half', () => {
    const env = { BRONZE_SIGNING_KEY: '', XDG_CONFIG_HOME: join(dir, 'config') };
    const path = run('signing-key.sh', [], env).trim();
    expect(path).toBe(join(dir, 'config', 'bronze', 'dev-signing-key.pem'));
    const pem = readFileSync(path);
    expect(run('signing-key.sh', [], env).trim()).toBe(path);
    expect(readFileSync(path)).toEqual(pem);
    run('signing-key.sh', ['--public', join(dir, 'pub.pem')], env);
    const message = Buffer.from('hello');
    const sig = sign(null, message, createPrivateKey(pem));
    expect(() => verifyManifestSignature(message, sig, readFileSync(join(dir, 'pub.pem'), 'utf8'))).not.toThrow();
    expect(() => run('signing-key.sh', [], { BRONZE_SIGNING_KEY: join(dir, 'nope.pem') })).toThrow(/does not exist/);
  });
});
