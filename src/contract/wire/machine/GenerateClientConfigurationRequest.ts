// Original file: protos/machine/machine.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../google/protobuf/Duration.ts';

export interface GenerateClientConfigurationRequest {
  'roles'?: (string)[];
  'crt_ttl'?: (_google_protobuf_Duration | null);
}

export interface GenerateClientConfigurationRequest__Output {
  'roles': (string)[];
  'crt_ttl': (_google_protobuf_Duration__Output | null);
}
