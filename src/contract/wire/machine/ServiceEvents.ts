// Original file: protos/machine/machine.proto

import type { ServiceEvent as _machine_ServiceEvent, ServiceEvent__Output as _machine_ServiceEvent__Output } from '../machine/ServiceEvent.ts';

export interface ServiceEvents {
  'events'?: (_machine_ServiceEvent)[];
}

export interface ServiceEvents__Output {
  'events': (_machine_ServiceEvent__Output)[];
}
