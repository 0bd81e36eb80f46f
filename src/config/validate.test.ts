import { beforeAll, describe, expect, it } from 'vitest';
import { newCA } from '../pki/ca.ts';
import { toBase64Pem } from '../pki/pem.ts';
import { generateSecrets } from '../contract/secrets.ts';
import { generateConfigs } from '../contract/genconfig.ts';
import { INVALID_CASES, config, worker } from '../../test/unit/config/invalid-cases.ts';
import { ALL_FIELDS, MULTI_DOC, VALID_CASES } from '../../test/unit/config/valid-cases.ts';
import { documentsOfKind } from './kinds.ts';
import { hasHostBits, maskedPrefix, parseGoDuration, parseIPPrefix, sysctlKeyError } from './formats.ts';
import { ConfigValidationError, formatIssues, parseConfig, validateConfig, type ConfigIssue } from './validate.ts';

let fill: (yaml: string) => string;

beforeAll(async () => {
  const [ca, other] = await Promise.all([
    newCA({ commonName: 'bronze', organization: 'bronze', validityDays: 1 }),
    newCA({ commonName: 'other', organization: 'other', validityDays: 1 }),
  ]);
  const values: Record<string, string> = { $CRT: toBase64Pem(ca.crt), $KEY: toBase64Pem(ca.key), $OTHER_KEY: toBase64Pem(other.key) };
  fill = (yaml) => yaml.replace(/\$(CRT|KEY|OTHER_KEY)\b/g, (m) => values[m]!);
});

function errorsOf(yaml: string): ConfigIssue[] {
  const r = validateConfig(fill(yaml));
  if (r.ok) throw new Error('expected the configuration to be invalid');
  return r.errors;
}

describe('validateConfig: invalid configurations', () => {
  it('has a table of at least 45 cases', () => {
    expect(INVALID_CASES.length).toBeGreaterThanOrEqual(45);
    expect(new Set(INVALID_CASES.map((c) => c.name)).size).toBe(INVALID_CASES.length);
  });

  it.each(INVALID_CASES.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const errors = errorsOf(c.yaml);
    const match = errors.find((e) => e.path === c.path && e.line === c.line && e.message.includes(c.message));
    expect(match, `want ${c.path} (line ${c.line}): …${c.message}…\ngot:\n${formatIssues(errors)}`).toBeDefined();
    expect(errors, formatIssues(errors)).toHaveLength(c.count ?? 1);
    expect(match!.column).toBeGreaterThanOrEqual(1);
    // Every refusal says whether the field is invalid, unsupported or needs a value.
    expect(['invalid', 'unsupported', 'missing']).toContain(match!.kind);
    if (c.kind) expect(match!.kind).toBe(c.kind);
  });
});

describe('validateConfig: valid configurations', () => {
  it.each(VALID_CASES.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const r = validateConfig(fill(c.yaml));
    expect(r.ok, r.ok ? '' : formatIssues(r.errors)).toBe(true);
  });

  it('gives typed access to every field', () => {
    const { v1alpha1, documents } = parseConfig(fill(ALL_FIELDS));
    const c = v1alpha1!;
    expect(documents).toEqual([]);
    expect(c.machine.type).toBe('controlplane');
    expect(c.machine.network?.interfaces?.[0]?.vlans?.[0]?.vlanId).toBe(100);
    expect(c.machine.network?.interfaces?.[2]?.deviceSelector).toEqual([{ busPath: '00:*' }, { pciID: '1af4:*', permanentAddr: '52:54:00:*' }]);
    expect(c.machine.files?.[0]).toEqual({ content: 'hello\n', permissions: 0o644, path: '/var/etc/hello.txt', op: 'create' });
    expect(c.machine.time?.bootTimeout).toBe('2m30s');
    expect(c.machine.env?.GRPC_GO_LOG_VERBOSITY_LEVEL).toBe('99');
    expect(c.cluster.controlPlane?.endpoint).toBe('https://10.0.0.1:6443');
    expect(c.cluster.discovery?.registries?.service?.endpoint).toBe('https://discovery.talos.dev/');
  });

  it('reads Talos YAML habits as Talos does', () => {
    const c = parseConfig(fill(VALID_CASES.find((v) => v.name.startsWith("Talos YAML habits"))!.yaml)).v1alpha1!;
    expect(c.debug).toBe(false);
    expect(c.machine.network?.hostname).toBeUndefined();
    expect(c.machine.network?.interfaces?.[0]?.dhcp).toBe(true);
    expect(c.machine.sysctls).toEqual({ 'vm.swappiness': '10', 'net.ipv4.ip_forward': 'true' });
    expect(c.machine.files?.[0]?.permissions).toBe(0o644);
  });

  it('returns the typed documents of a multi-document stream', () => {
    const { documents } = parseConfig(fill(MULTI_DOC));
    expect(documents.map((d) => d.kind)).toEqual(['HostnameConfig', 'ResolverConfig', 'TimeSyncConfig', 'LinkConfig', 'LinkConfig', 'DHCPv4Config']);
    const links = documentsOfKind(documents, 'LinkConfig');
    expect(links.map((l) => [l.name, l.mtu])).toEqual([['eth0', 9000], ['eth1', 1500]]);
    expect(links[0]!.addresses?.[0]).toEqual({ address: '192.168.1.100/24', routePriority: 100 });
    expect(documentsOfKind(documents, 'HostnameConfig')[0]!.auto).toBe('stable');
    expect(documentsOfKind(documents, 'DHCPv4Config')[0]!.clientIdentifier).toBe('duid');
  });

  it('accepts what gen config generates, for a control plane and a worker', async () => {
    const secrets = await generateSecrets();
    const configs = generateConfigs({ clusterName: 'demo', endpoint: '10.0.0.1', secrets, additionalSANs: ['10.0.0.10'], installDisk: '/dev/vda' });
    for (const [type, text] of Object.entries(configs)) {
      const r = validateConfig(text);
      expect(r.ok, `${type}:\n${r.ok ? '' : formatIssues(r.errors)}`).toBe(true);
      if (r.ok) expect(r.config.v1alpha1!.machine.type).toBe(type);
    }
  });
});

describe('validateConfig: reporting', () => {
  it('lists every problem, in the order of the text', () => {
    const errors = errorsOf(
      config({
        machine: 'network:\n  hostname: -bad-\n  interfaces:\n    - interface: eth0\n      addresses: [10.0.0.1/33]\n      mtu: 10\n  nameservers: [1.1.1]',
        cluster: 'token: nope',
        after: '---\napiVersion: v1alpha1\nkind: LinkConfig\nname: eth0\nmtu: 1',
      }),
    );
    expect(errors.map((e) => `${e.path}:${e.line}`)).toEqual([
      'machine.network.hostname:9',
      'machine.network.interfaces[0].addresses[0]:12',
      'machine.network.interfaces[0].mtu:13',
      'machine.network.nameservers[0]:14',
      'cluster.token:19',
      'LinkConfig(eth0).mtu:24',
    ]);
  });

  it('reports a bad key and a bad value of the same map, and a bad field beside an unknown one', () => {
    const errors = errorsOf(config({ machine: 'sysctls:\n  bad key: "1"\n  vm.swappiness: [10]\ntime:\n  bootTimeout: soon\n  zone: UTC' }));
    expect(errors.map((e) => `${e.path}:${e.line}`)).toEqual([
      'machine.sysctls["bad key"]:9',
      'machine.sysctls["vm.swappiness"]:10',
      'machine.time.bootTimeout:12',
      'machine.time.zone:13',
    ]);
  });

  it('points at the value: line and column', () => {
    const [e] = errorsOf(config({ machine: 'network:\n  hostname: -bad-' }));
    expect(e).toMatchObject({ path: 'machine.network.hostname', line: 9, column: 15 });
  });

  it('formats issues one per line', () => {
    const errors = errorsOf(config({ machine: 'network:\n  hostname: -bad-\n  nameservers: [x]' }));
    expect(formatIssues(errors).split('\n')).toEqual([
      'machine.network.hostname (line 9): invalid: "-bad-" is not a valid hostname: label "-bad-" must consist of letters, digits and "-", and start and end with a letter or digit (RFC 1123)',
      expect.stringMatching(/^machine\.network\.nameservers\[0\] \(line 10\): invalid: "x" is not a valid IP address/),
    ]);
    expect(formatIssues([{ path: '', line: 3, column: 1, message: 'invalid YAML: x' }])).toBe('line 3: invalid YAML: x');
  });

  it('says a YAML problem once, even where the parser reports it twice (issue 17)', () => {
    const errors = errorsOf(config({ machine: 'network:\n  hostname: demo: x: y' }));
    expect(formatIssues(errors).split('\n')).toEqual(['line 9: invalid YAML: Nested mappings are not allowed in compact mappings']);
  });

  it('parseConfig throws every issue at once', () => {
    let thrown: unknown;
    try {
      parseConfig(fill(worker({ key: '$KEY', machine: 'network:\n  hostname: a_b' })));
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ConfigValidationError);
    expect((thrown as ConfigValidationError).issues.map((i) => i.path)).toEqual(['machine.ca.key', 'machine.network.hostname']);
    expect((thrown as Error).message).toContain('machine.ca.key (line 7)');
  });

  it('suggests the known fields of an object for an unknown one', () => {
    const [e] = errorsOf(config({ machine: 'time:\n  zone: UTC' }));
    expect(e!.message).toBe('unknown field "zone": expected one of disabled, servers, bootTimeout');
  });
});

describe('format helpers', () => {
  it('parses Go durations', () => {
    expect(parseGoDuration('2m30s')).toBe(150_000);
    expect(parseGoDuration('1h0m0s')).toBe(3_600_000);
    expect(parseGoDuration('1.5s')).toBe(1500);
    expect(parseGoDuration('500ms')).toBe(500);
    expect(parseGoDuration('0')).toBe(0);
    expect(parseGoDuration('-1m')).toBe(-60_000);
    for (const bad of ['', '5', '1d', '2 m', 'm', '1h-5m']) expect(parseGoDuration(bad), bad).toBeUndefined();
  });

  it('parses prefixes and finds host bits, IPv4 and IPv6', () => {
    const p = parseIPPrefix('2001:db8::1/32');
    expect(typeof p === 'object' && hasHostBits(p)).toBe(true);
    expect(typeof p === 'object' && maskedPrefix(p)).toBe('2001:db8::/32');
    const q = parseIPPrefix('::ffff:10.1.2.3/120');
    expect(typeof q === 'object' && maskedPrefix(q)).toBe('::ffff:a01:200/120');
    const r = parseIPPrefix('10.0.0.0/8');
    expect(typeof r === 'object' && hasHostBits(r)).toBe(false);
    expect(parseIPPrefix('10.0.0.1')).toMatch(/prefix length is missing/);
    expect(parseIPPrefix('10.0.0.1', true)).toMatchObject({ family: 4, bits: 32 });
  });

  it('checks sysctl keys in both spellings', () => {
    expect(sysctlKeyError('net.ipv4.ip_forward')).toBeUndefined();
    expect(sysctlKeyError('net/ipv6/conf/eth0.100/disable_ipv6')).toBeUndefined();
    expect(sysctlKeyError('net.ipv6.conf.eth0.100.disable_ipv6')).toBeUndefined();
    expect(sysctlKeyError('ip_forward')).toMatch(/dotted path/);
    expect(sysctlKeyError('net..ipv4')).toMatch(/dotted path/);
  });
});

describe('the MTU bound, settled once (config/fields.ts MTU_RANGE; networkd keeps no second check)', () => {
  const withMtu = (mtu: number, vlan = false) =>
    config({ machine: vlan ? `network:\n  interfaces:\n    - interface: eth0\n      vlans:\n        - vlanId: 7\n          mtu: ${mtu}` : `network:\n  interfaces:\n    - interface: eth0\n      mtu: ${mtu}` });
  it.each([false, true])('576 and 9216 pass, 575 and 9217 do not (on a VLAN: %s)', (vlan) => {
    for (const ok of [576, 1500, 9216]) expect(validateConfig(fill(withMtu(ok, vlan))).ok, String(ok)).toBe(true);
    for (const bad of [575, 9217, 65535]) expect(errorsOf(withMtu(bad, vlan)).map((e) => e.message), String(bad)).toEqual([`${bad} is not a valid MTU: expected an integer from 576 to 9216`]);
  });

  it('holds for a LinkConfig document too: networkd reads the typed documents machined validated, unchecked', () => {
    const r = validateConfig('apiVersion: v1alpha1\nkind: LinkConfig\nname: eth0\nmtu: 65535\n');
    expect(r.ok).toBe(false);
    if (!r.ok) expect(formatIssues(r.errors)).toMatch(/LinkConfig\(eth0\)\.mtu .*65535 is not a valid MTU: expected an integer from 576 to 9216/);
  });
});
