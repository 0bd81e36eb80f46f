// Original file: protos/machine/machine.proto

import type { ServiceStop as _machine_ServiceStop, ServiceStop__Output as _machine_ServiceStop__Output } from '../machine/ServiceStop.ts';

export interface ServiceStopResponse {
  'messages'?: (_machine_ServiceStop)[];
}

export interface ServiceStopResponse__Output {
  'messages': (_machine_ServiceStop__Output)[];
}
