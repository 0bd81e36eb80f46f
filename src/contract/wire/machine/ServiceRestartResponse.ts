// Original file: protos/machine/machine.proto

import type { ServiceRestart as _machine_ServiceRestart, ServiceRestart__Output as _machine_ServiceRestart__Output } from '../machine/ServiceRestart.ts';

export interface ServiceRestartResponse {
  'messages'?: (_machine_ServiceRestart)[];
}

export interface ServiceRestartResponse__Output {
  'messages': (_machine_ServiceRestart__Output)[];
}
