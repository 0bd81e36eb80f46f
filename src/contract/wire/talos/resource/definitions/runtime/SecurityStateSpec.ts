// Original file: protos/resource/definitions/runtime/runtime.proto

import type { RuntimeSELinuxState as _talos_resource_definitions_enums_RuntimeSELinuxState, RuntimeSELinuxState__Output as _talos_resource_definitions_enums_RuntimeSELinuxState__Output } from '../../../../talos/resource/definitions/enums/RuntimeSELinuxState.ts';
import type { RuntimeFIPSState as _talos_resource_definitions_enums_RuntimeFIPSState, RuntimeFIPSState__Output as _talos_resource_definitions_enums_RuntimeFIPSState__Output } from '../../../../talos/resource/definitions/enums/RuntimeFIPSState.ts';

export interface SecurityStateSpec {
  'secure_boot'?: (boolean);
  'uki_signing_key_fingerprint'?: (string);
  'pcr_signing_key_fingerprint'?: (string);
  'se_linux_state'?: (_talos_resource_definitions_enums_RuntimeSELinuxState);
  'booted_with_uki'?: (boolean);
  'fips_state'?: (_talos_resource_definitions_enums_RuntimeFIPSState);
  'module_signature_enforced'?: (boolean);
}

export interface SecurityStateSpec__Output {
  'secure_boot': (boolean);
  'uki_signing_key_fingerprint': (string);
  'pcr_signing_key_fingerprint': (string);
  'se_linux_state': (_talos_resource_definitions_enums_RuntimeSELinuxState__Output);
  'booted_with_uki': (boolean);
  'fips_state': (_talos_resource_definitions_enums_RuntimeFIPSState__Output);
  'module_signature_enforced': (boolean);
}
