import { describe, expect, it } from 'vitest';
import { generateConfigs } from '../../contract/genconfig.ts';
import { generateSecrets } from '../../contract/secrets.ts';
import { clusterSettingsReader, endpointHost } from './config.ts';

describe('cluster settings from the configuration', () => {
  it('the control-plane endpoint host', () => {
    expect(endpointHost('https://10.5.0.2:6443')).toBe('10.5.0.2');
    expect(endpointHost('https://[fd00::1]:6443')).toBe('fd00::1');
    expect(endpointHost('https://cp.example:6443')).toBe('cp.example');
    expect(endpointHost(undefined)).toBeUndefined();
  });

  it('a control plane has the etcd CA; a worker has the token and the OS CA but no etcd CA', async () => {
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'c', endpoint: 'https://10.5.0.2:6443', secrets });
    let text = cfg.controlplane;
    const read = clusterSettingsReader(() => text);
    const cp = read();
    expect(cp).toMatchObject({ machineType: 'controlplane', controlPlaneHost: '10.5.0.2' });
    expect(cp.etcd?.ca?.crt).toMatch(/BEGIN CERTIFICATE/);
    expect(cp.etcd?.ca?.key).toMatch(/PRIVATE KEY/);
    expect(read()).toBe(cp); // read once per text
    text = cfg.worker;
    const w = read();
    expect(w).toMatchObject({ machineType: 'worker', controlPlaneHost: '10.5.0.2' });
    expect(w.etcd?.ca).toBeUndefined();
    expect(w.token).toMatch(/^[a-z0-9]{6}\.[a-z0-9]{16}$/);
    expect(w.osCaCrt).toMatch(/BEGIN CERTIFICATE/);
  });
});
