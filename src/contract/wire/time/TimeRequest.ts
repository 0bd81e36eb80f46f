// Original file: protos/time/time.proto


export interface TimeRequest {
  'server'?: (string);
}

export interface TimeRequest__Output {
  'server': (string);
}
