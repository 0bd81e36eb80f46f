// Original file: protos/machine/machine.proto

import type { EtcdStatus as _machine_EtcdStatus, EtcdStatus__Output as _machine_EtcdStatus__Output } from '../machine/EtcdStatus.ts';

export interface EtcdStatusResponse {
  'messages'?: (_machine_EtcdStatus)[];
}

export interface EtcdStatusResponse__Output {
  'messages': (_machine_EtcdStatus__Output)[];
}
