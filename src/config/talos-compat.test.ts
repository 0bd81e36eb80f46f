// A Talos user's configuration as it is: configs shaped like `talosctl gen config` output for
// v1.10 to v1.15 (control plane and worker) are accepted with exactly the expected warnings, the
// common patches give the expected result, and the four bugs of issue 15 stay fixed.
import { generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { talosCA, talosKeyPem } from '../../test/lib/talos-pki.ts';
import { talosShapedConfig, talosShapedConfigs, TALOS_VERSIONS, type TalosSecrets, type TalosShapedConfig } from '../../test/unit/config/talos-configs.ts';
import { TALOS_PATCHES } from '../../test/unit/config/talos-patches.ts';
import { toBase64Pem } from '../pki/pem.ts';
import { applyPatches, loadPatches } from './patch.ts';
import { formatIssues, validateConfig, type ConfigIssue } from './validate.ts';

let secrets: TalosSecrets;
let configs: TalosShapedConfig[];

beforeAll(async () => {
  const [os, k8s, aggregator, etcd] = await Promise.all([talosCA('ed25519', 'talos'), talosCA('ec-p256', 'kubernetes'), talosCA('ec-p256', 'front-proxy'), talosCA('ec-p256', 'etcd')]);
  secrets = { os, k8s, aggregator, etcd, serviceAccountKey: talosKeyPem(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey) };
  configs = talosShapedConfigs(secrets);
});

const warningKeys = (ws: readonly ConfigIssue[]) => ws.map((w) => `${w.path}: ${w.kind}`).sort();
const noPatches = () => {
  throw new Error('no files');
};

describe('talosctl gen config output, v1.10 to v1.15', () => {
  it('has a control plane and a worker per version, each with SEC1 EC keys where Talos writes them', () => {
    expect(configs).toHaveLength(TALOS_VERSIONS.length * 2);
    const cp = configs.find((c) => c.version === 'v1.13' && c.type === 'controlplane')!;
    const v1 = YAML.parseAllDocuments(cp.yaml)[0]!.toJS();
    expect(Buffer.from(v1.cluster.etcd.ca.key, 'base64').toString()).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
    expect(Buffer.from(v1.cluster.ca.key, 'base64').toString()).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
    expect(Buffer.from(v1.machine.ca.key, 'base64').toString()).toMatch(/^-----BEGIN ED25519 PRIVATE KEY-----/);
  });

  it.each(TALOS_VERSIONS.flatMap((v) => (['controlplane', 'worker'] as const).map((t) => [`${v} ${t}`, v, t] as const)))(
    '%s: accepted, with a warning for each Kubernetes or Talos-only part and nothing else',
    (_, version, type) => {
      const c = configs.find((x) => x.version === version && x.type === type)!;
      const r = validateConfig(c.yaml);
      expect(r.ok, r.ok ? '' : formatIssues(r.errors)).toBe(true);
      if (!r.ok) return;
      expect(warningKeys(r.warnings), formatIssues(r.warnings)).toEqual([...c.warnings].sort());
      for (const w of r.warnings.filter((x) => x.kind === 'ignored' && /^(machine\.kubelet|cluster\.apiServer|Kube)/.test(x.path))) {
        expect(w.message).toBe('ignored: Bronze runs no Kubernetes');
      }
      expect(r.config.machineType).toBe(type);
      expect(r.config.controlPlaneEndpoint).toBe('https://192.168.122.10:6443');
      expect(r.config.clusterName).toBe('talos-shaped');
      if (type === 'controlplane') expect(r.config.install).toEqual({ disk: '/dev/sda', image: `ghcr.io/siderolabs/installer:${version}.0`, wipe: false, extraKernelArgs: [] });
    },
  );

  it('accepts an OS CA whose key is a SEC1 EC key (machine.ca.key), and PKCS#1 RSA keys', async () => {
    for (const kind of ['ec-p256', 'ec-p384', 'rsa'] as const) {
      const os = await talosCA(kind);
      const c = talosShapedConfig('v1.13', 'controlplane', { ...secrets, os, k8s: await talosCA(kind), etcd: await talosCA(kind) });
      const r = validateConfig(c.yaml);
      expect(r.ok, `${kind}: ${r.ok ? '' : formatIssues(r.errors)}`).toBe(true);
    }
  });

  it('refuses a key that is not the CA certificate\'s, whatever its type', async () => {
    const other = await talosCA('ec-p256');
    const c = talosShapedConfig('v1.11', 'controlplane', secrets);
    const doc = YAML.parse(c.yaml);
    doc.machine.ca.key = toBase64Pem(other.key);
    const r = validateConfig(YAML.stringify(doc));
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors.map((e) => e.path)).toEqual(['machine.ca.key']);
  });
});

describe('common Talos patches', () => {
  const targets = (min = 0, max = 99) => TALOS_VERSIONS.filter((v) => Number(v.split('.')[1]) >= min && Number(v.split('.')[1]) <= max);

  it.each(TALOS_PATCHES.map((p) => [p.name, p] as const))('%s', (_, p) => {
    for (const version of targets(p.versions?.min, p.versions?.max)) {
      const base = configs.find((c) => c.version === version && c.type === 'controlplane')!;
      const patched = applyPatches(base.yaml, loadPatches([p.patch], noPatches));
      const r = validateConfig(patched);
      if (p.refused) {
        expect(r.ok, `${version}: refused`).toBe(false);
        if (!r.ok) expect(r.errors, `${version}:\n${formatIssues(r.errors)}`).toEqual([expect.objectContaining({ path: p.refused.path, kind: p.refused.kind })]);
        continue;
      }
      expect(r.ok, `${version}:\n${r.ok ? '' : formatIssues(r.errors)}`).toBe(true);
      // The patch's own warnings come on top of the config's (a warning the patch removes may go).
      const extra = warningKeys(r.warnings).filter((w) => !base.warnings.includes(w));
      expect(extra, `${version}`).toEqual([...(p.warnings ?? [])].filter((w) => !base.warnings.includes(w)).sort());
    }
  });

  it('counts what the tests accept', () => {
    let accepted = 0;
    let total = 0;
    for (const p of TALOS_PATCHES) {
      for (const version of targets(p.versions?.min, p.versions?.max)) {
        total++;
        const base = configs.find((c) => c.version === version && c.type === 'controlplane')!;
        if (validateConfig(applyPatches(base.yaml, loadPatches([p.patch], noPatches))).ok) accepted++;
      }
    }
    const configsAccepted = configs.filter((c) => validateConfig(c.yaml).ok).length;
    console.log(`Talos-shaped configs accepted: ${configsAccepted}/${configs.length}; patches (${TALOS_PATCHES.length}, over the versions each applies to): ${accepted}/${total} give a valid configuration, the rest are refused as expected`);
    expect(configsAccepted).toBe(configs.length);
    expect(accepted).toBe(total - TALOS_PATCHES.filter((p) => p.refused).reduce((n, p) => n + targets(p.versions?.min, p.versions?.max).length, 0));
  });
});

describe('issue 15 bugs', () => {
  const cp = () => configs.find((c) => c.version === 'v1.13' && c.type === 'controlplane')!.yaml;
  const worker = () => configs.find((c) => c.version === 'v1.13' && c.type === 'worker')!.yaml;

  it('machine.type: join is a worker, with a deprecation warning', () => {
    const r = validateConfig(worker().replace('type: worker', 'type: join'));
    expect(r.ok, r.ok ? '' : formatIssues(r.errors)).toBe(true);
    if (!r.ok) return;
    expect(r.config.machineType).toBe('worker');
    expect(r.config.data.v1alpha1!.machine).toMatchObject({ type: 'worker' });
    expect(r.warnings).toContainEqual(expect.objectContaining({ path: 'machine.type', kind: 'deprecated', message: expect.stringMatching(/"join" is the old name of "worker"/) }));
  });

  it('a missing machine.type is a worker, with a warning', () => {
    const r = validateConfig(worker().replace(/^ {4}type: worker\n/m, ''));
    expect(r.ok, r.ok ? '' : formatIssues(r.errors)).toBe(true);
    if (!r.ok) return;
    expect(r.config.machineType).toBe('worker');
    expect(r.warnings).toContainEqual(expect.objectContaining({ path: 'machine', kind: 'defaulted' }));
  });

  it('a __proto__ key is refused by name, never dropped (config and patch)', () => {
    const text = cp().replace('    network: {}\n', '    network: {}\n    sysctls:\n        __proto__: "1"\n        vm.swappiness: "10"\n');
    const r = validateConfig(text);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.errors).toEqual([expect.objectContaining({ path: 'machine.sysctls.__proto__', kind: 'invalid', message: expect.stringMatching(/the key "__proto__" is not accepted/) })]);
      expect(r.errors[0]!.line).toBe(text.split('\n').findIndex((l) => l.includes('__proto__')) + 1);
    }
    expect(() => loadPatches(['machine:\n  sysctls:\n    __proto__: "1"'], noPatches)).toThrow(/machine\.sysctls: key __proto__ is not allowed/);
    expect(() => applyPatches(text, [])).toThrow(/__proto__ is not allowed/);
  });

  it('deleting a document the config does not have leaves the config alone', () => {
    const out = applyPatches(cp(), loadPatches(['apiVersion: v1alpha1\nkind: KubeFlannelCNIConfig\n$patch: delete'], noPatches));
    expect(YAML.parseAllDocuments(out).map((d) => d.toJS())).toEqual(YAML.parseAllDocuments(cp()).map((d) => d.toJS()));
  });
});

describe('Talos reading habits', () => {
  it('infers a v1alpha1 document without version: from its keys', () => {
    const text = configs.find((c) => c.version === 'v1.12' && c.type === 'controlplane')!.yaml.replace(/^version: v1alpha1\n/, '');
    const r = validateConfig(text);
    expect(r.ok, r.ok ? '' : formatIssues(r.errors)).toBe(true);
    if (r.ok) expect(r.config.data.v1alpha1!.version).toBe('v1alpha1');
  });

  it('resolves YAML merge keys', () => {
    const base = configs.find((c) => c.version === 'v1.11' && c.type === 'controlplane')!.yaml;
    const text = base.replace('    network: {}\n', '    network:\n        interfaces:\n            - &nic\n              interface: eth1\n              dhcp: true\n              mtu: 1400\n            - <<: *nic\n              interface: eth2\n');
    const r = validateConfig(text);
    expect(r.ok, r.ok ? '' : formatIssues(r.errors)).toBe(true);
    if (r.ok) expect(r.config.v1alpha1!.machine.network!.interfaces).toEqual([{ interface: 'eth1', dhcp: true, mtu: 1400 }, { interface: 'eth2', dhcp: true, mtu: 1400 }]);
  });

  it('accepts a configuration of typed documents alone', () => {
    const r = validateConfig('apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: lab-1\n---\napiVersion: v1alpha1\nkind: ResolverConfig\nnameservers:\n  - address: 1.1.1.1\n');
    expect(r.ok, r.ok ? '' : formatIssues(r.errors)).toBe(true);
    if (r.ok) {
      expect(r.config.v1alpha1).toBeUndefined();
      expect(r.config.documents.map((d) => d.kind)).toEqual(['HostnameConfig', 'ResolverConfig']);
    }
  });

  it('takes a worker\'s control-plane endpoint from KubeClusterConfig, and refuses it twice', () => {
    const w = configs.find((c) => c.version === 'v1.14' && c.type === 'worker')!.yaml;
    expect(validateConfig(w.replace(/kind: KubeClusterConfig\n[^-]*/, 'kind: KubeProxyConfig\n')).ok).toBe(false);
    const twice = w.replace('cluster:\n', 'cluster:\n    controlPlane:\n        endpoint: https://10.0.0.1:6443\n');
    const r = validateConfig(twice);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors).toEqual([expect.objectContaining({ path: 'KubeClusterConfig', message: expect.stringMatching(/conflicts with cluster\.controlPlane\.endpoint/) })]);
  });
});
