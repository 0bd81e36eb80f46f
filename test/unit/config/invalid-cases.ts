// Invalid machine configurations, one problem each, with the exact path and line validateConfig
// must report and a substring of its message. `$CRT`, `$KEY` and `$OTHER_KEY` stand for a real CA
// certificate, its key and another CA's key (base64 PEM), filled in by the test.
//
// Most cases are built by `config()` from a fixed base, so their lines are easy to check by hand:
//
//    1  version: v1alpha1
//    2  machine:
//    3    type: controlplane
//    4    token: abcdef.0123456789abcdef
//    5    ca:
//    6      crt: $CRT
//    7      key: $KEY
//    8    <machine snippet, m lines>
//  8+m  cluster:
//  9+m    clusterName: demo
// 10+m    controlPlane:
// 11+m      endpoint: https://10.0.0.1:6443
// 12+m    <cluster snippet, c lines>
// 12+m+c <top-level snippet>
//        <then `after`: more documents, starting with --->

export interface ConfigParts {
  type?: string;
  /** machine.ca.key as written; default $KEY on controlplanes, '' on workers. */
  key?: string;
  machine?: string;
  cluster?: string;
  top?: string;
  after?: string;
}

const indent = (s: string) =>
  s
    .replace(/^\n/, '')
    .replace(/\n$/, '')
    .split('\n')
    .map((l) => (l ? `  ${l}` : l))
    .join('\n');

const trim = (s: string) => s.replace(/^\n/, '').replace(/\n$/, '');

export function config(p: ConfigParts = {}): string {
  const type = p.type ?? 'controlplane';
  const key = p.key ?? (type === 'worker' ? "''" : '$KEY');
  const lines = ['version: v1alpha1', 'machine:', `  type: ${type}`, '  token: abcdef.0123456789abcdef', '  ca:', '    crt: $CRT', `    key: ${key}`];
  if (p.machine) lines.push(indent(p.machine));
  lines.push('cluster:', '  clusterName: demo', '  controlPlane:', '    endpoint: https://10.0.0.1:6443');
  if (p.cluster) lines.push(indent(p.cluster));
  if (p.top) lines.push(trim(p.top));
  let out = `${lines.join('\n')}\n`;
  if (p.after) out += `${trim(p.after)}\n`;
  return out;
}

export const worker = (p: Omit<ConfigParts, 'type'> = {}) => config({ ...p, type: 'worker' });

export interface InvalidCase {
  name: string;
  yaml: string;
  path: string;
  line: number;
  /** A substring of the message. */
  message: string;
  /** How many issues the config has in all (default 1). */
  count?: number;
  /** What the issue is (default: invalid, or missing for "expected ..." of an absent value). */
  kind?: 'invalid' | 'unsupported' | 'missing';
}

export const INVALID_CASES: InvalidCase[] = [
  // ---- YAML itself ----
  {
    name: 'YAML: a key twice in one mapping',
    yaml: config({ machine: 'certSANs: [a.example]\ncertSANs: [b.example]' }),
    path: '',
    line: 9,
    message: 'Map keys must be unique',
  },
  {
    name: 'YAML: an unclosed flow sequence',
    yaml: config({ machine: 'certSANs: [a.example, b.example' }),
    path: '',
    line: 9,
    message: 'invalid YAML: Flow sequence in block collection must be sufficiently indented and end with a ]',
  },

  // ---- documents ----
  {
    name: 'no document at all (only a comment)',
    yaml: '# nothing here\n',
    path: '',
    line: 1,
    message: 'the configuration is empty',
  },
  {
    name: 'two v1alpha1 documents',
    yaml: config({ after: '---\nversion: v1alpha1\n' }),
    path: 'version',
    line: 13,
    message: 'duplicate v1alpha1 document: the first starts at line 1',
  },
  {
    name: 'a document that is a list',
    yaml: config({ after: '---\n- a\n- b\n' }),
    path: 'document[1]',
    line: 13,
    message: 'must be a mapping, got a list',
  },
  {
    name: 'a document that is neither kind of document',
    yaml: config({ after: '---\nhostname: foo\n' }),
    path: 'document[1]',
    line: 13,
    message: 'neither the machine configuration',
  },

  // ---- top level ----
  {
    name: 'version other than v1alpha1',
    yaml: config().replace('version: v1alpha1', 'version: v1alpha2'),
    path: 'version',
    line: 1,
    message: 'the string "v1alpha2" is not allowed here: expected v1alpha1',
  },
  {
    name: 'unknown top-level field',
    yaml: config({ top: 'debugg: true' }),
    path: 'debugg',
    line: 12,
    message: 'unknown field "debugg": did you mean "debug"?',
  },
  {
    name: 'debug is not a boolean',
    yaml: config({ top: 'debug: maybe' }),
    path: 'debug',
    line: 12,
    message: 'expected true or false, got the string "maybe"',
  },
  {
    name: 'persist: false (Talos requires persistence)',
    yaml: config({ top: 'persist: false' }),
    path: 'persist',
    line: 12,
    message: 'must be true or left out',
  },
  {
    name: 'no cluster section',
    yaml: 'version: v1alpha1\nmachine:\n  type: worker\n  token: abcdef.0123456789abcdef\n  ca:\n    crt: $CRT\n',
    path: 'cluster',
    line: 1,
    message: 'expected a mapping',
  },

  // ---- machine: type, token, CA ----
  {
    name: 'machine type not controlplane or worker',
    yaml: config({ type: 'master' }),
    path: 'machine.type',
    line: 3,
    message: 'the string "master" is not allowed here: expected one of controlplane, worker',
  },
  {
    name: 'machine type missing (a worker, as in Talos) without the endpoint a worker needs',
    yaml: 'version: v1alpha1\nmachine:\n  token: abcdef.0123456789abcdef\n  ca:\n    crt: $CRT\ncluster:\n  clusterName: demo\n',
    path: 'cluster.controlPlane',
    line: 6,
    message: 'required on worker nodes: the control-plane endpoint',
    kind: 'missing',
  },
  {
    name: 'machine token not in Talos format',
    yaml: config().replace('abcdef.0123456789abcdef', 'ABCDEF.0123456789abcdef'),
    path: 'machine.token',
    line: 4,
    message: '"ABCDEF.0123456789abcdef" is not a valid machine token: expected 6 then 16 lowercase letters or digits',
  },
  {
    name: 'controlplane with an empty CA key',
    yaml: config({ key: "''" }),
    path: 'machine.ca.key',
    line: 7,
    message: 'the OS CA private key is required on controlplane nodes',
  },
  {
    name: 'controlplane without a CA key field',
    yaml: 'version: v1alpha1\nmachine:\n  type: controlplane\n  token: abcdef.0123456789abcdef\n  ca:\n    crt: $CRT\ncluster:\n  clusterName: demo\n',
    path: 'machine.ca.key',
    line: 5,
    message: 'required on controlplane nodes',
  },
  {
    name: 'worker carrying the CA key (Talos refuses it)',
    yaml: worker({ key: '$KEY' }),
    path: 'machine.ca.key',
    line: 7,
    message: 'not allowed on worker nodes',
  },
  {
    name: 'CA certificate not base64',
    yaml: config().replace('crt: $CRT', 'crt: "-----BEGIN CERTIFICATE-----"'),
    path: 'machine.ca.crt',
    line: 6,
    message: 'not base64: expected the base64 encoding of a PEM certificate',
  },
  {
    name: 'CA key base64 but not a PEM key',
    yaml: config({ key: 'aGVsbG8gd29ybGQ=' }),
    path: 'machine.ca.key',
    line: 7,
    message: 'the base64 decodes to no valid PEM private key',
  },
  {
    name: 'CA key of another CA',
    yaml: config({ key: '$OTHER_KEY' }),
    path: 'machine.ca.key',
    line: 7,
    message: 'the key does not belong to machine.ca.crt',
  },
  {
    name: 'certSANs entry with white space',
    yaml: config({ machine: 'certSANs:\n  - node 1.example' }),
    path: 'machine.certSANs[0]',
    line: 9,
    message: 'must not contain white space',
  },

  // ---- machine.network ----
  {
    name: 'hostname starting with "-"',
    yaml: config({ machine: 'network:\n  hostname: -bad-' }),
    path: 'machine.network.hostname',
    line: 9,
    message: '"-bad-" is not a valid hostname: label "-bad-" must consist of letters, digits and "-"',
  },
  {
    name: 'hostname label longer than 63',
    yaml: config({ machine: `network:\n  hostname: ${'a'.repeat(64)}.example` }),
    path: 'machine.network.hostname',
    line: 9,
    message: 'is 64 characters long, at most 63 are allowed',
  },
  {
    name: 'hostname longer than 253',
    yaml: config({ machine: `network:\n  hostname: ${Array.from({ length: 5 }, () => 'a'.repeat(60)).join('.')}` }),
    path: 'machine.network.hostname',
    line: 9,
    message: 'is 304 characters long, at most 253 are allowed',
  },
  {
    name: 'hostname with an underscore',
    yaml: config({ machine: 'network:\n  hostname: node_1' }),
    path: 'machine.network.hostname',
    line: 9,
    message: 'label "node_1" must consist of letters, digits and "-"',
  },
  {
    name: 'interfaces given as a mapping',
    yaml: config({ machine: 'network:\n  interfaces:\n    interface: eth0' }),
    path: 'machine.network.interfaces',
    line: 9,
    message: 'expected a list, got a mapping',
  },
  {
    name: 'interface with both a name and a device selector',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      deviceSelector:\n        driver: virtio_net' }),
    path: 'machine.network.interfaces[0].deviceSelector',
    line: 11,
    message: '"interface" and "deviceSelector" are mutually exclusive',
  },
  {
    name: 'interface with neither a name nor a device selector',
    yaml: config({ machine: 'network:\n  interfaces:\n    - dhcp: true' }),
    path: 'machine.network.interfaces[0]',
    line: 10,
    message: 'either "interface" (its name) or "deviceSelector" must be set',
  },
  {
    name: 'empty device selector',
    yaml: config({ machine: 'network:\n  interfaces:\n    - deviceSelector: {}\n      dhcp: true' }),
    path: 'machine.network.interfaces[0].deviceSelector',
    line: 10,
    message: 'an empty selector matches nothing',
  },
  {
    name: 'device selector field of the wrong type (list form)',
    yaml: config({ machine: 'network:\n  interfaces:\n    - deviceSelector:\n        - driver: virtio_net\n        - physical: sometimes' }),
    path: 'machine.network.interfaces[0].deviceSelector[1].physical',
    line: 12,
    message: 'expected true or false, got the string "sometimes"',
  },
  {
    name: 'the same interface twice',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      dhcp: true\n    - interface: eth0\n      mtu: 9000' }),
    path: 'machine.network.interfaces[1].interface',
    line: 12,
    message: 'duplicate interface "eth0": it is already configured at machine.network.interfaces[0]',
  },
  {
    name: 'interface name too long for Linux',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: enp0s31f6-uplink0' }),
    path: 'machine.network.interfaces[0].interface',
    line: 10,
    message: 'Linux allows at most 15',
  },
  {
    name: 'IPv4 prefix length out of range',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      addresses:\n        - 192.168.1.10/24\n        - 10.0.0.1/33' }),
    path: 'machine.network.interfaces[0].addresses[1]',
    line: 13,
    message: 'prefix length "33" is out of range: IPv4 allows 0 to 32',
  },
  {
    name: 'IPv6 prefix length out of range',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      addresses: [fd00::1/129]' }),
    path: 'machine.network.interfaces[0].addresses[0]',
    line: 11,
    message: 'IPv6 allows 0 to 128',
  },
  {
    name: 'address that is not an IP',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      addresses:\n        - 10.0.0/24' }),
    path: 'machine.network.interfaces[0].addresses[0]',
    line: 12,
    message: '"10.0.0" is not an IPv4 or IPv6 address',
  },
  {
    name: 'unspecified address',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      addresses:\n        - 0.0.0.0/0' }),
    path: 'machine.network.interfaces[0].addresses[0]',
    line: 12,
    message: 'the unspecified address 0.0.0.0 cannot be assigned',
  },
  {
    name: 'route network with host bits set',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      routes:\n        - network: 10.1.2.3/16\n          gateway: 10.1.0.1' }),
    path: 'machine.network.interfaces[0].routes[0].network',
    line: 12,
    message: 'host bits are set beyond /16: did you mean 10.1.0.0/16?',
  },
  {
    name: 'route gateway that is not an IP',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      routes:\n        - network: 0.0.0.0/0\n          gateway: router.lan' }),
    path: 'machine.network.interfaces[0].routes[0].gateway',
    line: 13,
    message: '"router.lan" is not a valid gateway: expected an IPv4 or IPv6 address',
  },
  {
    name: 'route gateway of the other address family',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      routes:\n        - network: 0.0.0.0/0\n          gateway: fe80::1' }),
    path: 'machine.network.interfaces[0].routes[0].gateway',
    line: 13,
    message: 'gateway fe80::1 is IPv6 but network 0.0.0.0/0 is IPv4',
  },
  {
    name: 'route with neither network nor gateway',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      routes:\n        - metric: 1024' }),
    path: 'machine.network.interfaces[0].routes[0]',
    line: 12,
    message: 'a route needs "network" (its destination), "gateway", or both',
  },
  {
    name: 'route metric negative',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      routes:\n        - network: 10.0.0.0/8\n          metric: -1' }),
    path: 'machine.network.interfaces[0].routes[0].metric',
    line: 13,
    message: '-1 is not a valid route metric: expected an integer from 0 to 4294967295',
  },
  {
    name: 'MTU below 576',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      mtu: 500' }),
    path: 'machine.network.interfaces[0].mtu',
    line: 11,
    message: '500 is not a valid MTU: expected an integer from 576 to 9216',
  },
  {
    name: 'MTU written as a string',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      mtu: "1500"' }),
    path: 'machine.network.interfaces[0].mtu',
    line: 11,
    message: 'expected a number, got the string "1500"',
  },
  {
    name: 'VLAN ID out of range',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      vlans:\n        - vlanId: 4095\n          dhcp: true' }),
    path: 'machine.network.interfaces[0].vlans[0].vlanId',
    line: 12,
    message: '4095 is not a valid VLAN ID: expected an integer from 1 to 4094',
  },
  {
    name: 'VLAN without an ID',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      vlans:\n        - dhcp: true' }),
    path: 'machine.network.interfaces[0].vlans[0].vlanId',
    line: 12,
    message: 'expected a number',
  },
  {
    name: 'the same VLAN twice on an interface',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      vlans:\n        - vlanId: 10\n          dhcp: true\n        - vlanId: 10\n          mtu: 1400' }),
    path: 'machine.network.interfaces[0].vlans[1].vlanId',
    line: 14,
    message: 'duplicate VLAN 10 on this interface: already at vlans[0]',
  },
  {
    name: 'VLAN MTU out of range',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      vlans:\n        - vlanId: 10\n          mtu: 10000' }),
    path: 'machine.network.interfaces[0].vlans[0].mtu',
    line: 13,
    message: '10000 is not a valid MTU',
  },
  {
    name: 'a Talos interface field Bronze does not implement',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: bond0\n      bond:\n        mode: 802.3ad' }),
    path: 'machine.network.interfaces[0].bond',
    line: 11,
    message: 'not implemented in Bronze: networkd makes bonds from BondConfig documents',
    kind: 'unsupported',
  },
  {
    name: 'misspelt interface field',
    yaml: config({ machine: 'network:\n  interfaces:\n    - interface: eth0\n      adresses: [10.0.0.2/24]' }),
    path: 'machine.network.interfaces[0].adresses',
    line: 11,
    message: 'unknown field "adresses": did you mean "addresses"?',
  },
  {
    name: 'nameserver that is not an IP',
    yaml: config({ machine: 'network:\n  nameservers:\n    - 1.1.1.1\n    - dns.example' }),
    path: 'machine.network.nameservers[1]',
    line: 11,
    message: '"dns.example" is not a valid IP address',
  },
  {
    name: 'search domain with a space',
    yaml: config({ machine: 'network:\n  searchDomains: ["exa mple.com"]' }),
    path: 'machine.network.searchDomains[0]',
    line: 9,
    message: '"exa mple.com" is not a valid search domain',
  },
  {
    name: 'extra host entry with a bad IP',
    yaml: config({ machine: 'network:\n  extraHostEntries:\n    - ip: 192.168.1.256\n      aliases: [db]' }),
    path: 'machine.network.extraHostEntries[0].ip',
    line: 10,
    message: '"192.168.1.256" is not a valid IP address',
  },
  {
    name: 'extra host entry without aliases',
    yaml: config({ machine: 'network:\n  extraHostEntries:\n    - ip: 192.168.1.20\n      aliases: []' }),
    path: 'machine.network.extraHostEntries[0].aliases',
    line: 11,
    message: 'must not be empty',
  },

  // ---- machine.install, time ----
  {
    name: 'install disk not an absolute path',
    yaml: config({ machine: 'install:\n  disk: sda' }),
    path: 'machine.install.disk',
    line: 9,
    message: '"sda" is not an absolute device path',
  },
  {
    name: 'extra kernel argument with white space',
    yaml: config({ machine: 'install:\n  disk: /dev/vda\n  extraKernelArgs:\n    - console=ttyS0 quiet' }),
    path: 'machine.install.extraKernelArgs[0]',
    line: 11,
    message: 'is not a single kernel argument',
  },
  {
    name: 'a Talos install field Bronze does not implement',
    yaml: config({ machine: 'install:\n  diskSelector:\n    size: ">= 1TB"' }),
    path: 'machine.install.diskSelector',
    line: 9,
    message: 'not implemented in Bronze: Bronze installs to machine.install.disk only',
    kind: 'unsupported',
  },
  {
    name: 'boot timeout not a Go duration',
    yaml: config({ machine: 'time:\n  bootTimeout: 2 minutes' }),
    path: 'machine.time.bootTimeout',
    line: 9,
    message: '"2 minutes" is not a valid duration: expected a Go duration such as 30s, 2m30s or 1h',
  },
  {
    name: 'negative boot timeout',
    yaml: config({ machine: 'time:\n  bootTimeout: -5s' }),
    path: 'machine.time.bootTimeout',
    line: 9,
    message: '"-5s" is negative',
  },
  {
    name: 'time server that is no host name',
    yaml: config({ machine: 'time:\n  servers:\n    - pool..ntp.org' }),
    path: 'machine.time.servers[0]',
    line: 10,
    message: '"pool..ntp.org" is not a valid time server',
  },
  {
    name: 'time server with a port out of range',
    yaml: config({ machine: 'time:\n  servers:\n    - 10.0.2.2:123\n    - ntp.example.org:70000' }),
    path: 'machine.time.servers[1]',
    line: 11,
    message: 'port 70000 is out of range',
  },

  // ---- sysctls, sysfs, env ----
  {
    name: 'sysctl key outside /proc/sys',
    yaml: config({ machine: 'sysctls:\n  net.ipv4.ip_forward: "1"\n  foo.bar: "1"' }),
    path: 'machine.sysctls["foo.bar"]',
    line: 10,
    message: '"foo" is not a /proc/sys directory',
  },
  {
    name: 'sysctl key with white space',
    yaml: config({ machine: 'sysctls:\n  "net.ipv4.ip forward": "1"' }),
    path: 'machine.sysctls["net.ipv4.ip forward"]',
    line: 9,
    message: 'is not a valid sysctl key: expected a dotted path under /proc/sys',
  },
  {
    name: 'sysctl value that is a mapping',
    yaml: config({ machine: 'sysctls:\n  vm.swappiness:\n    value: 10' }),
    path: 'machine.sysctls["vm.swappiness"]',
    line: 9,
    message: 'expected a string, got a mapping',
  },
  {
    name: 'sysfs key not a dotted path',
    yaml: config({ machine: 'sysfs:\n  /sys/kernel/mm/ksm/run: "1"' }),
    path: 'machine.sysfs["/sys/kernel/mm/ksm/run"]',
    line: 9,
    message: 'is not a valid sysfs key',
  },
  {
    name: 'environment variable name with a dash',
    yaml: config({ machine: 'env:\n  https_proxy: http://proxy:3128\n  NO-PROXY: localhost' }),
    path: 'machine.env.NO-PROXY',
    line: 10,
    message: '"NO-PROXY" is not a valid environment variable name',
  },
  {
    name: 'environment variable name starting with a digit',
    yaml: config({ machine: 'env:\n  1PROXY: x' }),
    path: 'machine.env.1PROXY',
    line: 9,
    message: 'expected a letter or "_" followed by letters, digits or "_"',
  },

  // ---- machine.files ----
  {
    name: 'file outside /var',
    yaml: config({ machine: 'files:\n  - content: hello\n    path: /etc/motd\n    op: create' }),
    path: 'machine.files[0].path',
    line: 10,
    message: '"/etc/motd" is outside /var: Bronze\'s root filesystem is read-only, so machine files can only be written under /var/',
  },
  {
    name: 'file path not absolute',
    yaml: config({ machine: 'files:\n  - content: hello\n    path: var/lib/x\n    op: create' }),
    path: 'machine.files[0].path',
    line: 10,
    message: 'it is not an absolute path',
  },
  {
    name: 'file path escaping /var with ..',
    yaml: config({ machine: 'files:\n  - content: hello\n    path: /var/../etc/shadow\n    op: overwrite' }),
    path: 'machine.files[0].path',
    line: 10,
    message: 'it must be normalised',
  },
  {
    name: 'file op not create, append or overwrite',
    yaml: config({ machine: 'files:\n  - content: hello\n    path: /var/etc/x\n    op: delete' }),
    path: 'machine.files[0].op',
    line: 11,
    message: 'the string "delete" is not allowed here: expected one of create, append, overwrite',
  },
  {
    name: 'file permissions beyond 0o7777',
    yaml: config({ machine: 'files:\n  - content: hello\n    path: /var/etc/x\n    op: create\n    permissions: 0o17777' }),
    path: 'machine.files[0].permissions',
    line: 12,
    message: '0o17777 is not a valid file mode',
  },
  {
    name: 'file without content',
    yaml: config({ machine: 'files:\n  - path: /var/etc/x\n    op: create' }),
    path: 'machine.files[0].content',
    line: 9,
    message: 'expected a string',
  },
  {
    name: 'the same file twice',
    yaml: config({ machine: 'files:\n  - {content: a, path: /var/etc/x, op: create}\n  - {content: b, path: /var/etc/x, op: append}' }),
    path: 'machine.files[1].path',
    line: 10,
    message: 'duplicate file "/var/etc/x": already written by machine.files[0]',
  },
  {
    name: 'a Talos machine field Bronze does not implement (udev rules)',
    yaml: config({ machine: 'features:\n  rbac: true\nudev:\n  rules: [\'SUBSYSTEM=="drm", GROUP="44"\']' }),
    path: 'machine.udev',
    line: 10,
    message: 'not implemented in Bronze: udevd applies no custom rules',
    kind: 'unsupported',
  },
  {
    name: 'a Talos machine section Bronze does not implement (remote logging)',
    yaml: config({ machine: 'logging:\n  destinations:\n    - endpoint: udp://127.0.0.1:12345/\n      format: json_lines' }),
    path: 'machine.logging',
    line: 8,
    message: 'not implemented in Bronze: machined sends no logs to remote destinations',
    kind: 'unsupported',
  },

  // ---- cluster ----
  {
    name: 'control plane endpoint over http',
    yaml: config().replace('https://10.0.0.1:6443', 'http://10.0.0.1:6443'),
    path: 'cluster.controlPlane.endpoint',
    line: 11,
    message: 'uses http: expected an https:// URL',
  },
  {
    name: 'control plane endpoint that is no URL',
    yaml: config().replace('https://10.0.0.1:6443', '10.0.0.1:6443'),
    path: 'cluster.controlPlane.endpoint',
    line: 11,
    message: '"10.0.0.1:6443" is not a URL: expected https://<host>:<port>',
  },
  {
    name: 'control plane endpoint with a path',
    yaml: config().replace('https://10.0.0.1:6443', 'https://10.0.0.1:6443/api'),
    path: 'cluster.controlPlane.endpoint',
    line: 11,
    message: 'must not have a path, query or fragment',
  },
  {
    name: 'bootstrap token not in Talos format',
    yaml: config({ cluster: 'token: wlzjyw.bei2zfylhs2by0w' }),
    path: 'cluster.token',
    line: 12,
    message: 'is not a valid bootstrap token',
  },
  {
    name: 'worker without the control plane endpoint',
    yaml: 'version: v1alpha1\nmachine:\n  type: worker\n  token: abcdef.0123456789abcdef\n  ca:\n    crt: $CRT\ncluster:\n  clusterName: demo\n',
    path: 'cluster.controlPlane',
    line: 7,
    message: 'required on worker nodes',
  },
  {
    name: 'worker with etcd settings',
    yaml: worker({ cluster: 'etcd:\n  advertisedSubnets: [10.0.0.0/8]' }),
    path: 'cluster.etcd',
    line: 12,
    message: 'etcd runs only on controlplane nodes',
  },
  {
    name: 'worker with the cluster CA key',
    yaml: worker({ cluster: 'ca:\n  crt: $CRT\n  key: $KEY' }),
    path: 'cluster.ca.key',
    line: 14,
    message: 'the cluster CA private key is not allowed on worker nodes',
  },
  {
    name: 'etcd argument Bronze sets itself',
    yaml: config({ cluster: 'etcd:\n  extraArgs:\n    election-timeout: "5000"\n    data-dir: /tmp/etcd' }),
    path: 'cluster.etcd.extraArgs.data-dir',
    line: 15,
    message: 'Bronze sets --data-dir itself',
  },
  {
    name: 'etcd advertised subnet that is no subnet',
    yaml: config({ cluster: 'etcd:\n  advertisedSubnets:\n    - 10.0.0.0/8\n    - "!10.300.0.0/16"' }),
    path: 'cluster.etcd.advertisedSubnets[1]',
    line: 15,
    message: 'is not a valid subnet',
  },
  {
    name: 'discovery service enabled without the cluster id',
    yaml: config({ cluster: 'secret: c2VjcmV0\ndiscovery:\n  enabled: true' }),
    path: 'cluster.id',
    line: 8,
    message: 'required when cluster discovery uses the discovery service',
  },
  {
    name: 'discovery service endpoint not a URL',
    yaml: config({ cluster: 'discovery:\n  enabled: false\n  registries:\n    service:\n      endpoint: discovery.example.com' }),
    path: 'cluster.discovery.registries.service.endpoint',
    line: 16,
    message: 'is not a URL',
  },
  {
    name: 'a Talos cluster field Bronze does not implement (etcd subnet)',
    yaml: config({ cluster: 'etcd:\n  subnet: 10.0.0.0/8' }),
    path: 'cluster.etcd.subnet',
    line: 13,
    message: 'not implemented in Bronze: the deprecated "subnet" is not read',
    kind: 'unsupported',
  },

  // ---- typed documents ----
  {
    name: 'HostnameConfig together with machine.network.hostname',
    yaml: config({ machine: 'network:\n  hostname: node-1', after: '---\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: node-2' }),
    path: 'HostnameConfig',
    line: 16,
    message: 'conflicts with machine.network.hostname (line 9) of the v1alpha1 document',
  },
  {
    name: 'HostnameConfig with auto: stable and machine.features.stableHostname',
    yaml: config({ machine: 'features:\n  stableHostname: true', after: '---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: stable' }),
    path: 'HostnameConfig',
    line: 16,
    message: 'conflicts with machine.features.stableHostname (line 9)',
  },
  {
    name: 'HostnameConfig with neither hostname nor auto',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: HostnameConfig' }),
    path: 'HostnameConfig',
    line: 13,
    message: 'either "hostname" or "auto" (stable or off) must be set',
  },
  {
    name: 'HostnameConfig with both hostname and auto: stable',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: stable\nhostname: node-1' }),
    path: 'HostnameConfig.auto',
    line: 15,
    message: '"auto: stable" and "hostname" cannot be set together',
  },
  {
    name: 'HostnameConfig with an unknown auto mode',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: addr' }),
    path: 'HostnameConfig.auto',
    line: 15,
    message: 'the string "addr" is not allowed here: expected one of stable, off',
  },
  {
    name: 'HostnameConfig with an invalid hostname',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: node..1' }),
    path: 'HostnameConfig.hostname',
    line: 15,
    message: 'it has an empty label',
  },
  {
    name: 'two HostnameConfig documents',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: stable\n---\napiVersion: v1alpha1\nkind: HostnameConfig\nauto: off' }),
    path: 'HostnameConfig',
    line: 18,
    message: 'duplicate HostnameConfig document: the first is at line 14; this kind may appear once',
  },
  {
    name: 'typed document with another apiVersion',
    yaml: config({ after: '---\napiVersion: v1alpha2\nkind: HostnameConfig\nauto: stable' }),
    path: 'HostnameConfig.apiVersion',
    line: 13,
    message: 'the string "v1alpha2" is not allowed here: expected v1alpha1',
  },
  {
    name: 'unknown kind',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: KubeSpanConfig\nenabled: true' }),
    path: 'KubeSpanConfig',
    line: 14,
    message: 'not implemented in Bronze: KubeSpan (the WireGuard mesh between nodes) would leave traffic unencrypted',
    kind: 'unsupported',
  },
  {
    name: 'LinkConfig address without a prefix length',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: LinkConfig\nname: eth0\naddresses:\n  - address: 192.168.1.10' }),
    path: 'LinkConfig(eth0).addresses[0].address',
    line: 17,
    message: 'the prefix length is missing',
  },
  {
    name: 'LinkConfig route gateway of the other family',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: LinkConfig\nname: eth0\nroutes:\n  - destination: fd00::/8\n    gateway: 10.0.0.1' }),
    path: 'LinkConfig(eth0).routes[0].gateway',
    line: 18,
    message: 'gateway 10.0.0.1 is IPv4 but destination fd00::/8 is IPv6',
  },
  {
    name: 'LinkConfig MTU out of range',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: LinkConfig\nname: eth1\nmtu: 65536' }),
    path: 'LinkConfig(eth1).mtu',
    line: 16,
    message: '65536 is not a valid MTU',
  },
  {
    name: 'LinkConfig without a name',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: LinkConfig\nup: true' }),
    path: 'LinkConfig.name',
    line: 13,
    message: 'expected a string',
  },
  {
    name: 'LinkConfig with an unknown field',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: LinkConfig\nname: eth0\nmtuu: 1500' }),
    path: 'LinkConfig(eth0).mtuu',
    line: 16,
    message: 'unknown field "mtuu": did you mean "mtu"?',
  },
  {
    name: 'two LinkConfig documents for one link',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: LinkConfig\nname: eth0\nmtu: 1500\n---\napiVersion: v1alpha1\nkind: LinkConfig\nname: eth0\nup: false' }),
    path: 'LinkConfig(eth0)',
    line: 19,
    message: 'duplicate LinkConfig(eth0) document: the first is at line 14; each name may appear once',
  },
  {
    name: 'ResolverConfig nameserver that is not an IP',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: ResolverConfig\nnameservers:\n  - address: 1.1.1.1\n  - address: one.one.one.one' }),
    path: 'ResolverConfig.nameservers[1].address',
    line: 17,
    message: '"one.one.one.one" is not a valid IP address',
  },
  {
    name: 'ResolverConfig together with machine.network.nameservers',
    yaml: config({ machine: 'network:\n  nameservers: [9.9.9.9]', after: '---\napiVersion: v1alpha1\nkind: ResolverConfig\nnameservers:\n  - address: 1.1.1.1' }),
    path: 'ResolverConfig',
    line: 16,
    message: 'conflicts with machine.network.nameservers (line 9)',
  },
  {
    name: 'ResolverConfig with a Talos field Bronze does not implement (DNS over TLS)',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: ResolverConfig\nnameservers:\n  - address: 1.1.1.1\n    protocol: tls' }),
    path: 'ResolverConfig.nameservers[0].protocol',
    line: 17,
    message: 'not implemented in Bronze: the node resolves over plain DNS only',
    kind: 'unsupported',
  },
  {
    name: 'TimeSyncConfig with a bad boot timeout',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: TimeSyncConfig\nbootTimeout: 10x' }),
    path: 'TimeSyncConfig.bootTimeout',
    line: 15,
    message: '"10x" is not a valid duration',
  },
  {
    name: 'TimeSyncConfig together with machine.time.servers',
    yaml: config({ machine: 'time:\n  servers: [time.cloudflare.com]', after: '---\napiVersion: v1alpha1\nkind: TimeSyncConfig\nntp:\n  servers: [pool.ntp.org]' }),
    path: 'TimeSyncConfig',
    line: 16,
    message: 'conflicts with machine.time.servers (line 9)',
  },
  {
    name: 'DHCPv4Config route metric negative',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: DHCPv4Config\nname: eth0\nrouteMetric: -10' }),
    path: 'DHCPv4Config(eth0).routeMetric',
    line: 16,
    message: '-10 is not a valid route metric',
  },
  {
    name: 'DHCPv4Config DUID client identifier without the DUID',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: DHCPv4Config\nname: eth0\nclientIdentifier: duid' }),
    path: 'DHCPv4Config(eth0).clientIdentifier',
    line: 16,
    message: '"clientIdentifier: duid" needs duidRaw',
  },
  {
    name: 'disk encryption without keys',
    yaml: config({ machine: 'systemDiskEncryption:\n  state:\n    provider: luks2\n    keys: []' }),
    path: 'machine.systemDiskEncryption.state.keys',
    line: 11,
    message: 'partition "STATE": no encryption keys provided',
  },
  {
    name: 'disk encryption: two keys in one slot',
    yaml: config({ machine: 'systemDiskEncryption:\n  ephemeral:\n    keys:\n      - nodeID: {}\n        slot: 0\n      - static:\n          passphrase: x\n        slot: 0' }),
    path: 'machine.systemDiskEncryption.ephemeral.keys[1].slot',
    line: 15,
    message: 'partition "EPHEMERAL": encryption key slot 0 is already in use',
  },
  {
    name: 'disk encryption: a key without a source',
    yaml: config({ machine: 'systemDiskEncryption:\n  ephemeral:\n    keys:\n      - slot: 2' }),
    path: 'machine.systemDiskEncryption.ephemeral.keys[0]',
    line: 11,
    message: "encryption key at slot 2 doesn't have the configuration parameters",
  },
  {
    name: 'disk encryption: Adiantum',
    yaml: config({ machine: 'systemDiskEncryption:\n  state:\n    cipher: xchacha12,aes-adiantum-plain64\n    keys:\n      - nodeID: {}\n        slot: 0' }),
    path: 'machine.systemDiskEncryption.state.cipher',
    line: 10,
    message: "Bronze's kernel has no Adiantum",
  },
  {
    name: 'disk encryption: a 1024-byte sector',
    yaml: config({ machine: 'systemDiskEncryption:\n  state:\n    blockSize: 1024\n    keys:\n      - nodeID: {}\n        slot: 0' }),
    path: 'machine.systemDiskEncryption.state.blockSize',
    line: 10,
    message: '1024 is not an encryption sector size Bronze uses: expected 512 or 4096',
  },
  {
    name: 'disk encryption: a key slot past 31',
    yaml: config({ machine: 'systemDiskEncryption:\n  state:\n    keys:\n      - nodeID: {}\n        slot: 32' }),
    path: 'machine.systemDiskEncryption.state.keys[0].slot',
    line: 12,
    message: '32 is not a valid LUKS2 key slot: expected an integer from 0 to 31',
  },
  {
    name: 'disk encryption: a TPM key',
    yaml: config({ machine: 'systemDiskEncryption:\n  ephemeral:\n    keys:\n      - tpm: {}\n        slot: 0' }),
    path: 'machine.systemDiskEncryption.ephemeral.keys[0].tpm',
    line: 11,
    message: 'not implemented in Bronze: Bronze does not seal keys to a TPM',
  },
  {
    name: 'disk encryption for EPHEMERAL in both v1alpha1 and a VolumeConfig',
    yaml: config({
      machine: 'systemDiskEncryption:\n  ephemeral:\n    keys:\n      - nodeID: {}\n        slot: 0',
      after: '---\napiVersion: v1alpha1\nkind: VolumeConfig\nname: EPHEMERAL\nencryption:\n  keys:\n    - nodeID: {}\n      slot: 0',
    }),
    path: 'VolumeConfig(EPHEMERAL)',
    line: 19,
    message: 'conflicts with machine.systemDiskEncryption.ephemeral (line 9) of the v1alpha1 document',
  },
  {
    name: 'a VolumeConfig for STATE with mount options',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: VolumeConfig\nname: STATE\nmount:\n  disableAccessTime: true' }),
    path: 'VolumeConfig(STATE).mount',
    line: 16,
    message: "not implemented in Bronze: STATE's mount is fixed; a VolumeConfig for STATE sets its encryption only",
  },
  {
    name: 'a VolumeConfig encryption key without a source',
    yaml: config({ after: '---\napiVersion: v1alpha1\nkind: VolumeConfig\nname: STATE\nencryption:\n  keys:\n    - slot: 3' }),
    path: 'VolumeConfig(STATE).encryption.keys[0]',
    line: 18,
    message: "encryption key at slot 3 doesn't have the configuration parameters",
  },
];
