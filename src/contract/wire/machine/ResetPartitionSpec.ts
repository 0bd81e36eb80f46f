// Original file: protos/machine/machine.proto


export interface ResetPartitionSpec {
  'label'?: (string);
  'wipe'?: (boolean);
}

export interface ResetPartitionSpec__Output {
  'label': (string);
  'wipe': (boolean);
}
