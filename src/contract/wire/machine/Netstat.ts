// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { ConnectRecord as _machine_ConnectRecord, ConnectRecord__Output as _machine_ConnectRecord__Output } from '../machine/ConnectRecord.ts';

export interface Netstat {
  'metadata'?: (_common_Metadata | null);
  'connectrecord'?: (_machine_ConnectRecord)[];
}

export interface Netstat__Output {
  'metadata': (_common_Metadata__Output | null);
  'connectrecord': (_machine_ConnectRecord__Output)[];
}
