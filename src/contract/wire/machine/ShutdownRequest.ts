// Original file: protos/machine/machine.proto


export interface ShutdownRequest {
  'force'?: (boolean);
}

export interface ShutdownRequest__Output {
  'force': (boolean);
}
