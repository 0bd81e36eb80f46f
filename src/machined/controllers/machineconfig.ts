// The running machine configuration as a resource (config/MachineConfigs.config.bronze.dev,
// id "v1alpha1"): the input of the controllers that reconcile it into the system. machined
// publishes it when a configuration becomes the running one. Sensitive: it holds the CA key.
import YAML from 'yaml';
import type { ResourceDefinition } from '../../state/definitions.ts';

export const machineConfigDefinition: ResourceDefinition = {
  type: 'MachineConfigs.config.bronze.dev',
  displayType: 'MachineConfig',
  aliases: ['machineconfig', 'mc', 'machineconfigs'],
  defaultNamespace: 'config',
  printColumns: [{ name: 'Type', jsonPath: '{.v1alpha1.machine.type}' }],
  sensitive: true,
};

export const MACHINE_CONFIG_NS = 'config';
export const MACHINE_CONFIG_TYPE = machineConfigDefinition.type;
export const MACHINE_CONFIG_ID = 'v1alpha1';

export interface MachineConfigSpec {
  v1alpha1: Record<string, any>;
  /** Multi-document kinds (HostnameConfig, ...). */
  documents: Array<Record<string, any>>;
}

export function machineConfigSpec(text: string): MachineConfigSpec {
  const docs = YAML.parseAllDocuments(text).map((d) => (d.toJS() ?? {}) as Record<string, any>);
  return { v1alpha1: docs.find((d) => d.version === 'v1alpha1') ?? {}, documents: docs.filter((d) => d.kind) };
}
