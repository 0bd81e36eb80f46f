// `bronzectl gen ...` and `bronzectl config ...`: real files, real certificates.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import { load, newClientConfig, save, serializeClientConfig } from '../../../src/contract/clientconfig.ts';
import { parseSecrets, generateSecrets, serializeSecrets } from '../../../src/contract/secrets.ts';
import { certificateInfo, issueClientCert, rolesOf, verifyChain } from '../../../src/pki/certs.ts';
import { toBase64Pem } from '../../../src/pki/pem.ts';
import { talosCA } from '../../lib/talos-pki.ts';
import { cli, makePki, startApi, workspace, type FakeApi, type Pki, type Workspace } from './testing.ts';

const DAY = 86_400_000;
let pki: Pki;
let ws: Workspace;
let api: FakeApi;

beforeAll(async () => {
  pki = await makePki();
  api = await startApi(pki, {
    '/machine.MachineService/GenerateClientConfiguration': {
      unary: async (req) => {
        const c = await issueClientCert(pki.ca, { commonName: 'generated', roles: req.roles, ttlMs: Number(req.crt_ttl.seconds) * 1000 });
        return { messages: [{ metadata: null, ca: Buffer.from(pki.ca.crt), crt: Buffer.from(c.crt), key: Buffer.from(c.key), talosconfig: Buffer.alloc(0) }] };
      },
    },
  });
  ws = await workspace(pki, [api.endpoint]);
});

afterAll(async () => {
  await api.close();
  await ws.cleanup();
});

const mode = async (f: string) => (await stat(f)).mode & 0o777;

describe('gen config', () => {
  it('writes controlplane.yaml, worker.yaml and bronzeconfig (0600, os:admin) and refuses to overwrite', async () => {
    const r = await cli(ws, ['gen', 'config', 'lab', 'https://10.5.0.10:6443', '-o', 'out', '--additional-sans', 'a.example,10.0.0.9']);
    expect(r.code).toBe(0);
    const out = path.join(ws.dir, 'out');
    expect((await readdir(out)).sort()).toEqual(['bronzeconfig', 'controlplane.yaml', 'worker.yaml']);
    expect(r.out).toBe(['controlplane.yaml', 'worker.yaml', 'bronzeconfig'].map((f) => `Created ${path.join(out, f)}\n`).join(''));
    for (const f of ['bronzeconfig', 'controlplane.yaml', 'worker.yaml']) expect(await mode(path.join(out, f))).toBe(0o600);
    const cp = YAML.parse(await readFile(path.join(out, 'controlplane.yaml'), 'utf8'));
    expect(cp.machine.type).toBe('controlplane');
    expect(cp.machine.certSANs).toEqual(['a.example', '10.0.0.9']);
    expect(cp.cluster.controlPlane.endpoint).toBe('https://10.5.0.10:6443');
    const wk = YAML.parse(await readFile(path.join(out, 'worker.yaml'), 'utf8'));
    expect(wk.machine.type).toBe('worker');
    expect(wk.machine.ca.key).toBe('');
    const client = await load(path.join(out, 'bronzeconfig'));
    expect(client.context).toBe('lab');
    const ctx = client.contexts.lab!;
    expect(ctx.endpoints).toEqual(['10.5.0.10']);
    expect(rolesOf(ctx.crt)).toEqual(['os:admin']);
    expect(verifyChain(ctx.crt, ctx.ca)).toBe(true);
    expect(Buffer.from(cp.machine.ca.crt, 'base64').toString()).toBe(ctx.ca);

    const again = await cli(ws, ['gen', 'config', 'lab', '10.5.0.10', '-o', 'out']);
    expect(again.code).toBe(1);
    expect(again.err).toMatch(/already exist, use --force to overwrite/);
    expect((await cli(ws, ['gen', 'config', 'lab', '10.5.0.10', '-o', 'out', '--force'])).code).toBe(0);
  });

  it('the global --endpoints (and --nodes) go into the bronzeconfig: a node reached through a forwarded port', async () => {
    const r = await cli(ws, ['gen', 'config', 'demo', 'https://10.0.2.15:6443', '--endpoints', '127.0.0.1:50001', '-n', '10.0.2.15', '-o', 'fwd']);
    expect(r).toMatchObject({ code: 0, err: 'generating PKI and tokens\n' });
    const ctx = (await load(path.join(ws.dir, 'fwd', 'bronzeconfig'))).contexts.demo!;
    expect(ctx.endpoints).toEqual(['127.0.0.1:50001']);
    expect(ctx.nodes).toEqual(['10.0.2.15']);
    const cp = YAML.parse(await readFile(path.join(ws.dir, 'fwd', 'controlplane.yaml'), 'utf8'));
    expect(cp.cluster.controlPlane.endpoint, 'the cluster endpoint is unchanged').toBe('https://10.0.2.15:6443');
  });

  it('--with-secrets reuses the bundle; gen secrets refuses to overwrite', async () => {
    const r = await cli(ws, ['gen', 'secrets', '-o', 's.yaml']);
    expect(r.code).toBe(0);
    const file = path.join(ws.dir, 's.yaml');
    expect(await mode(file)).toBe(0o600);
    const secrets = parseSecrets(await readFile(file, 'utf8'));
    expect((await cli(ws, ['gen', 'secrets', '-o', 's.yaml'])).err).toBe(`"${file}" already exists, use --force to overwrite\n`);
    const g = await cli(ws, ['gen', 'config', 'c2', '10.5.0.11', '--output-dir', 'o2', '--with-secrets', 's.yaml']);
    expect(g).toMatchObject({ code: 0, err: '' });
    const cp = YAML.parse(await readFile(path.join(ws.dir, 'o2', 'controlplane.yaml'), 'utf8'));
    expect(cp.machine.token).toBe(secrets.trustdinfo.token);
    expect(Buffer.from(cp.machine.ca.crt, 'base64').toString()).toBe(secrets.certs.os.crt);
  });

  it('--with-secrets takes a Talos secrets.yaml: ECDSA (SEC1) or Ed25519 OS CA, Kubernetes and etcd CAs dropped', async () => {
    for (const kind of ['ed25519', 'ec-p256'] as const) {
      const [os, k8s, etcd] = await Promise.all([talosCA(kind, 'talos'), talosCA('ec-p256', 'kubernetes'), talosCA('ec-p256', 'etcd')]);
      const bundle = {
        cluster: { id: 'Z6sNbpQ2oEhkVkUPtAbpk1mhFuxS2HIEsAvsV8DQW1E=', secret: 'bJ0IwnUDBGHoO4D0cNmC7hbBgwLYfO8DKyQX3lzuKnc=' },
        secrets: { bootstraptoken: 'a9hohe.1vth7h0xqgvwgdpx', secretboxencryptionsecret: 'z01mye6j16bspJYtTB/5SFX8j7Ph4JXxM2Xuu4vsBPM=' },
        trustdinfo: { token: 'ifn3xh.cvo39rklmy5m2lqr' },
        certs: {
          etcd: { crt: toBase64Pem(etcd.crt), key: toBase64Pem(etcd.key) },
          k8s: { crt: toBase64Pem(k8s.crt), key: toBase64Pem(k8s.key) },
          k8saggregator: { crt: toBase64Pem(k8s.crt), key: toBase64Pem(k8s.key) },
          k8sserviceaccount: { key: toBase64Pem(k8s.key) },
          os: { crt: toBase64Pem(os.crt), key: toBase64Pem(os.key) },
        },
      };
      await writeFile(path.join(ws.dir, `talos-${kind}.yaml`), YAML.stringify(bundle, { indent: 4 }));
      const out = `o-talos-${kind}`;
      const g = await cli(ws, ['gen', 'config', 'talos', '10.5.0.12', '-o', out, '--with-secrets', `talos-${kind}.yaml`]);
      expect(g, kind).toMatchObject({ code: 0, err: '' });
      const cp = YAML.parse(await readFile(path.join(ws.dir, out, 'controlplane.yaml'), 'utf8'));
      expect(cp.machine.token).toBe('ifn3xh.cvo39rklmy5m2lqr');
      expect(Buffer.from(cp.machine.ca.crt, 'base64').toString()).toBe(os.crt);
      // The client certificate is signed by the Talos OS CA, with the algorithm of its key.
      const client = await load(path.join(ws.dir, out, 'bronzeconfig'));
      expect(verifyChain(client.contexts.talos!.crt, os.crt)).toBe(true);
    }
  });

  it('--config-patch, --config-patch-control-plane and --config-patch-worker (inline or @file) patch the generated configs', async () => {
    await writeFile(path.join(ws.dir, 'cp-patch.yaml'), 'machine:\n  network:\n    hostname: cp-1\n');
    const g = await cli(ws, [
      'gen', 'config', 'patched', '10.5.0.13', '-o', 'o-patched',
      '--config-patch', '[{"op": "add", "path": "/machine/sysctls", "value": {"vm.swappiness": "10"}}]',
      '--config-patch', 'machine:\n  kubelet:\n    image: ghcr.io/siderolabs/kubelet:v1.34.1',
      '--config-patch-control-plane', '@cp-patch.yaml',
      '--config-patch-worker', 'apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: worker-1',
    ]);
    expect(g.code, g.err).toBe(0);
    expect(g.err).toContain('controlplane.yaml: 1 warning:\n  machine.kubelet (line');
    expect(g.err).toContain('ignored: Bronze runs no Kubernetes');
    const docs = async (f: string) => YAML.parseAllDocuments(await readFile(path.join(ws.dir, 'o-patched', f), 'utf8')).map((d) => d.toJS());
    const [cp] = await docs('controlplane.yaml');
    expect(cp.machine.network.hostname).toBe('cp-1');
    expect(cp.machine.sysctls).toEqual({ 'vm.swappiness': '10' });
    const wk = await docs('worker.yaml');
    expect(wk[0].machine.network).toEqual({});
    expect(wk[0].machine.sysctls).toEqual({ 'vm.swappiness': '10' });
    expect(wk[1]).toEqual({ apiVersion: 'v1alpha1', kind: 'HostnameConfig', hostname: 'worker-1' });
  });

  it('a patch that makes a generated config invalid writes nothing', async () => {
    const g = await cli(ws, ['gen', 'config', 'bad', '10.5.0.14', '-o', 'o-bad', '--config-patch-worker', 'machine:\n  network:\n    hostname: -bad-']);
    expect(g.code).toBe(1);
    expect(g.err).toMatch(/\nworker\.yaml: the patched configuration is not valid, nothing written:\nmachine\.network\.hostname \(line \d+\): invalid: "-bad-"/);
    await expect(readdir(path.join(ws.dir, 'o-bad'))).rejects.toThrow(/ENOENT/);
    const missing = await cli(ws, ['gen', 'config', 'bad', '10.5.0.14', '-o', 'o-bad', '--config-patch', '@nope.yaml']);
    expect(missing).toMatchObject({ code: 1, err: expect.stringMatching(/controlplane\.yaml: @nope\.yaml: cannot read: ENOENT/) });
  });

  it('bad input is named: a bad endpoint, a missing argument', async () => {
    const bad = await cli(ws, ['gen', 'config', 'lab', 'ftp://x', '-o', 'o3']);
    expect(bad).toMatchObject({ code: 1, err: 'endpoint: scheme must be https, got ftp\n' });
    const missing = await cli(ws, ['gen', 'config', 'lab']);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/missing required argument 'cluster-endpoint'/);
  });
});

describe('gen ca, key, csr, crt', () => {
  it('makes a CA, a key, a CSR asking for roles and a certificate carrying them', async () => {
    const dir = path.join(ws.dir, 'pki');
    await mkdir(dir);
    const w = { ...ws, dir };
    expect((await cli(w, ['gen', 'ca', '--organization', 'myorg', '--hours', '48'])).code).toBe(0);
    const caCrt = await readFile(path.join(dir, 'myorg.crt'), 'utf8');
    expect(certificateInfo(caCrt).isCA).toBe(true);
    expect(await readFile(path.join(dir, 'myorg.sha256'), 'utf8')).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await mode(path.join(dir, 'myorg.key'))).toBe(0o600);
    expect((await cli(w, ['gen', 'key', '--name', 'op'])).code).toBe(0);
    expect((await cli(w, ['gen', 'csr', '--key', 'op.key', '--ip', '10.0.0.5', '--roles', 'os:reader'])).code).toBe(0);
    const crt = await cli(w, ['gen', 'crt', '--ca', 'myorg', '--csr', 'op.csr', '--name', 'op', '--hours', '2']);
    expect(crt).toMatchObject({ code: 0, err: '' });
    const pem = await readFile(path.join(dir, 'op.crt'), 'utf8');
    const info = certificateInfo(pem);
    expect(info.organizations).toEqual(['os:reader']);
    expect(info.ipAddresses).toEqual(['10.0.0.5']);
    expect(info.extKeyUsage.sort()).toEqual(['clientAuth', 'serverAuth']);
    expect(info.notAfter.getTime() - Date.now()).toBeLessThanOrEqual(2 * 3_600_000);
    expect(verifyChain(pem, caCrt)).toBe(true);

    expect((await cli(w, ['gen', 'ca'])).err).toMatch(/required option '--organization <name>' not specified/);
    expect(await cli(w, ['gen', 'csr', '--key', 'op.key', '--ip', 'nope'])).toMatchObject({ code: 1, err: '--ip: invalid IP address "nope"\n' });
    expect(await cli(w, ['gen', 'crt', '--ca', 'missing', '--csr', 'op.csr', '--name', 'x'])).toMatchObject({ code: 1, err: `CA certificate ${path.join(dir, 'missing.crt')}: no such file\n` });
  });
});

describe('config', () => {
  it('merge renames a clashing context by appending an index; --force overwrites', async () => {
    const w = await workspace(pki, ['10.0.0.1']);
    try {
      const other = await newClientConfig({ contextName: 'test', endpoints: ['10.0.0.2'], ca: pki.ca, roles: ['os:reader'], ttlMs: DAY });
      await writeFile(path.join(w.dir, 'other'), serializeClientConfig(other));
      const r = await cli(w, ['config', 'merge', 'other']);
      expect(r).toMatchObject({ code: 0, out: 'renamed bronzeconfig context "test" -> "test-1"\n' });
      let cfg = await load(w.config);
      expect(Object.keys(cfg.contexts).sort()).toEqual(['test', 'test-1']);
      expect(cfg.context).toBe('test-1');
      expect(cfg.contexts['test-1']!.endpoints).toEqual(['10.0.0.2']);
      expect(await mode(w.config)).toBe(0o600);
      expect((await cli(w, ['config', 'merge', 'other'])).out).toBe('renamed bronzeconfig context "test" -> "test-2"\n');
      expect((await cli(w, ['config', 'merge', 'other', '--force'])).out).toBe('');
      cfg = await load(w.config);
      expect(Object.keys(cfg.contexts).sort()).toEqual(['test', 'test-1', 'test-2']);
      expect(cfg.contexts.test!.endpoints).toEqual(['10.0.0.2']);
    } finally {
      await w.cleanup();
    }
  });

  it('merge into a config that does not exist yet creates it', async () => {
    const w = await workspace(pki, ['10.0.0.1']);
    try {
      const target = path.join(w.dir, 'sub', 'new-config');
      const r = await cli(w, ['--bronzeconfig', target, 'config', 'merge', w.config]);
      expect(r.code).toBe(0);
      expect((await load(target)).context).toBe('test');
    } finally {
      await w.cleanup();
    }
  });

  it('contexts, context, endpoint, node, info', async () => {
    const w = await workspace(pki, ['10.0.0.1']);
    try {
      const second = await newClientConfig({ contextName: 'prod', endpoints: ['10.1.0.1'], ca: pki.ca, roles: ['os:operator'], ttlMs: 400 * DAY });
      const cfg = await load(w.config);
      cfg.contexts.prod = second.contexts.prod!;
      await save(w.config, cfg);
      expect((await cli(w, ['config', 'contexts'])).out).toBe('CURRENT   NAME   ENDPOINTS   NODES\n          prod   10.1.0.1    \n*         test   10.0.0.1    \n');
      expect((await cli(w, ['config', 'context', 'prod'])).code).toBe(0);
      expect(await cli(w, ['config', 'context', 'nope'])).toMatchObject({ code: 1, err: 'context "nope" is not defined\n' });
      expect((await cli(w, ['config', 'endpoint', '10.1.0.1', '10.1.0.2,10.1.0.3'])).code).toBe(0);
      expect((await cli(w, ['config', 'node', 'n1'])).code).toBe(0);
      expect((await cli(w, ['--context', 'test', 'config', 'nodes', 'tn'])).code).toBe(0);
      const after = await load(w.config);
      expect(after.context).toBe('prod');
      expect(after.contexts.prod).toMatchObject({ endpoints: ['10.1.0.1', '10.1.0.2', '10.1.0.3'], nodes: ['n1'] });
      expect(after.contexts.test!.nodes).toEqual(['tn']);
      const info = await cli(w, ['config', 'info']);
      expect(info.out).toMatch(
        /^Current context: {5}prod\nNodes: {15}n1\nEndpoints: {11}10\.1\.0\.1, 10\.1\.0\.2, 10\.1\.0\.3\nRoles: {15}os:operator\nCertificate expires: 1 year from now \(\d{4}-\d\d-\d\d\)\n$/,
      );
      expect((await cli(w, ['config', 'endpoint'])).code).toBe(2);
    } finally {
      await w.cleanup();
    }
  });

  it('config new asks the node for a certificate with the roles and TTL and writes a usable config', async () => {
    const r = await cli(ws, ['config', 'new', 'reader.yaml', '--roles', 'os:reader', '--crt-ttl', '24h']);
    expect(r).toMatchObject({ code: 0, err: '' });
    const call = api.calls.at(-1)!;
    expect(call).toMatchObject({ path: '/machine.MachineService/GenerateClientConfiguration', request: { roles: ['os:reader'], crt_ttl: { seconds: '86400' } } });
    const file = path.join(ws.dir, 'reader.yaml');
    expect(await mode(file)).toBe(0o600);
    const cfg = await load(file);
    const ctx = cfg.contexts[cfg.context]!;
    expect(ctx.endpoints).toEqual([api.endpoint]);
    expect(rolesOf(ctx.crt)).toEqual(['os:reader']);
    expect(await cli(ws, ['config', 'new', '--crt-ttl', 'forever'])).toMatchObject({ code: 1 });
    expect(await cli(ws, ['-n', 'a,b', 'config', 'new'])).toMatchObject({ code: 1, err: '"config new" command is not supported with multiple nodes\n' });
  });

  it('secrets round-trip through gen (sanity for the fixture)', async () => {
    expect(parseSecrets(serializeSecrets(await generateSecrets())).trustdinfo.token).toMatch(/^[a-z0-9]{6}\.[a-z0-9]{16}$/);
  });
});
