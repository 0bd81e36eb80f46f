// Original file: protos/resource/definitions/network/network.proto

import type { Duration as _google_protobuf_Duration, Duration__Output as _google_protobuf_Duration__Output } from '../../../../google/protobuf/Duration.ts';
import type { NetIPPrefix as _common_NetIPPrefix, NetIPPrefix__Output as _common_NetIPPrefix__Output } from '../../../../common/NetIPPrefix.ts';

export interface WireguardPeer {
  'public_key'?: (string);
  'preshared_key'?: (string);
  'endpoint'?: (string);
  'persistent_keepalive_interval'?: (_google_protobuf_Duration | null);
  'allowed_ips'?: (_common_NetIPPrefix)[];
}

export interface WireguardPeer__Output {
  'public_key': (string);
  'preshared_key': (string);
  'endpoint': (string);
  'persistent_keepalive_interval': (_google_protobuf_Duration__Output | null);
  'allowed_ips': (_common_NetIPPrefix__Output)[];
}
