// Original file: protos/machine/machine.proto

import type { BPFInstruction as _machine_BPFInstruction, BPFInstruction__Output as _machine_BPFInstruction__Output } from '../machine/BPFInstruction.ts';

export interface PacketCaptureRequest {
  'interface'?: (string);
  'promiscuous'?: (boolean);
  'snap_len'?: (number);
  'bpf_filter'?: (_machine_BPFInstruction)[];
}

export interface PacketCaptureRequest__Output {
  'interface': (string);
  'promiscuous': (boolean);
  'snap_len': (number);
  'bpf_filter': (_machine_BPFInstruction__Output)[];
}
