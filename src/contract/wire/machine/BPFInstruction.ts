// Original file: protos/machine/machine.proto


export interface BPFInstruction {
  'op'?: (number);
  'jt'?: (number);
  'jf'?: (number);
  'k'?: (number);
}

export interface BPFInstruction__Output {
  'op': (number);
  'jt': (number);
  'jf': (number);
  'k': (number);
}
