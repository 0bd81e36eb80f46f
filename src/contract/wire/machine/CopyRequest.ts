// Original file: protos/machine/machine.proto


export interface CopyRequest {
  'root_path'?: (string);
}

export interface CopyRequest__Output {
  'root_path': (string);
}
