// Original file: protos/machine/machine.proto

import type { EtcdRecover as _machine_EtcdRecover, EtcdRecover__Output as _machine_EtcdRecover__Output } from '../machine/EtcdRecover.ts';

export interface EtcdRecoverResponse {
  'messages'?: (_machine_EtcdRecover)[];
}

export interface EtcdRecoverResponse__Output {
  'messages': (_machine_EtcdRecover__Output)[];
}
