// Original file: protos/machine/machine.proto

import type { EtcdDefragment as _machine_EtcdDefragment, EtcdDefragment__Output as _machine_EtcdDefragment__Output } from '../machine/EtcdDefragment.ts';

export interface EtcdDefragmentResponse {
  'messages'?: (_machine_EtcdDefragment)[];
}

export interface EtcdDefragmentResponse__Output {
  'messages': (_machine_EtcdDefragment__Output)[];
}
