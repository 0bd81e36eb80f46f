// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { ServiceInfo as _machine_ServiceInfo, ServiceInfo__Output as _machine_ServiceInfo__Output } from '../machine/ServiceInfo.ts';

export interface ServiceList {
  'metadata'?: (_common_Metadata | null);
  'services'?: (_machine_ServiceInfo)[];
}

export interface ServiceList__Output {
  'metadata': (_common_Metadata__Output | null);
  'services': (_machine_ServiceInfo__Output)[];
}
