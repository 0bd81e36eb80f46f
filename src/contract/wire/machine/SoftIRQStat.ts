// Original file: protos/machine/machine.proto

import type { Long } from '@grpc/proto-loader';

export interface SoftIRQStat {
  'hi'?: (number | string | Long);
  'timer'?: (number | string | Long);
  'net_tx'?: (number | string | Long);
  'net_rx'?: (number | string | Long);
  'block'?: (number | string | Long);
  'block_io_poll'?: (number | string | Long);
  'tasklet'?: (number | string | Long);
  'sched'?: (number | string | Long);
  'hrtimer'?: (number | string | Long);
  'rcu'?: (number | string | Long);
}

export interface SoftIRQStat__Output {
  'hi': (string);
  'timer': (string);
  'net_tx': (string);
  'net_rx': (string);
  'block': (string);
  'block_io_poll': (string);
  'tasklet': (string);
  'sched': (string);
  'hrtimer': (string);
  'rcu': (string);
}
