// Original file: protos/bronze/resource/definitions/runtime.proto

import type { BootSlot as _bronze_resource_definitions_runtime_BootSlot, BootSlot__Output as _bronze_resource_definitions_runtime_BootSlot__Output } from '../../../../bronze/resource/definitions/runtime/BootSlot.ts';
import type { BootUpgrade as _bronze_resource_definitions_runtime_BootUpgrade, BootUpgrade__Output as _bronze_resource_definitions_runtime_BootUpgrade__Output } from '../../../../bronze/resource/definitions/runtime/BootUpgrade.ts';
import type { BootRollback as _bronze_resource_definitions_runtime_BootRollback, BootRollback__Output as _bronze_resource_definitions_runtime_BootRollback__Output } from '../../../../bronze/resource/definitions/runtime/BootRollback.ts';
import type { BootInstall as _bronze_resource_definitions_runtime_BootInstall, BootInstall__Output as _bronze_resource_definitions_runtime_BootInstall__Output } from '../../../../bronze/resource/definitions/runtime/BootInstall.ts';

export interface BootStatusSpec {
  'installed'?: (boolean);
  'disk'?: (string);
  'booted'?: (string);
  'version'?: (string);
  'default'?: (string);
  'next'?: (string);
  'slots'?: ({[key: string]: _bronze_resource_definitions_runtime_BootSlot});
  'upgrade'?: (_bronze_resource_definitions_runtime_BootUpgrade | null);
  'rollback'?: (_bronze_resource_definitions_runtime_BootRollback | null);
  'last'?: (string);
  'install'?: (_bronze_resource_definitions_runtime_BootInstall | null);
}

export interface BootStatusSpec__Output {
  'installed': (boolean);
  'disk': (string);
  'booted': (string);
  'version': (string);
  'default': (string);
  'next': (string);
  'slots': ({[key: string]: _bronze_resource_definitions_runtime_BootSlot__Output});
  'upgrade': (_bronze_resource_definitions_runtime_BootUpgrade__Output | null);
  'rollback': (_bronze_resource_definitions_runtime_BootRollback__Output | null);
  'last': (string);
  'install': (_bronze_resource_definitions_runtime_BootInstall__Output | null);
}
