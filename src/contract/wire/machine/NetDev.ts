// Original file: protos/machine/machine.proto

import type { Long } from '@grpc/proto-loader';

export interface NetDev {
  'name'?: (string);
  'rx_bytes'?: (number | string | Long);
  'rx_packets'?: (number | string | Long);
  'rx_errors'?: (number | string | Long);
  'rx_dropped'?: (number | string | Long);
  'rx_fifo'?: (number | string | Long);
  'rx_frame'?: (number | string | Long);
  'rx_compressed'?: (number | string | Long);
  'rx_multicast'?: (number | string | Long);
  'tx_bytes'?: (number | string | Long);
  'tx_packets'?: (number | string | Long);
  'tx_errors'?: (number | string | Long);
  'tx_dropped'?: (number | string | Long);
  'tx_fifo'?: (number | string | Long);
  'tx_collisions'?: (number | string | Long);
  'tx_carrier'?: (number | string | Long);
  'tx_compressed'?: (number | string | Long);
}

export interface NetDev__Output {
  'name': (string);
  'rx_bytes': (string);
  'rx_packets': (string);
  'rx_errors': (string);
  'rx_dropped': (string);
  'rx_fifo': (string);
  'rx_frame': (string);
  'rx_compressed': (string);
  'rx_multicast': (string);
  'tx_bytes': (string);
  'tx_packets': (string);
  'tx_errors': (string);
  'tx_dropped': (string);
  'tx_fifo': (string);
  'tx_collisions': (string);
  'tx_carrier': (string);
  'tx_compressed': (string);
}
