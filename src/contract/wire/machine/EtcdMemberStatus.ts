// Original file: protos/machine/machine.proto

import type { Long } from '@grpc/proto-loader';

export interface EtcdMemberStatus {
  'protocol_version'?: (string);
  'db_size'?: (number | string | Long);
  'db_size_in_use'?: (number | string | Long);
  'leader'?: (number | string | Long);
  'raft_index'?: (number | string | Long);
  'raft_term'?: (number | string | Long);
  'raft_applied_index'?: (number | string | Long);
  'errors'?: (string)[];
  'is_learner'?: (boolean);
  'member_id'?: (number | string | Long);
  'storage_version'?: (string);
}

export interface EtcdMemberStatus__Output {
  'protocol_version': (string);
  'db_size': (string);
  'db_size_in_use': (string);
  'leader': (string);
  'raft_index': (string);
  'raft_term': (string);
  'raft_applied_index': (string);
  'errors': (string)[];
  'is_learner': (boolean);
  'member_id': (string);
  'storage_version': (string);
}
