import YAML from 'yaml';
import { describe, expect, it } from 'vitest';
import { RESOURCE_DEFINITIONS } from './registry.ts';
import { jsonSpec, specFromYaml, yamlSpec } from './wire.ts';

const machineConfig = RESOURCE_DEFINITIONS.find((d) => d.yamlForm === 'config-text')!;

describe('yaml_spec between machined and the daemons', () => {
  const spec = { index: 2, type: 'ether', flags: 'UP,BROADCAST', mtu: 1500, linkState: true, addresses: ['10.0.2.15/24'], none: null };

  it('is JSON, which reads back as the same value through JSON and through YAML', () => {
    const text = jsonSpec(undefined, spec);
    expect(JSON.parse(text)).toEqual(spec);
    expect(YAML.parse(text)).toEqual(spec);
    expect(specFromYaml(undefined, text)).toEqual(spec);
    expect(jsonSpec(undefined, null)).toBe('null');
    expect(jsonSpec(undefined, undefined)).toBe('null');
  });

  it('reads YAML as before, a flow mapping that is not JSON included, and names bad text', () => {
    expect(specFromYaml(undefined, yamlSpec(undefined, spec))).toEqual(spec);
    expect(specFromYaml(undefined, '{a: 1, b: [x, y]}')).toEqual({ a: 1, b: ['x', 'y'] });
    expect(specFromYaml(undefined, '')).toBeNull();
    expect(() => specFromYaml(undefined, '{a: [1')).toThrow();
  });

  it('a MachineConfig travels as its config text either way', () => {
    const docs = { data: { v1alpha1: { version: 'v1alpha1', machine: { type: 'controlplane' } }, documents: [{ apiVersion: 'v1alpha1', kind: 'HostnameConfig', hostname: 'n1' }] } };
    const viaJson = specFromYaml(machineConfig, jsonSpec(machineConfig, docs));
    expect(viaJson).toEqual(docs);
    expect(specFromYaml(machineConfig, yamlSpec(machineConfig, docs))).toEqual(viaJson);
    expect(JSON.parse(jsonSpec(machineConfig, docs))).toMatch(/^version: v1alpha1\nmachine:\n {2}type: controlplane\n---\napiVersion: v1alpha1\nkind: HostnameConfig\n/);
  });
});
