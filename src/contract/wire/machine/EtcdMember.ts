// Original file: protos/machine/machine.proto

import type { Long } from '@grpc/proto-loader';

export interface EtcdMember {
  'id'?: (number | string | Long);
  'hostname'?: (string);
  'peer_urls'?: (string)[];
  'client_urls'?: (string)[];
  'is_learner'?: (boolean);
}

export interface EtcdMember__Output {
  'id': (string);
  'hostname': (string);
  'peer_urls': (string)[];
  'client_urls': (string)[];
  'is_learner': (boolean);
}
