// Original file: protos/resource/definitions/block/block.proto

import type { Long } from '@grpc/proto-loader';

export interface DiskSpec {
  'size'?: (number | string | Long);
  'io_size'?: (number | string | Long);
  'sector_size'?: (number | string | Long);
  'readonly'?: (boolean);
  'model'?: (string);
  'serial'?: (string);
  'modalias'?: (string);
  'wwid'?: (string);
  'bus_path'?: (string);
  'sub_system'?: (string);
  'transport'?: (string);
  'rotational'?: (boolean);
  'cdrom'?: (boolean);
  'dev_path'?: (string);
  'pretty_size'?: (string);
  'secondary_disks'?: (string)[];
  'uuid'?: (string);
  'symlinks'?: (string)[];
}

export interface DiskSpec__Output {
  'size': (string);
  'io_size': (string);
  'sector_size': (string);
  'readonly': (boolean);
  'model': (string);
  'serial': (string);
  'modalias': (string);
  'wwid': (string);
  'bus_path': (string);
  'sub_system': (string);
  'transport': (string);
  'rotational': (boolean);
  'cdrom': (boolean);
  'dev_path': (string);
  'pretty_size': (string);
  'secondary_disks': (string)[];
  'uuid': (string);
  'symlinks': (string)[];
}
