// The validation machined applies to every configuration it is given: the schema and its
// semantic checks (src/config/validate.ts), every error and warning with its path and line.
import { formatIssues } from '../../config/validate.ts';
import { validated } from './parsed.ts';
import type { Validation } from './manager.ts';

export function validateMachineConfig(text: string): Validation {
  const r = validated(text);
  const warnings = r.warnings.length ? formatIssues(r.warnings).split('\n') : [];
  if (r.ok) return { errors: [], warnings };
  return { errors: formatIssues(r.errors).split('\n').filter(Boolean), warnings };
}
