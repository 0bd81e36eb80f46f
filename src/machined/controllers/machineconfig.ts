// The running machine configuration as a resource (config/MachineConfigs.config.bronze.dev,
// id "v1alpha1"): the input of the controllers that reconcile it into the system. machined
// publishes it when a configuration becomes the running one. Sensitive: it holds the CA key.
import { formatIssues, validateConfig } from '../../config/validate.ts';
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
  /** The v1alpha1 document as Bronze reads it ({} in a configuration of typed documents alone). */
  v1alpha1: Record<string, any>;
  /** Multi-document kinds (HostnameConfig, ...), Talos kinds Bronze ignores or keeps included. */
  documents: Array<Record<string, any>>;
  /** What the validator said about fields and documents Bronze accepts but does not act on. */
  warnings: string[];
}

/**
 * The resource's spec from a configuration already validated: the documents as the validator read
 * them (YAML merge keys resolved, `version` made explicit, machine.type as Bronze runs it).
 */
export function machineConfigSpec(text: string): MachineConfigSpec {
  const r = validateConfig(text);
  if (!r.ok) throw new Error(`invalid machine configuration:\n${formatIssues(r.errors)}`);
  const { data } = r.config;
  return { v1alpha1: data.v1alpha1 ?? {}, documents: data.documents, warnings: r.warnings.length ? formatIssues(r.warnings).split('\n') : [] };
}
