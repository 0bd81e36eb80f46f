// The MachineConfig resource of a Talos configuration shows what Bronze ignores (issue 15): the
// validator's warnings as comments atop its text, which YAML readers skip.
import { describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { machineConfigDocuments, machineConfigText } from '../../contract/resources/machine-config-text.ts';
import { generateKeyPairSync } from 'node:crypto';
import { talosCA, talosKeyPem } from '../../../test/lib/talos-pki.ts';
import { talosShapedConfig, type TalosSecrets } from '../../../test/unit/config/talos-configs.ts';
import { generateConfigs } from '../../contract/genconfig.ts';
import { generateSecrets } from '../../contract/secrets.ts';
import { parsedMachineConfigDefinition } from '../../contract/resources/parsed-machine-config.ts';
import { specFromYaml, yamlSpec } from '../../contract/resources/wire.ts';
import { parsedConfig } from './parsed.ts';
import { machineConfigSpec, parsedMachineConfigSpec } from './spec.ts';

describe('the MachineConfig spec', () => {
  it('carries the warnings, shown as comments in its text, and the documents as read', async () => {
    const [os, k8s, etcd] = await Promise.all([talosCA('ec-p256'), talosCA('ec-p256'), talosCA('ec-p256')]);
    const secrets: TalosSecrets = { os, k8s, aggregator: k8s, etcd, serviceAccountKey: talosKeyPem(generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey) };
    const cfg = talosShapedConfig('v1.14', 'controlplane', secrets);
    const parsed = parsedConfig(cfg.yaml);
    const spec = machineConfigSpec(parsed);
    // What the controllers read is the validator's typed configuration itself.
    expect(spec.v1alpha1).toBe(parsed.v1alpha1);
    expect(spec.documents).toBe(parsed.documents);
    expect(spec.warnings?.some((w) => /KubeletConfig \(line \d+\): ignored: Bronze runs no Kubernetes/.test(w))).toBe(true);
    const text = machineConfigText(spec);
    expect(text.split('\n')[0]).toMatch(/^# warning: /);
    expect(text).toMatch(/^# warning: .*ignored: Bronze runs no Kubernetes$/m);
    // Comments aside, the same documents.
    expect(machineConfigDocuments(text)).toEqual({ data: spec.data });
    expect(YAML.parseAllDocuments(text).every((d) => d.errors.length === 0)).toBe(true);
  });

  it('has no comments when there is nothing to say', () => {
    const text = machineConfigText({ data: { documents: [{ apiVersion: 'v1alpha1', kind: 'HostnameConfig', hostname: 'a' }] } });
    expect(text).toBe('apiVersion: v1alpha1\nkind: HostnameConfig\nhostname: a\n');
  });
});

describe('the ParsedMachineConfig spec', () => {
  const overWire = (spec: unknown) => specFromYaml(parsedMachineConfigDefinition, yamlSpec(parsedMachineConfigDefinition, spec));

  it("is the validator's typed configuration, and the daemons read it back from the wire as it is (no validator)", async () => {
    const cfg = generateConfigs({ clusterName: 'pmc', endpoint: 'https://10.0.2.15:6443', secrets: await generateSecrets() });
    const parsed = parsedConfig(`${cfg.controlplane}---\napiVersion: v1alpha1\nkind: HostnameConfig\nhostname: cp1\n`);
    const spec = parsedMachineConfigSpec(parsed);
    expect(spec).toEqual({ v1alpha1: parsed.v1alpha1, documents: parsed.documents });
    expect(spec.v1alpha1).toBe(parsed.v1alpha1);
    expect(Object.keys(spec)).toEqual(['v1alpha1', 'documents']); // no text, data or warnings: the typed view alone
    expect(overWire(spec)).toEqual(JSON.parse(JSON.stringify(spec)));
    expect(JSON.parse(JSON.stringify(spec))).toEqual(spec); // plain data: nothing lost on the way
  });

  it('carries typed values: YAML 1.1 booleans of the text arrive as booleans', () => {
    const spec = parsedMachineConfigSpec(parsedConfig('apiVersion: v1alpha1\nkind: TimeSyncConfig\nenabled: "no"\nntp:\n  servers: [pool.ntp.org]\n'));
    expect(overWire(spec)).toEqual({ documents: [{ apiVersion: 'v1alpha1', kind: 'TimeSyncConfig', enabled: false, ntp: { servers: ['pool.ntp.org'] } }] });
  });
});
