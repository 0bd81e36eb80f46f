// Original file: protos/resource/definitions/cluster/cluster.proto

import type { Long } from '@grpc/proto-loader';

export interface ControlPlane {
  'api_server_port'?: (number | string | Long);
}

export interface ControlPlane__Output {
  'api_server_port': (string);
}
