// The MachineConfigs resource's spec as machined publishes it: the documents as the validator
// read them (YAML merge keys resolved, `version` made explicit, machine.type as Bronze runs it),
// not as a plain YAML parse would give them. machined only; daemons and clients read the text
// (src/contract/resources/machine-config-text.ts) and never load the validator.
import { formatIssues, type ParsedConfig } from '../../config/validate.ts';
import type { MachineConfigSpec } from '../../contract/resources/machine-config.ts';

/** The spec of a validated configuration (machined/config/parsed.ts). */
export function machineConfigSpec(config: ParsedConfig): MachineConfigSpec {
  const { data } = config;
  const warnings = config.warnings.length ? formatIssues(config.warnings).split('\n').filter(Boolean) : [];
  return { v1alpha1: data.v1alpha1 ?? {}, documents: data.documents, ...(warnings.length ? { warnings } : {}) };
}
