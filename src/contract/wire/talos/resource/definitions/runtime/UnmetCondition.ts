// Original file: protos/resource/definitions/runtime/runtime.proto


export interface UnmetCondition {
  'name'?: (string);
  'reason'?: (string);
}

export interface UnmetCondition__Output {
  'name': (string);
  'reason': (string);
}
