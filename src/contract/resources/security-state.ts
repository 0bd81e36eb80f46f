// SecurityStates.talos.dev, id 'securitystate': how the node booted, as far as security goes.
// machined writes it from what the firmware and kernel say (src/machined/security-state.ts).
// Talos: pkg/machinery/resources/runtime/security_status.go (type without the 'runtime' group).
import type { ResourceDefinition } from './definition.ts';
import { NameTable } from './names.ts';

/** Talos's SELinuxState names (enums.proto RuntimeSELinuxState). */
export const SELINUX_STATE = new NameTable('SELinux state', [
  [0, 'disabled'],
  [1, 'enabled, permissive'],
  [2, 'enabled, enforcing'],
]);

/** Talos's FIPSState names (enums.proto RuntimeFIPSState). */
export const FIPS_STATE = new NameTable('FIPS state', [
  [0, 'disabled'],
  [1, 'enabled'],
  [2, 'enabled, strict'],
]);

export interface SecurityStateSpec {
  secureBoot: boolean;
  ukiSigningKeyFingerprint?: string;
  pcrSigningKeyFingerprint?: string;
  selinuxState?: string;
  bootedWithUKI?: boolean;
  fipsState?: string;
  moduleSignatureEnforced?: boolean;
}

export const SECURITY_STATE_TYPE = 'SecurityStates.talos.dev';
export const SECURITY_STATE_ID = 'securitystate';

export const securityStateDefinition: ResourceDefinition<SecurityStateSpec> = {
  type: SECURITY_STATE_TYPE,
  displayType: 'SecurityState',
  aliases: [],
  defaultNamespace: 'runtime',
  owner: 'machined',
  printColumns: [
    { name: 'SecureBoot', jsonPath: '{.secureBoot}' },
    { name: 'UKISigningKeyFingerprint', jsonPath: '{.ukiSigningKeyFingerprint}' },
    { name: 'PCRSigningKeyFingerprint', jsonPath: '{.pcrSigningKeyFingerprint}' },
    { name: 'SELinuxState', jsonPath: '{.selinuxState}' },
  ],
  proto: {
    message: 'talos.resource.definitions.runtime.SecurityStateSpec',
    fields: { se_linux_state: { as: SELINUX_STATE }, fips_state: { as: FIPS_STATE } },
  },
};
