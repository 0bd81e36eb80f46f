import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { generateConfigs } from '../contract/genconfig.ts';
import { generateSecrets } from '../contract/secrets.ts';
import { applyPatches, loadPatches, parsePatch, PatchError, type Patch } from './patch.ts';

const FIXTURES = fileURLToPath(new URL('../../test/unit/config/patches/', import.meta.url));
const readFixture = (path: string) => readFileSync(`${FIXTURES}${path}`, 'utf8');

const inline = (...texts: string[]): Patch[] => loadPatches(texts, () => {
  throw new Error('no files here');
});
const apply = (base: string, ...texts: string[]) => YAML.parse(applyPatches(base, inline(...texts)));
const applyAll = (base: string, ...texts: string[]) =>
  YAML.parseAllDocuments(applyPatches(base, inline(...texts))).map((d) => d.toJS());
const failure = (fn: () => unknown): PatchError => {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(PatchError);
    return e as PatchError;
  }
  throw new Error('expected a PatchError');
};

// The base configurations of Talos's patching guide, as Bronze test data.
const NETWORK_BASE = `version: v1alpha1
machine:
  network:
    interfaces:
      - interface: eth0
        dhcp: false
        addresses:
          - 192.168.10.3/24
`;

const CLUSTER_BASE = `version: v1alpha1
cluster:
  network:
    dnsDomain: cluster.local
    podSubnets:
      - 10.244.0.0/16
    serviceSubnets:
      - 10.96.0.0/12
`;

const MULTIDOC_BASE = `version: v1alpha1
machine:
  network:
    hostname: hostname1
    interfaces:
      - interface: eth0
        dhcp: true
      - interface: eth1
        addresses: [10.3.5.4/32]
---
apiVersion: v1alpha1
kind: SideroLinkConfig
apiUrl: https://siderolink.example/join
---
apiVersion: v1alpha1
kind: ExtensionServiceConfig
name: foo
configFiles:
  - content: hello
    mountPath: /etc/foo
environment:
  - FOO=BAR
---
apiVersion: v1alpha1
kind: ExtensionServiceConfig
name: bar
environment:
  - BAR=1
`;

describe('loadPatches', () => {
  it('reads @file patches, YAML and JSON, and tells strategic from RFC 6902', () => {
    const patches = loadPatches(['@interfaces.yaml', '@interfaces.jsonpatch.yaml', '@hostname.json', '@delete-docs.yaml'], readFixture);
    expect(patches.map((p) => [p.type, p.source])).toEqual([
      ['strategic', '@interfaces.yaml'],
      ['rfc6902', '@interfaces.jsonpatch.yaml'],
      ['rfc6902', '@hostname.json'],
      ['strategic', '@delete-docs.yaml'],
    ]);
    expect(patches[3]).toMatchObject({ documents: [{ kind: 'SideroLinkConfig' }, { kind: 'ExtensionServiceConfig', name: 'foo' }] });
  });

  it('takes inline YAML and JSON, strategic or operations', () => {
    const [a, b, c, d] = inline(
      'machine:\n  network:\n    hostname: worker1',
      '{"machine": {"network": {"hostname": "worker1"}}}',
      '[{"op": "add", "path": "/machine/network/hostname", "value": "worker1"}]',
      '- op: remove\n  path: /machine/network',
    );
    expect(a).toEqual({ type: 'strategic', source: 'patch 1 "machine: network: hostname: worker1"', documents: [{ machine: { network: { hostname: 'worker1' } } }] });
    expect(b).toMatchObject({ type: 'strategic', documents: [{ machine: { network: { hostname: 'worker1' } } }] });
    expect(c).toMatchObject({ type: 'rfc6902', operations: [{ op: 'add', path: '/machine/network/hostname', value: 'worker1' }] });
    expect(d).toMatchObject({ type: 'rfc6902', operations: [{ op: 'remove', path: '/machine/network' }] });
  });

  it.each([
    ['@missing.yaml', /^@missing\.yaml: cannot read: ENOENT/],
    ['@broken.yaml', /^@broken\.yaml: malformed YAML: .*line 4/],
    ['@', /^@: no file name after @/],
  ])('names the argument when %s fails', (arg, want) => {
    expect(() => loadPatches([arg], readFixture)).toThrow(want);
  });

  it.each([
    ['machine: : oops', /^patch 2 "machine: : oops": malformed YAML: .*at line 1, column 10$/],
    ['', /empty patch/],
    ['# only a comment\n', /empty patch/],
    ['worker.yaml', /is a string, not a config document .*\(a file\? write @worker\.yaml\)/],
    ['[{"op": "frobnicate", "path": "/machine"}]', /op 0: unknown op "frobnicate"/],
    ['[{"op": "add", "path": "/a", "value": 1}, {"path": "/a"}]', /op 1: missing op/],
    ['- op: add\n  path: machine/network', /op 0 \(add\): path "machine\/network" must be empty or start with "\/"/],
    ['- op: add\n  path: /machine/x', /op 0 \(add \/machine\/x\): missing value/],
    ['- op: move\n  path: /machine/x', /op 0 \(move \/machine\/x\): missing from/],
    ['[1, 2]', /op 0: a value, not a map with op and path/],
    ['machine: {}\n---\n- op: add', /document 2: is a list/],
    ['kind: HostnameConfig\nhostname: a', /HostnameConfig document: missing apiVersion/],
    ['version: v1alpha2\nmachine: {}', /must be version v1alpha1, got "v1alpha2"/],
    ['machine:\n  a: 1\n  a: 2', /malformed YAML: Map keys must be unique/],
  ])('rejects %j, saying why', (text, want) => {
    const e = failure(() => inline('machine: {}', text));
    expect(e.source).toMatch(/^patch 2 /);
    expect(e.message).toMatch(want);
  });
});

describe('strategic merge', () => {
  it('merges a partial config into the document (Talos: hostname)', () => {
    expect(apply(NETWORK_BASE, 'machine:\n  network:\n    hostname: worker1')).toEqual({
      version: 'v1alpha1',
      machine: { network: { interfaces: [{ interface: 'eth0', dhcp: false, addresses: ['192.168.10.3/24'] }], hostname: 'worker1' } },
    });
  });

  it('merges interfaces by name and appends new ones (Talos: machine network)', () => {
    const want = {
      version: 'v1alpha1',
      machine: {
        network: {
          interfaces: [
            { interface: 'eth0', dhcp: false, addresses: ['192.168.10.3/24'], vip: { ip: '192.168.10.50' } },
            { interface: 'eth1', dhcp: true },
          ],
        },
      },
    };
    const [strategic, json] = loadPatches(['@interfaces.yaml', '@interfaces.jsonpatch.yaml'], readFixture);
    expect(YAML.parse(applyPatches(NETWORK_BASE, [strategic!]))).toEqual(want);
    expect(YAML.parse(applyPatches(NETWORK_BASE, [json!]))).toEqual(want);
  });

  it('replaces pod and service subnets, adds the CNI (Talos: cluster network)', () => {
    const want = {
      version: 'v1alpha1',
      cluster: { network: { dnsDomain: 'cluster.local', podSubnets: ['192.168.0.0/16'], serviceSubnets: ['192.0.0.0/12'], cni: { name: 'none' } } },
    };
    const strategic = 'cluster:\n  network:\n    podSubnets: [192.168.0.0/16]\n    serviceSubnets: [192.0.0.0/12]\n    cni:\n      name: none';
    const json = `- op: replace
  path: /cluster/network/podSubnets
  value: [192.168.0.0/16]
- op: replace
  path: /cluster/network/serviceSubnets
  value: [192.0.0.0/12]
- op: add
  path: /cluster/network/cni
  value: {name: none}`;
    expect(apply(CLUSTER_BASE, strategic)).toEqual(want);
    expect(apply(CLUSTER_BASE, json)).toEqual(want);
  });

  it('adds a nested map to an empty one (Talos: kubelet)', () => {
    const base = 'version: v1alpha1\nmachine:\n  kubelet: {}\n';
    const want = { version: 'v1alpha1', machine: { kubelet: { nodeIP: { validSubnets: ['192.168.10.0/24'] } } } };
    expect(apply(base, 'machine:\n  kubelet:\n    nodeIP:\n      validSubnets: [192.168.10.0/24]')).toEqual(want);
    expect(apply(base, '- op: add\n  path: /machine/kubelet/nodeIP\n  value: {validSubnets: [192.168.10.0/24]}')).toEqual(want);
  });

  it('merges admission plugins by name and appends inside them (Talos: pod security exemptions)', () => {
    const base = `version: v1alpha1
cluster:
  apiServer:
    admissionControl:
      - name: PodSecurity
        configuration:
          apiVersion: pod-security.admission.config.k8s.io/v1alpha1
          defaults: {enforce: baseline}
          exemptions:
            namespaces: [kube-system]
            runtimeClasses: []
`;
    const out = apply(base, 'cluster:\n  apiServer:\n    admissionControl:\n      - name: PodSecurity\n        configuration:\n          exemptions:\n            namespaces: [rook-ceph]');
    expect(out.cluster.apiServer.admissionControl).toEqual([
      {
        name: 'PodSecurity',
        configuration: {
          apiVersion: 'pod-security.admission.config.k8s.io/v1alpha1',
          defaults: { enforce: 'baseline' },
          exemptions: { namespaces: ['kube-system', 'rook-ceph'], runtimeClasses: [] },
        },
      },
    ]);
  });

  it('appends lists without a merge rule, duplicates included (certSANs, nameservers)', () => {
    const base = 'version: v1alpha1\nmachine:\n  certSANs: [a.example, 10.0.0.1]\n  network:\n    nameservers: [1.1.1.1]\n';
    const out = apply(base, 'machine:\n  certSANs: [10.0.0.1, b.example]\n  network:\n    nameservers: [9.9.9.9]');
    expect(out.machine.certSANs).toEqual(['a.example', '10.0.0.1', '10.0.0.1', 'b.example']);
    expect(out.machine.network.nameservers).toEqual(['1.1.1.1', '9.9.9.9']);
  });

  it('merges interfaces by deviceSelector, and VLANs by vlanId', () => {
    const base = `version: v1alpha1
machine:
  network:
    interfaces:
      - deviceSelector: {hardwareAddr: "00:00:*", driver: virtio_net}
        mtu: 1500
      - interface: eth1
        vlans:
          - vlanId: 10
            addresses: [10.0.10.2/24]
          - vlanId: 20
            dhcp: true
`;
    const out = apply(
      base,
      `machine:
  network:
    interfaces:
      - deviceSelector: {hardwareAddr: "00:00:*", driver: virtio_net}
        mtu: 9000
      - deviceSelector: {hardwareAddr: "00:00:*"}
        dhcp: true
      - interface: eth1
        vlans:
          - vlanId: 10
            addresses: [10.0.10.3/24]
            mtu: 1400
          - vlanId: 30
            dhcp: true
`,
    );
    expect(out.machine.network.interfaces).toEqual([
      { deviceSelector: { hardwareAddr: '00:00:*', driver: 'virtio_net' }, mtu: 9000 },
      {
        interface: 'eth1',
        vlans: [
          { vlanId: 10, addresses: ['10.0.10.2/24', '10.0.10.3/24'], mtu: 1400 },
          { vlanId: 20, dhcp: true },
          { vlanId: 30, dhcp: true },
        ],
      },
      // A different selector is a different device.
      { deviceSelector: { hardwareAddr: '00:00:*' }, dhcp: true },
    ]);
  });

  it('replaces auditPolicy whole instead of merging it', () => {
    const base = 'version: v1alpha1\ncluster:\n  apiServer:\n    auditPolicy:\n      kind: Policy\n      rules: [{level: Metadata}]\n';
    const out = apply(base, 'cluster:\n  apiServer:\n    auditPolicy:\n      kind: Policy\n      rules: [{level: None}]');
    expect(out.cluster.apiServer.auditPolicy).toEqual({ kind: 'Policy', rules: [{ level: 'None' }] });
  });

  it('overrides scalars (false and empty included), leaves the base alone for null', () => {
    const base = 'version: v1alpha1\ndebug: true\nmachine:\n  type: worker\n  token: abc\n  install: {disk: /dev/sda}\n';
    const out = apply(base, 'debug: false\nmachine:\n  token: ""\n  type: null\n  install:\n  env: {}');
    expect(out).toEqual({ version: 'v1alpha1', debug: false, machine: { type: 'worker', token: '', install: { disk: '/dev/sda' }, env: {} } });
  });

  it('applies patches in order, and several documents of one patch one after another', () => {
    const out = apply('version: v1alpha1\nmachine: {}\n', 'machine: {network: {hostname: a}}', 'machine: {network: {hostname: b}}\n---\nmachine: {sysctls: {vm.swappiness: "10"}}');
    expect(out.machine).toEqual({ network: { hostname: 'b' }, sysctls: { 'vm.swappiness': '10' } });
  });

  it('produces YAML with the base key order and new keys after', () => {
    const text = applyPatches('version: v1alpha1\nmachine:\n  type: worker\ncluster: {clusterName: c}\n', inline('machine: {network: {hostname: a}}\ndebug: true'));
    expect(text).toBe('version: v1alpha1\nmachine:\n  type: worker\n  network:\n    hostname: a\ncluster:\n  clusterName: c\ndebug: true\n');
  });
});

describe('$patch: delete', () => {
  it('deletes an interface (Talos: delete)', () => {
    const base = 'version: v1alpha1\nmachine:\n  network:\n    interfaces:\n      - interface: eth0\n        addresses: [10.0.0.2/24]\n    hostname: worker1\n';
    const out = apply(base, 'machine:\n  network:\n    interfaces:\n    - interface: eth0\n      $patch: delete\n    hostname: worker1');
    expect(out).toEqual({ version: 'v1alpha1', machine: { network: { hostname: 'worker1' } } });
  });

  it('deletes fields, list items and whole documents, then merges what follows', () => {
    const docs = applyAll(
      MULTIDOC_BASE,
      `apiVersion: v1alpha1
kind: SideroLinkConfig
$patch: delete
---
apiVersion: v1alpha1
kind: ExtensionServiceConfig
name: foo
configFiles:
  - content: hello
    $patch: delete
  - content: hello2
    mountPath: /etc/foo2
---
machine:
  network:
    hostname:
      $patch: delete
    interfaces:
      - interface: eth0
        $patch: delete
      - interface: eth1
        addresses: [10.3.5.5/32]
      - interface: eth0
        dummy: true
`,
    );
    expect(docs).toEqual([
      {
        version: 'v1alpha1',
        machine: {
          network: {
            interfaces: [
              { interface: 'eth1', addresses: ['10.3.5.4/32', '10.3.5.5/32'] },
              { interface: 'eth0', dummy: true },
            ],
          },
        },
      },
      { apiVersion: 'v1alpha1', kind: 'ExtensionServiceConfig', name: 'foo', configFiles: [{ content: 'hello2', mountPath: '/etc/foo2' }], environment: ['FOO=BAR'] },
      { apiVersion: 'v1alpha1', kind: 'ExtensionServiceConfig', name: 'bar', environment: ['BAR=1'] },
    ]);
  });

  it('deletes a named document of a multi-document kind, leaving the others (Talos: delete docs)', () => {
    const docs = YAML.parseAllDocuments(applyPatches(MULTIDOC_BASE, loadPatches(['@delete-docs.yaml'], readFixture))).map((d) => d.toJS());
    expect(docs.map((d) => d.kind ?? d.version)).toEqual(['v1alpha1', 'ExtensionServiceConfig']);
    expect(docs[1].name).toBe('bar');
  });

  it('ignores the deletion of a document the config does not have, as Talos does (the KubeFlannelCNIConfig patch)', () => {
    const flannel = 'apiVersion: v1alpha1\nkind: KubeFlannelCNIConfig\n$patch: delete\n---\ncluster:\n  network:\n    cni:\n      name: none';
    // A v1.13-style config has no KubeFlannelCNIConfig document: the delete changes nothing, the rest applies.
    expect(applyAll(CLUSTER_BASE, flannel)).toEqual([{ ...YAML.parse(CLUSTER_BASE), cluster: { network: { ...YAML.parse(CLUSTER_BASE).cluster.network, cni: { name: 'none' } } } }]);
    // A v1.14-style config has it: the document goes.
    const v114 = `${CLUSTER_BASE}---\napiVersion: v1alpha1\nkind: KubeFlannelCNIConfig\nbackend: vxlan\n`;
    expect(applyAll(v114, flannel).map((d) => d.kind ?? d.version)).toEqual(['v1alpha1']);
    // Deleting the same absent document twice, or a named one, is no error either.
    expect(applyAll(CLUSTER_BASE, 'apiVersion: v1alpha1\nkind: LinkConfig\nname: eth9\n$patch: delete')).toEqual([YAML.parse(CLUSTER_BASE)]);
  });

  it('deletes a map field (auditPolicy) and a label', () => {
    const base = 'version: v1alpha1\nmachine:\n  nodeLabels: {a: "1", b: "2"}\ncluster:\n  apiServer:\n    auditPolicy: {kind: Policy}\n    certSANs: [x]\n';
    const out = apply(base, 'machine:\n  nodeLabels:\n    a: {$patch: delete}\ncluster:\n  apiServer:\n    auditPolicy: {$patch: delete}');
    expect(out).toEqual({ version: 'v1alpha1', machine: { nodeLabels: { b: '2' } }, cluster: { apiServer: { certSANs: ['x'] } } });
  });

  it.each([
    ['machine:\n  network:\n    foo: {$patch: delete}', /document v1alpha1: machine\.network\.foo: nothing to delete/],
    ['machine:\n  network:\n    interfaces:\n      - interface: eth9\n        $patch: delete', /machine\.network\.interfaces\[0\]: no item with \{"interface":"eth9"\} to delete/],
    ['machine:\n  network:\n    interfaces:\n      - $patch: delete', /needs fields selecting the items/],
    ['machine:\n  network:\n    hostname: {$patch: delete, x: 1}', /takes no other fields/],
    ['machine:\n  network:\n    hostname: {$patch: replace}', /unsupported \$patch: "replace"/],
    ['version: v1alpha1\n$patch: delete', /document v1alpha1: the v1alpha1 document cannot be deleted/],
    ['apiVersion: v1alpha1\nkind: SideroLinkConfig\napiUrl: x\n$patch: delete', /takes only apiVersion, kind and name, not apiUrl/],
  ])('rejects deleting what is not there or is not deletable: %j', (text, want) => {
    expect(() => apply(MULTIDOC_BASE, text)).toThrow(want);
  });
});

describe('multi-document configs', () => {
  it('patches a kind document by name and appends unknown documents', () => {
    const docs = applyAll(
      MULTIDOC_BASE,
      'apiVersion: v1alpha1\nkind: ExtensionServiceConfig\nname: bar\nenvironment: [BAZ=2]\n---\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: node-1',
    );
    expect(docs.map((d) => d.kind ?? d.version)).toEqual(['v1alpha1', 'SideroLinkConfig', 'ExtensionServiceConfig', 'ExtensionServiceConfig', 'HostnameConfig']);
    expect(docs[2].environment).toEqual(['FOO=BAR']);
    expect(docs[3].environment).toEqual(['BAR=1', 'BAZ=2']);
    expect(docs[4]).toEqual({ apiVersion: 'v1alpha1', kind: 'HostnameConfig', hostname: 'node-1' });
  });

  it('merges ExtensionServiceConfig configFiles by mountPath, replacing the content', () => {
    const docs = applyAll(MULTIDOC_BASE, 'apiVersion: v1alpha1\nkind: ExtensionServiceConfig\nname: foo\nconfigFiles:\n  - content: bye\n    mountPath: /etc/foo');
    expect(docs[2].configFiles).toEqual([{ content: 'bye', mountPath: '/etc/foo' }]);
  });

  it('adds a v1alpha1 document (with its version) to a config of kind documents only', () => {
    const docs = applyAll('apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: a\n', 'machine: {type: worker}');
    expect(docs).toEqual([{ apiVersion: 'v1alpha1', kind: 'HostnameConfig', hostname: 'a' }, { version: 'v1alpha1', machine: { type: 'worker' } }]);
  });

  it('refuses RFC 6902 patches on a multi-document config, as Talos', () => {
    expect(() => apply(MULTIDOC_BASE, '- op: add\n  path: /debug\n  value: true')).toThrow(
      /RFC 6902 patches apply only to a config of the v1alpha1 document alone \(this one has: v1alpha1, SideroLinkConfig \(v1alpha1\), ExtensionServiceConfig "foo"/,
    );
    expect(() => apply('apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: a\n', '- op: add\n  path: /hostname\n  value: b')).toThrow(/v1alpha1 document alone/);
  });
});

describe('RFC 6902', () => {
  const base = 'version: v1alpha1\nmachine:\n  type: worker\n  network:\n    hostname: a\n  certSANs: [x]\n';

  it('applies add, replace, remove, move, copy and test', () => {
    const out = apply(
      base,
      `- op: test
  path: /machine/type
  value: worker
- op: replace
  path: /machine/network/hostname
  value: b
- op: add
  path: /machine/certSANs/-
  value: y
- op: copy
  from: /machine/network/hostname
  path: /machine/certSANs/0
- op: move
  from: /machine/type
  path: /machine/kind
- op: remove
  path: /machine/kind`,
    );
    expect(out).toEqual({ version: 'v1alpha1', machine: { network: { hostname: 'b' }, certSANs: ['b', 'x', 'y'] } });
  });

  it.each([
    ['- op: remove\n  path: /machine/nope', /op 0 \(remove \/machine\/nope\): path not found/],
    ['- op: replace\n  path: /machine/nope\n  value: 1', /op 0 \(replace \/machine\/nope\): path not found/],
    ['- op: add\n  path: /debug\n  value: true\n- op: test\n  path: /machine/type\n  value: controlplane', /op 1 \(test \/machine\/type\): test failed: the value differs/],
    ['- op: add\n  path: /machine/a/b\n  value: 1', /op 0 \(add \/machine\/a\/b\): cannot add there/],
    ['- op: add\n  path: /machine/certSANs/7\n  value: z', /op 0 \(add \/machine\/certSANs\/7\): list index out of bounds/],
    ['- op: move\n  from: /machine/zz\n  path: /machine/x', /op 0 \(move \/machine\/x\): from path not found/],
    ['- op: replace\n  path: ""\n  value: [1]', /the result is a list, not a config document/],
  ])('names the failing op and path: %j', (text, want) => {
    const e = failure(() => apply(base, text));
    expect(e.source).toBe('patch 1 ' + JSON.stringify(text.replace(/\s+/g, ' ').slice(0, 40) + (text.replace(/\s+/g, ' ').length > 40 ? '…' : '')));
    expect(e.reason).toMatch(want);
    // One line: fast-json-patch's own message (which dumps the whole config, secrets included) is not passed on.
    expect(e.message).not.toContain('\n');
    expect(e.message).not.toContain('v1alpha1');
  });

  it('does not change the patch when applying it', () => {
    const patches = inline('- op: add\n  path: /machine/x\n  value: {a: [1]}');
    const before = structuredClone(patches);
    const once = applyPatches(base, patches);
    expect(applyPatches(once, inline('machine: {x: {a: [2]}}'))).toContain('- 2');
    expect(patches).toEqual(before);
  });
});

describe('applyPatches errors', () => {
  it('rejects a malformed base, naming it', () => {
    expect(() => applyPatches('machine: : x', inline('debug: true'))).toThrow(/^config: malformed YAML/);
    expect(() => applyPatches('- 1\n', inline('debug: true'))).toThrow(/^config: document 1 is a list, not a map/);
  });

  it('rejects merging mismatched shapes, naming the field', () => {
    expect(() => apply(NETWORK_BASE, 'machine:\n  network:\n    interfaces: {eth0: {}}')).toThrow(/machine\.network\.interfaces: cannot merge a map into a list/);
    expect(() => apply(NETWORK_BASE, 'machine:\n  network: [a]')).toThrow(/machine\.network: cannot merge a list into a map/);
    expect(() => apply(NETWORK_BASE, 'machine:\n  network: none')).toThrow(/machine\.network: cannot replace a map with a value/);
    expect(() => apply(NETWORK_BASE, 'machine:\n  sysctls:\n    net.ipv4.ip_forward: [1]\n  network: x')).toThrow(/machine\.network: cannot replace a map/);
  });

  it('keys with dots are quoted in paths', () => {
    expect(() => apply('version: v1alpha1\nmachine:\n  sysctls: {net.core.somaxconn: "1"}\n', 'machine:\n  sysctls:\n    net.core.somaxconn: {a: 1}')).toThrow(
      /machine\.sysctls\["net\.core\.somaxconn"\]: cannot merge a map into a value/,
    );
  });

  it('rejects __proto__ keys', () => {
    expect(() => inline('machine:\n  __proto__: {polluted: true}')).toThrow(/machine: key __proto__ is not allowed/);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('fails whole: a later failing patch leaves no partial result and the earlier patch objects unchanged', () => {
    const patches = inline('machine: {network: {hostname: a}}', '- op: remove\n  path: /nope');
    const before = structuredClone(patches);
    expect(() => applyPatches(NETWORK_BASE, patches)).toThrow(/patch 2 .*op 0 \(remove \/nope\): path not found/);
    expect(patches).toEqual(before);
  });
});

describe('round trip from gen config', () => {
  it('patches a generated config with a hostname and a sysctl; the result parses and has both', async () => {
    const secrets = await generateSecrets();
    const { controlplane, worker } = generateConfigs({ clusterName: 'lab', endpoint: '10.5.0.2', secrets });
    const strategic = parsePatch('machine:\n  network:\n    hostname: cp-1\n  sysctls:\n    net.ipv4.ip_forward: "1"\n', 'hostname+sysctl');
    const cp = YAML.parse(applyPatches(controlplane, [strategic]));
    expect(cp.machine.network).toEqual({ hostname: 'cp-1' });
    expect(cp.machine.sysctls).toEqual({ 'net.ipv4.ip_forward': '1' });
    expect(cp.machine.ca.crt).toBe(YAML.parse(controlplane).machine.ca.crt);
    expect(cp.cluster).toEqual(YAML.parse(controlplane).cluster);

    const json = parsePatch(
      '[{"op": "add", "path": "/machine/network/hostname", "value": "w-1"}, {"op": "add", "path": "/machine/sysctls", "value": {"vm.swappiness": "10"}}]',
      'json',
    );
    const w = YAML.parse(applyPatches(worker, [json]));
    expect(w.machine.network.hostname).toBe('w-1');
    expect(w.machine.sysctls).toEqual({ 'vm.swappiness': '10' });
    expect(w.machine.type).toBe('worker');
  });
});
