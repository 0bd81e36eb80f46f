// Original file: protos/etcd/rpc.proto

import type { Long } from '@grpc/proto-loader';

export interface Member {
  'ID'?: (number | string | Long);
  'name'?: (string);
  'peerURLs'?: (string)[];
  'clientURLs'?: (string)[];
  'isLearner'?: (boolean);
}

export interface Member__Output {
  'ID': (string);
  'name': (string);
  'peerURLs': (string)[];
  'clientURLs': (string)[];
  'isLearner': (boolean);
}
