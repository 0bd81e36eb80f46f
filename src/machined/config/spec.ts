// The MachineConfigs resource's spec as machined publishes it: the documents as the validator
// read them (YAML merge keys resolved, `version` made explicit, machine.type as Bronze runs it),
// not as a plain YAML parse would give them. machined only; daemons and clients read the text
// (src/contract/resources/machine-config-text.ts) and never load the validator.
import { formatIssues, validateConfig } from '../../config/validate.ts';
import type { MachineConfigSpec } from '../../contract/resources/machine-config.ts';

/** The spec of a configuration already validated; throws, naming the errors, if it is not valid. */
export function validatedMachineConfigSpec(text: string): MachineConfigSpec {
  const r = validateConfig(text);
  if (!r.ok) throw new Error(`invalid machine configuration:\n${formatIssues(r.errors)}`);
  const { data } = r.config;
  return { v1alpha1: data.v1alpha1 ?? {}, documents: data.documents };
}
