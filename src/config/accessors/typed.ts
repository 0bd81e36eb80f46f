// What the accessors read: the validator's typed configuration, the v1alpha1 document and the
// documents of the kinds Bronze implements (config/validate.ts ParsedConfig, and the
// MachineConfig and ParsedMachineConfig resources' specs, have this shape).
import type { KindDocument } from '../kinds.ts';
import type { V1Alpha1Config } from '../schema.ts';

export interface TypedConfig {
  v1alpha1?: V1Alpha1Config;
  /** In stream order. */
  documents: readonly KindDocument[];
}
