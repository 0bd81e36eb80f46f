// Original file: protos/etcd/rpc.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { AlarmRequest as _etcdserverpb_AlarmRequest, AlarmRequest__Output as _etcdserverpb_AlarmRequest__Output } from '../etcdserverpb/AlarmRequest.ts';
import type { AlarmResponse as _etcdserverpb_AlarmResponse, AlarmResponse__Output as _etcdserverpb_AlarmResponse__Output } from '../etcdserverpb/AlarmResponse.ts';
import type { DefragmentRequest as _etcdserverpb_DefragmentRequest, DefragmentRequest__Output as _etcdserverpb_DefragmentRequest__Output } from '../etcdserverpb/DefragmentRequest.ts';
import type { DefragmentResponse as _etcdserverpb_DefragmentResponse, DefragmentResponse__Output as _etcdserverpb_DefragmentResponse__Output } from '../etcdserverpb/DefragmentResponse.ts';
import type { MoveLeaderRequest as _etcdserverpb_MoveLeaderRequest, MoveLeaderRequest__Output as _etcdserverpb_MoveLeaderRequest__Output } from '../etcdserverpb/MoveLeaderRequest.ts';
import type { MoveLeaderResponse as _etcdserverpb_MoveLeaderResponse, MoveLeaderResponse__Output as _etcdserverpb_MoveLeaderResponse__Output } from '../etcdserverpb/MoveLeaderResponse.ts';
import type { SnapshotRequest as _etcdserverpb_SnapshotRequest, SnapshotRequest__Output as _etcdserverpb_SnapshotRequest__Output } from '../etcdserverpb/SnapshotRequest.ts';
import type { SnapshotResponse as _etcdserverpb_SnapshotResponse, SnapshotResponse__Output as _etcdserverpb_SnapshotResponse__Output } from '../etcdserverpb/SnapshotResponse.ts';
import type { StatusRequest as _etcdserverpb_StatusRequest, StatusRequest__Output as _etcdserverpb_StatusRequest__Output } from '../etcdserverpb/StatusRequest.ts';
import type { StatusResponse as _etcdserverpb_StatusResponse, StatusResponse__Output as _etcdserverpb_StatusResponse__Output } from '../etcdserverpb/StatusResponse.ts';

export interface MaintenanceDefinition {
  Alarm: MethodDefinition<_etcdserverpb_AlarmRequest, _etcdserverpb_AlarmResponse, _etcdserverpb_AlarmRequest__Output, _etcdserverpb_AlarmResponse__Output>
  Defragment: MethodDefinition<_etcdserverpb_DefragmentRequest, _etcdserverpb_DefragmentResponse, _etcdserverpb_DefragmentRequest__Output, _etcdserverpb_DefragmentResponse__Output>
  MoveLeader: MethodDefinition<_etcdserverpb_MoveLeaderRequest, _etcdserverpb_MoveLeaderResponse, _etcdserverpb_MoveLeaderRequest__Output, _etcdserverpb_MoveLeaderResponse__Output>
  Snapshot: MethodDefinition<_etcdserverpb_SnapshotRequest, _etcdserverpb_SnapshotResponse, _etcdserverpb_SnapshotRequest__Output, _etcdserverpb_SnapshotResponse__Output>
  Status: MethodDefinition<_etcdserverpb_StatusRequest, _etcdserverpb_StatusResponse, _etcdserverpb_StatusRequest__Output, _etcdserverpb_StatusResponse__Output>
}
