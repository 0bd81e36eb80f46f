// Original file: protos/machine/machine.proto

import type { ServiceStart as _machine_ServiceStart, ServiceStart__Output as _machine_ServiceStart__Output } from '../machine/ServiceStart.ts';

export interface ServiceStartResponse {
  'messages'?: (_machine_ServiceStart)[];
}

export interface ServiceStartResponse__Output {
  'messages': (_machine_ServiceStart__Output)[];
}
