// Original file: protos/machine/machine.proto

import type { Long } from '@grpc/proto-loader';

export interface ProcessInfo {
  'pid'?: (number);
  'ppid'?: (number);
  'state'?: (string);
  'threads'?: (number);
  'cpu_time'?: (number | string);
  'virtual_memory'?: (number | string | Long);
  'resident_memory'?: (number | string | Long);
  'command'?: (string);
  'executable'?: (string);
  'args'?: (string);
}

export interface ProcessInfo__Output {
  'pid': (number);
  'ppid': (number);
  'state': (string);
  'threads': (number);
  'cpu_time': (number);
  'virtual_memory': (string);
  'resident_memory': (string);
  'command': (string);
  'executable': (string);
  'args': (string);
}
