// MachineConfigs.config.talos.dev, id 'v1alpha1': the running machine configuration, the input
// of the controllers that reconcile it. machined writes it when a configuration becomes the
// running one. Sensitive: it holds the CA key. Talos: pkg/machinery/resources/config/machine_config.go.
//
// In the State the spec is the parsed configuration ({ v1alpha1, documents }); on the wire it is
// what Talos sends: yaml_spec is the configuration's text as one YAML string, proto_spec a
// resource.config.MachineConfigSpec holding the same text (machine-config-text.ts makes and
// parses the text).
import type { MachineConfigSpec as MachineConfigSpecProto } from '../wire/resource/config/MachineConfigSpec.ts';
import type { ResourceDefinition } from './definition.ts';

export interface MachineConfigSpec {
  v1alpha1: Record<string, any>;
  /** Multi-document kinds (HostnameConfig, ...). */
  documents: Array<Record<string, any>>;
  /**
   * What the validator said of fields and documents Bronze accepts without acting on them
   * (ignored Kubernetes parts, kinds kept for later, deprecations): comments atop the text.
   */
  warnings?: string[];
}

export const MACHINE_CONFIG_TYPE = 'MachineConfigs.config.talos.dev';
export const MACHINE_CONFIG_NS = 'config';
export const MACHINE_CONFIG_ID = 'v1alpha1';

export const machineConfigDefinition: ResourceDefinition<MachineConfigSpec> = {
  type: MACHINE_CONFIG_TYPE,
  displayType: 'MachineConfig',
  aliases: [],
  defaultNamespace: MACHINE_CONFIG_NS,
  owner: 'machined',
  printColumns: [],
  sensitivity: 'sensitive',
  // Talos marks the specs it sends as one YAML string.
  annotations: { 'talos.dev/yaml-spec': '1' },
  yamlForm: 'config-text',
  proto: {
    message: 'resource.config.MachineConfigSpec',
    encode: (_spec, text): MachineConfigSpecProto => ({ yaml_marshalled: Buffer.from(String(text)) }),
  },
};
