// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { ContainerInfo as _machine_ContainerInfo, ContainerInfo__Output as _machine_ContainerInfo__Output } from '../machine/ContainerInfo.ts';

export interface Container {
  'metadata'?: (_common_Metadata | null);
  'containers'?: (_machine_ContainerInfo)[];
}

export interface Container__Output {
  'metadata': (_common_Metadata__Output | null);
  'containers': (_machine_ContainerInfo__Output)[];
}
