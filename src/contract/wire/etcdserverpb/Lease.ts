// Original file: protos/etcd/rpc.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { LeaseGrantRequest as _etcdserverpb_LeaseGrantRequest, LeaseGrantRequest__Output as _etcdserverpb_LeaseGrantRequest__Output } from '../etcdserverpb/LeaseGrantRequest.ts';
import type { LeaseGrantResponse as _etcdserverpb_LeaseGrantResponse, LeaseGrantResponse__Output as _etcdserverpb_LeaseGrantResponse__Output } from '../etcdserverpb/LeaseGrantResponse.ts';
import type { LeaseKeepAliveRequest as _etcdserverpb_LeaseKeepAliveRequest, LeaseKeepAliveRequest__Output as _etcdserverpb_LeaseKeepAliveRequest__Output } from '../etcdserverpb/LeaseKeepAliveRequest.ts';
import type { LeaseKeepAliveResponse as _etcdserverpb_LeaseKeepAliveResponse, LeaseKeepAliveResponse__Output as _etcdserverpb_LeaseKeepAliveResponse__Output } from '../etcdserverpb/LeaseKeepAliveResponse.ts';
import type { LeaseRevokeRequest as _etcdserverpb_LeaseRevokeRequest, LeaseRevokeRequest__Output as _etcdserverpb_LeaseRevokeRequest__Output } from '../etcdserverpb/LeaseRevokeRequest.ts';
import type { LeaseRevokeResponse as _etcdserverpb_LeaseRevokeResponse, LeaseRevokeResponse__Output as _etcdserverpb_LeaseRevokeResponse__Output } from '../etcdserverpb/LeaseRevokeResponse.ts';

export interface LeaseDefinition {
  LeaseGrant: MethodDefinition<_etcdserverpb_LeaseGrantRequest, _etcdserverpb_LeaseGrantResponse, _etcdserverpb_LeaseGrantRequest__Output, _etcdserverpb_LeaseGrantResponse__Output>
  LeaseKeepAlive: MethodDefinition<_etcdserverpb_LeaseKeepAliveRequest, _etcdserverpb_LeaseKeepAliveResponse, _etcdserverpb_LeaseKeepAliveRequest__Output, _etcdserverpb_LeaseKeepAliveResponse__Output>
  LeaseRevoke: MethodDefinition<_etcdserverpb_LeaseRevokeRequest, _etcdserverpb_LeaseRevokeResponse, _etcdserverpb_LeaseRevokeRequest__Output, _etcdserverpb_LeaseRevokeResponse__Output>
}
