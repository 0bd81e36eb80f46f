// Original file: protos/machine/machine.proto


export interface DmesgRequest {
  'follow'?: (boolean);
  'tail'?: (boolean);
}

export interface DmesgRequest__Output {
  'follow': (boolean);
  'tail': (boolean);
}
