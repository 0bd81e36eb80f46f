import { describe, expect, it } from 'vitest';
import { KINDS } from '../kinds.ts';
import { v1alpha1Schemas } from '../schema.ts';
import * as cluster from './cluster.ts';
import * as containers from './containers.ts';
import * as encryption from './encryption.ts';
import * as etcd from './etcd.ts';
import * as install from './install.ts';
import * as machine from './machine.ts';
import * as network from './network.ts';
import * as registries from './registries.ts';
import { SETTINGS, VIEWS } from './settings.ts';
import * as time from './time.ts';
import * as volumes from './volumes.ts';

const MODULES: Record<string, Record<string, unknown>> = {
  'cluster.ts': cluster,
  'containers.ts': containers,
  'encryption.ts': encryption,
  'etcd.ts': etcd,
  'install.ts': install,
  'machine.ts': machine,
  'network.ts': network,
  'registries.ts': registries,
  'time.ts': time,
  'volumes.ts': volumes,
};

/** machine.* fields that are no setting of their own, and why. */
const NOT_SETTINGS: Record<string, string> = {
  'machine.type': 'normalised by the validator (validate.ts machineType: "join" and a missing type) into ParsedConfig.machineType',
  'machine.features': 'only stableHostname, which the validator checks against HostnameConfig',
  'machine.sysfs': 'validated and applied live, not acted on yet',
};

const exported = (ref: string) => {
  const [file, fn] = ref.split('#') as [string, string];
  return typeof MODULES[file]?.[fn];
};

describe('the configuration settings', () => {
  it('each part of the configuration feeds one setting, through one resolver', () => {
    const seen = new Map<string, string>();
    const twice: string[] = [];
    for (const s of SETTINGS) {
      for (const src of s.sources) {
        // A path and a path inside it are the same part (machine.network and machine.network.hostname).
        for (const [other, by] of seen) if (other === src || src.startsWith(`${other}.`) || other.startsWith(`${src}.`)) twice.push(`${src} (${s.setting}) and ${other} (${by})`);
        seen.set(src, s.setting);
      }
    }
    expect(twice).toEqual([]);
    expect(new Set(SETTINGS.map((s) => s.resolver)).size, 'one resolver per setting').toBe(SETTINGS.length);
    expect(new Set(SETTINGS.map((s) => s.setting)).size).toBe(SETTINGS.length);
  });

  it('covers every kind Bronze acts on, and every machine field', () => {
    const sources = SETTINGS.flatMap((s) => s.sources);
    const covered = (part: string) => sources.some((s) => s === part || s.startsWith(`${part}.`));
    const kinds = KINDS.filter((k) => !k.keptForLater).map((k) => k.kind);
    expect(kinds.filter((k) => !covered(k))).toEqual([]);
    const machine = Object.keys(v1alpha1Schemas().machineSchema.shape).map((k) => `machine.${k}`);
    expect(machine.filter((m) => !covered(m) && !sources.some((s) => s.startsWith(`${m}.`)) && !(m in NOT_SETTINGS))).toEqual([]);
  });

  it('names functions its modules export, and views read settings that exist', () => {
    for (const ref of [...SETTINGS.map((s) => s.resolver), ...Object.keys(VIEWS)]) expect(exported(ref), ref).toBe('function');
    const names = new Set(SETTINGS.map((s) => s.setting));
    for (const [view, reads] of Object.entries(VIEWS)) for (const r of reads) expect(names.has(r), `${view} reads ${r}`).toBe(true);
  });
});
