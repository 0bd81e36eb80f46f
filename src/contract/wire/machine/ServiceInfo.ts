// Original file: protos/machine/machine.proto

import type { ServiceEvents as _machine_ServiceEvents, ServiceEvents__Output as _machine_ServiceEvents__Output } from '../machine/ServiceEvents.ts';
import type { ServiceHealth as _machine_ServiceHealth, ServiceHealth__Output as _machine_ServiceHealth__Output } from '../machine/ServiceHealth.ts';

export interface ServiceInfo {
  'id'?: (string);
  'state'?: (string);
  'events'?: (_machine_ServiceEvents | null);
  'health'?: (_machine_ServiceHealth | null);
}

export interface ServiceInfo__Output {
  'id': (string);
  'state': (string);
  'events': (_machine_ServiceEvents__Output | null);
  'health': (_machine_ServiceHealth__Output | null);
}
