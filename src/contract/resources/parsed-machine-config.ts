// ParsedMachineConfigs.config.bronze.dev, id 'v1alpha1': Bronze's own (Talos has none): the
// running machine configuration as machined's validator typed it, the v1alpha1 document (Bronze's
// fields only) and the documents of the kinds Bronze implements, as plain data. machined writes it
// beside MachineConfigs (machined/node-config.ts, from the same ParsedConfig), so that the daemons
// (networkd, timed: daemon/config-watch.ts) read the typed configuration without the validator,
// which only machined loads (issue 10: a daemon loads no code it does not use). MachineConfigs'
// wire form stays Talos's (the configuration's text). Sensitive, as MachineConfigs: it holds the
// CA key.
//
// Its YAML form is the spec itself (YAML.stringify of the data) and a reader takes it back with
// YAML.parse alone, not validated again: machined wrote it from the validator's output, and only
// machined may write it (owner machined).
import type { ParsedMachineConfigSpec as ParsedMachineConfigSpecProto } from '../wire/bronze/resource/definitions/config/ParsedMachineConfigSpec.ts';
import type { ResourceDefinition } from './definition.ts';
import type { TypedMachineConfig } from './machine-config.ts';

/** The validator's typed configuration (config/validate.ts ParsedConfig's v1alpha1 and documents). */
export type ParsedMachineConfigSpec = TypedMachineConfig;

export const PARSED_MACHINE_CONFIG_TYPE = 'ParsedMachineConfigs.config.bronze.dev';
export const PARSED_MACHINE_CONFIG_NS = 'config';
export const PARSED_MACHINE_CONFIG_ID = 'v1alpha1';

export const parsedMachineConfigDefinition: ResourceDefinition<ParsedMachineConfigSpec> = {
  type: PARSED_MACHINE_CONFIG_TYPE,
  displayType: 'ParsedMachineConfig',
  aliases: [],
  defaultNamespace: PARSED_MACHINE_CONFIG_NS,
  owner: 'machined',
  printColumns: [],
  sensitivity: 'sensitive',
  proto: {
    message: 'bronze.resource.definitions.config.ParsedMachineConfigSpec',
    // The spec as YAML bytes, as Talos's MachineConfigSpec carries its text: written as JSON, which
    // is YAML too, so that the definitions stay free of a YAML library (definition.ts).
    encode: (spec): ParsedMachineConfigSpecProto => ({ yaml_marshalled: Buffer.from(JSON.stringify(spec)) }),
  },
};
