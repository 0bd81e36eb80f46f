// Original file: protos/machine/machine.proto


export interface InstallRequest {
  'disk'?: (string);
  'wipe'?: (boolean);
  'image'?: (string);
  'extra_kernel_args'?: (string)[];
}

export interface InstallRequest__Output {
  'disk': (string);
  'wipe': (boolean);
  'image': (string);
  'extra_kernel_args': (string)[];
}
