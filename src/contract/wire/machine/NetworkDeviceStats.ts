// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { NetDev as _machine_NetDev, NetDev__Output as _machine_NetDev__Output } from '../machine/NetDev.ts';

export interface NetworkDeviceStats {
  'metadata'?: (_common_Metadata | null);
  'total'?: (_machine_NetDev | null);
  'devices'?: (_machine_NetDev)[];
}

export interface NetworkDeviceStats__Output {
  'metadata': (_common_Metadata__Output | null);
  'total': (_machine_NetDev__Output | null);
  'devices': (_machine_NetDev__Output)[];
}
