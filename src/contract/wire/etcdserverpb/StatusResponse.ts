// Original file: protos/etcd/rpc.proto

import type { ResponseHeader as _etcdserverpb_ResponseHeader, ResponseHeader__Output as _etcdserverpb_ResponseHeader__Output } from '../etcdserverpb/ResponseHeader.ts';
import type { Long } from '@grpc/proto-loader';

export interface StatusResponse {
  'header'?: (_etcdserverpb_ResponseHeader | null);
  'version'?: (string);
  'dbSize'?: (number | string | Long);
  'leader'?: (number | string | Long);
  'raftIndex'?: (number | string | Long);
  'raftTerm'?: (number | string | Long);
  'raftAppliedIndex'?: (number | string | Long);
  'errors'?: (string)[];
  'dbSizeInUse'?: (number | string | Long);
  'isLearner'?: (boolean);
  'storageVersion'?: (string);
}

export interface StatusResponse__Output {
  'header': (_etcdserverpb_ResponseHeader__Output | null);
  'version': (string);
  'dbSize': (string);
  'leader': (string);
  'raftIndex': (string);
  'raftTerm': (string);
  'raftAppliedIndex': (string);
  'errors': (string)[];
  'dbSizeInUse': (string);
  'isLearner': (boolean);
  'storageVersion': (string);
}
