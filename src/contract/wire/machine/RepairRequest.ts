// Original file: protos/machine/machine.proto


export interface RepairRequest {
  'labels'?: (string)[];
  'zero_log'?: (boolean);
}

export interface RepairRequest__Output {
  'labels': (string)[];
  'zero_log': (boolean);
}
