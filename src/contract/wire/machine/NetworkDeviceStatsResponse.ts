// Original file: protos/machine/machine.proto

import type { NetworkDeviceStats as _machine_NetworkDeviceStats, NetworkDeviceStats__Output as _machine_NetworkDeviceStats__Output } from '../machine/NetworkDeviceStats.ts';

export interface NetworkDeviceStatsResponse {
  'messages'?: (_machine_NetworkDeviceStats)[];
}

export interface NetworkDeviceStatsResponse__Output {
  'messages': (_machine_NetworkDeviceStats__Output)[];
}
