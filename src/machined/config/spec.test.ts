// The MachineConfig resource of a Talos configuration shows what Bronze ignores (issue 15): the
// validator's warnings as comments atop its text, which YAML readers skip.
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { machineConfigSpec as specOfText, machineConfigText } from '../../contract/resources/machine-config-text.ts';
import { generateKeyPairSync } from 'node:crypto';
import { talosCA, talosKeyPem } from '../../../test/lib/talos-pki.ts';
import { talosShapedConfig, type TalosSecrets } from '../../../test/unit/config/talos-configs.ts';
import { parsedConfig } from './parsed.ts';
import { machineConfigSpec } from './spec.ts';

describe('the MachineConfig spec', () => {
  it('carries the warnings, shown as comments in its text, and the documents as read', async () => {
    const [os, k8s, etcd] = await Promise.all([talosCA('ec-p256'), talosCA('ec-p256'), talosCA('ec-p256')]);
    const secrets: TalosSecrets = { os, k8s, aggregator: k8s, etcd, serviceAccountKey: talosKeyPem(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey) };
    const cfg = talosShapedConfig('v1.14', 'controlplane', secrets);
    const spec = machineConfigSpec(parsedConfig(cfg.yaml));
    expect(spec.warnings?.some((w) => /KubeletConfig \(line \d+\): ignored: Bronze runs no Kubernetes/.test(w))).toBe(true);
    const text = machineConfigText(spec);
    expect(text.split('\n')[0]).toMatch(/^# warning: /);
    expect(text).toMatch(/^# warning: .*ignored: Bronze runs no Kubernetes$/m);
    // Comments aside, the same documents.
    expect(specOfText(text)).toEqual({ v1alpha1: spec.v1alpha1, documents: spec.documents });
    expect(YAML.parseAllDocuments(text).every((d) => d.errors.length === 0)).toBe(true);
  });

  it('has no comments when there is nothing to say', () => {
    const text = machineConfigText({ v1alpha1: {}, documents: [{ apiVersion: 'v1alpha1', kind: 'HostnameConfig', hostname: 'a' }] });
    expect(text).toBe('apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: a\n');
  });
});
