// Original file: protos/machine/machine.proto

import type { EtcdLeaveCluster as _machine_EtcdLeaveCluster, EtcdLeaveCluster__Output as _machine_EtcdLeaveCluster__Output } from '../machine/EtcdLeaveCluster.ts';

export interface EtcdLeaveClusterResponse {
  'messages'?: (_machine_EtcdLeaveCluster)[];
}

export interface EtcdLeaveClusterResponse__Output {
  'messages': (_machine_EtcdLeaveCluster__Output)[];
}
