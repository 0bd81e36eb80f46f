// Original file: protos/resource/definitions/network/network.proto

import type { WireguardPeer as _talos_resource_definitions_network_WireguardPeer, WireguardPeer__Output as _talos_resource_definitions_network_WireguardPeer__Output } from '../../../../talos/resource/definitions/network/WireguardPeer.ts';
import type { Long } from '@grpc/proto-loader';

export interface WireguardSpec {
  'private_key'?: (string);
  'public_key'?: (string);
  'listen_port'?: (number | string | Long);
  'firewall_mark'?: (number | string | Long);
  'peers'?: (_talos_resource_definitions_network_WireguardPeer)[];
}

export interface WireguardSpec__Output {
  'private_key': (string);
  'public_key': (string);
  'listen_port': (string);
  'firewall_mark': (string);
  'peers': (_talos_resource_definitions_network_WireguardPeer__Output)[];
}
