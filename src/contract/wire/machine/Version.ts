// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { VersionInfo as _machine_VersionInfo, VersionInfo__Output as _machine_VersionInfo__Output } from '../machine/VersionInfo.ts';
import type { PlatformInfo as _machine_PlatformInfo, PlatformInfo__Output as _machine_PlatformInfo__Output } from '../machine/PlatformInfo.ts';
import type { FeaturesInfo as _machine_FeaturesInfo, FeaturesInfo__Output as _machine_FeaturesInfo__Output } from '../machine/FeaturesInfo.ts';

export interface Version {
  'metadata'?: (_common_Metadata | null);
  'version'?: (_machine_VersionInfo | null);
  'platform'?: (_machine_PlatformInfo | null);
  'features'?: (_machine_FeaturesInfo | null);
}

export interface Version__Output {
  'metadata': (_common_Metadata__Output | null);
  'version': (_machine_VersionInfo__Output | null);
  'platform': (_machine_PlatformInfo__Output | null);
  'features': (_machine_FeaturesInfo__Output | null);
}
