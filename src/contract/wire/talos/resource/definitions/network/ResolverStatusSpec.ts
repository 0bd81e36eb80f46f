// Original file: protos/resource/definitions/network/network.proto

import type { NetIP as _common_NetIP, NetIP__Output as _common_NetIP__Output } from '../../../../common/NetIP.ts';

export interface ResolverStatusSpec {
  'dns_servers'?: (_common_NetIP)[];
  'search_domains'?: (string)[];
}

export interface ResolverStatusSpec__Output {
  'dns_servers': (_common_NetIP__Output)[];
  'search_domains': (string)[];
}
