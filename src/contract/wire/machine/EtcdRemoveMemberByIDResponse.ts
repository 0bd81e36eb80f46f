// Original file: protos/machine/machine.proto

import type { EtcdRemoveMemberByID as _machine_EtcdRemoveMemberByID, EtcdRemoveMemberByID__Output as _machine_EtcdRemoveMemberByID__Output } from '../machine/EtcdRemoveMemberByID.ts';

export interface EtcdRemoveMemberByIDResponse {
  'messages'?: (_machine_EtcdRemoveMemberByID)[];
}

export interface EtcdRemoveMemberByIDResponse__Output {
  'messages': (_machine_EtcdRemoveMemberByID__Output)[];
}
