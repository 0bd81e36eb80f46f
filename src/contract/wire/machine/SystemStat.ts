// Original file: protos/machine/machine.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { CPUStat as _machine_CPUStat, CPUStat__Output as _machine_CPUStat__Output } from '../machine/CPUStat.ts';
import type { SoftIRQStat as _machine_SoftIRQStat, SoftIRQStat__Output as _machine_SoftIRQStat__Output } from '../machine/SoftIRQStat.ts';
import type { Long } from '@grpc/proto-loader';

export interface SystemStat {
  'metadata'?: (_common_Metadata | null);
  'boot_time'?: (number | string | Long);
  'cpu_total'?: (_machine_CPUStat | null);
  'cpu'?: (_machine_CPUStat)[];
  'irq_total'?: (number | string | Long);
  'irq'?: (number | string | Long)[];
  'context_switches'?: (number | string | Long);
  'process_created'?: (number | string | Long);
  'process_running'?: (number | string | Long);
  'process_blocked'?: (number | string | Long);
  'soft_irq_total'?: (number | string | Long);
  'soft_irq'?: (_machine_SoftIRQStat | null);
}

export interface SystemStat__Output {
  'metadata': (_common_Metadata__Output | null);
  'boot_time': (string);
  'cpu_total': (_machine_CPUStat__Output | null);
  'cpu': (_machine_CPUStat__Output)[];
  'irq_total': (string);
  'irq': (string)[];
  'context_switches': (string);
  'process_created': (string);
  'process_running': (string);
  'process_blocked': (string);
  'soft_irq_total': (string);
  'soft_irq': (_machine_SoftIRQStat__Output | null);
}
