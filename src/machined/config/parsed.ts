// One validation per configuration text. machined reads a configuration in several places (the
// apply's checks, the node's identity, the MachineConfig resource, the install settings); each
// asks here, and gets the typed ParsedConfig the validator returned for that text, so that the
// text is parsed and validated once rather than once per reader. The last few results are kept
// (an apply compares the new configuration with the running one).
import { formatIssues, validateConfig, type ParsedConfig, type ValidationResult } from '../../config/validate.ts';

const KEPT = 4;
const results = new Map<string, ValidationResult>();

/** The validator's result for this text (computed once, then kept while it is among the last few). */
export function validated(text: string): ValidationResult {
  let r = results.get(text);
  if (r) {
    results.delete(text);
  } else {
    r = validateConfig(text);
    if (results.size >= KEPT) results.delete(results.keys().next().value!);
  }
  results.set(text, r);
  return r;
}

/** The typed configuration of a valid text; throws, naming every error, when it is not valid. */
export function parsedConfig(text: string): ParsedConfig {
  const r = validated(text);
  if (!r.ok) throw new Error(`invalid machine configuration:\n${formatIssues(r.errors)}`);
  return r.config;
}
