// Original file: protos/machine/machine.proto


export interface AddressEvent {
  'hostname'?: (string);
  'addresses'?: (string)[];
}

export interface AddressEvent__Output {
  'hostname': (string);
  'addresses': (string)[];
}
