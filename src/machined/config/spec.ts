// The specs machined publishes for the running configuration, both from the validator's
// ParsedConfig:
// - MachineConfigs (Talos's): the typed configuration (what machined's controllers read), and the
//   documents as it read them (YAML merge keys resolved, `version` made explicit, machine.type as
//   Bronze runs it, ignored fields and kinds kept), which the text shows. Clients get the text
//   over the wire (src/contract/resources/machine-config-text.ts).
// - ParsedMachineConfigs (Bronze's): the typed configuration alone, as plain data, which the
//   daemons read over the wire without validating it again (daemon/config-watch.ts).
import { formatIssues, type ParsedConfig } from '../../config/validate.ts';
import type { MachineConfigSpec } from '../../contract/resources/machine-config.ts';
import type { ParsedMachineConfigSpec } from '../../contract/resources/parsed-machine-config.ts';

/** The MachineConfigs spec of a validated configuration (machined/config/parsed.ts). */
export function machineConfigSpec(config: ParsedConfig): MachineConfigSpec {
  const { data } = config;
  const warnings = config.warnings.length ? formatIssues(config.warnings).split('\n').filter(Boolean) : [];
  return { ...parsedMachineConfigSpec(config), data, ...(warnings.length ? { warnings } : {}) };
}

/** The ParsedMachineConfigs spec of a validated configuration: its v1alpha1 and kind documents (the same objects). */
export function parsedMachineConfigSpec(config: ParsedConfig): ParsedMachineConfigSpec {
  const { v1alpha1, documents } = config;
  return { ...(v1alpha1 ? { v1alpha1 } : {}), documents };
}
