// MachineConfigs.config.talos.dev, id 'v1alpha1': the running machine configuration, the input
// of the controllers that reconcile it. machined writes it when a configuration becomes the
// running one. Sensitive: it holds the CA key. Talos: pkg/machinery/resources/config/machine_config.go.
//
// In the State the spec is the validated configuration: its typed v1alpha1 document and kind
// documents (what the controllers read), and the documents as kept, ignored fields and kinds
// included (what the text shows). On the wire it is what Talos sends: yaml_spec is the
// configuration's text as one YAML string, proto_spec a resource.config.MachineConfigSpec holding
// the same text (machine-config-text.ts makes and reads the text; only the text travels, so a
// reader of the wire gets the kept documents). The daemons read the typed configuration from
// ParsedMachineConfigs instead (parsed-machine-config.ts), which machined writes beside it.
import type { V1Alpha1Config } from '../../config/schema.ts';
import type { KindDocument } from '../../config/kinds.ts';
import type { ConfigData } from '../../config/validate.ts';
import type { MachineConfigSpec as MachineConfigSpecProto } from '../wire/resource/config/MachineConfigSpec.ts';
import type { ResourceDefinition } from './definition.ts';

/** The configuration as text carries it: the documents as kept, and the validator's warnings. */
export interface MachineConfigDocuments {
  data: ConfigData;
  /**
   * What the validator said of fields and documents Bronze accepts without acting on them
   * (ignored Kubernetes parts, kinds kept for later, deprecations): comments atop the text.
   */
  warnings?: string[];
}

/** The typed configuration, as the validator returned it (config/validate.ts ParsedConfig). */
export interface TypedMachineConfig {
  /** The v1alpha1 document, Bronze's fields only; absent in a configuration of typed documents alone. */
  v1alpha1?: V1Alpha1Config;
  /** The documents of the kinds Bronze implements, in stream order: narrow on `kind`. */
  documents: KindDocument[];
}

export interface MachineConfigSpec extends TypedMachineConfig, MachineConfigDocuments {}

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
