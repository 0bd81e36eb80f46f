import { beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { generateConfigs, normaliseEndpoint } from './genconfig.ts';
import { generateSecrets, type SecretsBundle } from './secrets.ts';
import { fromBase64Pem } from '../pki/pem.ts';

let secrets: SecretsBundle;
beforeAll(async () => {
  secrets = await generateSecrets();
});

describe('normaliseEndpoint', () => {
  it.each([
    ['https://10.5.0.2:6443', 'https://10.5.0.2:6443'],
    ['https://10.5.0.2:6443/', 'https://10.5.0.2:6443'],
    ['HTTPS://cp.example.org', 'https://cp.example.org:6443'],
    ['https://cp.example.org:443', 'https://cp.example.org:443'],
    ['10.5.0.2', 'https://10.5.0.2:6443'],
    ['10.5.0.2:50000', 'https://10.5.0.2:50000'],
    ['cp.example.org', 'https://cp.example.org:6443'],
    ['  cp  ', 'https://cp:6443'],
    ['fd00::2', 'https://[fd00::2]:6443'],
    ['[fd00::2]:7443', 'https://[fd00::2]:7443'],
    ['https://[fd00::2]', 'https://[fd00::2]:6443'],
  ])('%s → %s', (input, want) => {
    expect(normaliseEndpoint(input)).toBe(want);
  });

  it.each([
    ['', /empty/],
    ['http://10.5.0.2:6443', /scheme must be https/],
    ['https://10.5.0.2:6443/api', /path/],
    ['https://u:p@10.5.0.2', /credentials/],
    ['10.5.0.2:99999', /not a host|out of range/],
    ['10.5.0.2:x', /not a host|invalid port/],
    ['a b', /not a host/],
  ])('rejects %j', (input, want) => {
    expect(() => normaliseEndpoint(input)).toThrow(want);
  });
});

describe('generateConfigs', () => {
  it('writes v1alpha1 control plane and worker configs from the secrets', () => {
    const out = generateConfigs({
      clusterName: 'lab',
      endpoint: '10.5.0.2',
      additionalSANs: ['lab.example.org', '10.5.0.100', 'lab.example.org'],
      secrets,
    });
    const cp = YAML.parse(out.controlplane);
    const w = YAML.parse(out.worker);
    expect(Object.keys(cp)).toEqual(['version', 'debug', 'machine', 'cluster']);
    expect(cp.version).toBe('v1alpha1');
    expect(cp.debug).toBe(false);
    expect(Object.keys(cp.machine)).toEqual(['type', 'token', 'ca', 'certSANs', 'network', 'install', 'time']);
    expect(cp.machine.type).toBe('controlplane');
    expect(w.machine.type).toBe('worker');
    for (const c of [cp, w]) {
      expect(c.machine.token).toBe(secrets.trustdinfo.token);
      expect(fromBase64Pem(c.machine.ca.crt)).toBe(secrets.certs.os.crt);
      expect(c.machine.certSANs).toEqual(['lab.example.org', '10.5.0.100']);
      expect(c.machine.network).toEqual({});
      expect(c.machine.install).toEqual({});
      expect(c.machine.time).toEqual({});
      const { etcd, ...cluster } = c.cluster;
      expect(cluster).toEqual({
        id: secrets.cluster.id,
        secret: secrets.cluster.secret,
        clusterName: 'lab',
        controlPlane: { endpoint: 'https://10.5.0.2:6443' },
        token: secrets.secrets.bootstraptoken,
      });
    }
    // The etcd CA (cluster.etcd.ca, as Talos) is on the control plane only.
    expect(fromBase64Pem(cp.cluster.etcd.ca.crt)).toBe(secrets.certs.etcd!.crt);
    expect(fromBase64Pem(cp.cluster.etcd.ca.key)).toBe(secrets.certs.etcd!.key);
    expect(w.cluster.etcd).toBeUndefined();
    // Only the control plane holds the CA key; the worker gets an empty string, as in Talos.
    expect(fromBase64Pem(cp.machine.ca.key)).toBe(secrets.certs.os.key);
    expect(w.machine.ca.key).toBe('');
    expect(out.worker).not.toContain(cp.machine.ca.key);
  });

  it('adds install fields only when given, and leaves out cluster.token without a bootstrap token', () => {
    const out = generateConfigs({
      clusterName: 'lab',
      endpoint: 'https://cp.lab:6443',
      secrets: { ...secrets, secrets: {} },
      installDisk: '/dev/vda',
      installImage: 'ghcr.io/example/bronze-installer:v0.1.0',
    });
    const cp = YAML.parse(out.controlplane);
    expect(cp.machine.install).toEqual({ disk: '/dev/vda', image: 'ghcr.io/example/bronze-installer:v0.1.0' });
    expect(cp.machine.certSANs).toEqual([]);
    expect('token' in cp.cluster).toBe(false);
  });

  it('rejects a bad cluster name, endpoint or SAN', () => {
    expect(() => generateConfigs({ clusterName: ' ', endpoint: 'cp', secrets })).toThrow(/clusterName/);
    expect(() => generateConfigs({ clusterName: 'a b', endpoint: 'cp', secrets })).toThrow(/clusterName/);
    expect(() => generateConfigs({ clusterName: 'a', endpoint: 'ftp://cp', secrets })).toThrow(/endpoint/);
    expect(() => generateConfigs({ clusterName: 'a', endpoint: 'cp', additionalSANs: ['x y'], secrets })).toThrow(/additionalSANs/);
  });
});
