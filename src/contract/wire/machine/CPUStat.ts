// Original file: protos/machine/machine.proto


export interface CPUStat {
  'user'?: (number | string);
  'nice'?: (number | string);
  'system'?: (number | string);
  'idle'?: (number | string);
  'iowait'?: (number | string);
  'irq'?: (number | string);
  'soft_irq'?: (number | string);
  'steal'?: (number | string);
  'guest'?: (number | string);
  'guest_nice'?: (number | string);
}

export interface CPUStat__Output {
  'user': (number);
  'nice': (number);
  'system': (number);
  'idle': (number);
  'iowait': (number);
  'irq': (number);
  'soft_irq': (number);
  'steal': (number);
  'guest': (number);
  'guest_nice': (number);
}
