// Original file: protos/machine/machine.proto

import type { ServiceList as _machine_ServiceList, ServiceList__Output as _machine_ServiceList__Output } from '../machine/ServiceList.ts';

export interface ServiceListResponse {
  'messages'?: (_machine_ServiceList)[];
}

export interface ServiceListResponse__Output {
  'messages': (_machine_ServiceList__Output)[];
}
