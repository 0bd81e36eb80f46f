// The validation machined applies to every configuration it is given.
import type { Validation } from './manager.ts';
import { ConfigError, nodeIdentity } from './identity.ts';

export function validateMachineConfig(text: string): Validation {
  try {
    nodeIdentity(text);
    return { errors: [], warnings: [] };
  } catch (err) {
    if (err instanceof ConfigError) return { errors: [err.message], warnings: [] };
    throw err;
  }
}
