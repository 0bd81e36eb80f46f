// Original file: protos/machine/machine.proto

import type { Long } from '@grpc/proto-loader';

export interface EtcdRemoveMemberByIDRequest {
  'member_id'?: (number | string | Long);
}

export interface EtcdRemoveMemberByIDRequest__Output {
  'member_id': (string);
}
