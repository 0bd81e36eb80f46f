import { generateKeyPairSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { talosCA, talosKeyPem } from '../../../test/lib/talos-pki.ts';
import { talosShapedConfig, type TalosSecrets } from '../../../test/unit/config/talos-configs.ts';
import { ConfigError, nodeIdentity } from './identity.ts';

let secrets: TalosSecrets;

beforeAll(async () => {
  const [os, k8s, etcd] = await Promise.all([talosCA('ec-p256'), talosCA('ec-p256'), talosCA('ec-p256')]);
  secrets = { os, k8s, aggregator: k8s, etcd, serviceAccountKey: talosKeyPem(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey) };
});

describe('nodeIdentity from Talos configurations', () => {
  it('reads a v1.14 worker: the endpoint from KubeClusterConfig, no CA key', () => {
    const id = nodeIdentity(talosShapedConfig('v1.14', 'worker', secrets).yaml);
    expect(id).toMatchObject({ type: 'worker', controlPlaneHost: '192.168.122.10', clusterName: 'talos-shaped', token: 'ifn3xh.cvo39rklmy5m2lqr' });
    expect(id.ca.key).toBeUndefined();
    expect(id.ca.crt).toBe(secrets.os.crt);
  });

  it('reads a v1.13 control plane with its SEC1 EC OS CA key, and "join" as a worker', () => {
    const cp = nodeIdentity(talosShapedConfig('v1.13', 'controlplane', secrets).yaml);
    expect(cp.type).toBe('controlplane');
    expect(cp.ca.key).toBe(secrets.os.key);
    const join = nodeIdentity(talosShapedConfig('v1.11', 'worker', secrets).yaml.replace('type: worker', 'type: join'));
    expect(join.type).toBe('worker');
  });

  it('has no identity without the v1alpha1 document', () => {
    expect(() => nodeIdentity('apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: a\n')).toThrow(ConfigError);
  });
});
