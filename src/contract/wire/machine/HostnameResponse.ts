// Original file: protos/machine/machine.proto

import type { Hostname as _machine_Hostname, Hostname__Output as _machine_Hostname__Output } from '../machine/Hostname.ts';

export interface HostnameResponse {
  'messages'?: (_machine_Hostname)[];
}

export interface HostnameResponse__Output {
  'messages': (_machine_Hostname__Output)[];
}
