// Original file: protos/machine/machine.proto


export interface CPUInfo {
  'processor'?: (number);
  'vendor_id'?: (string);
  'cpu_family'?: (string);
  'model'?: (string);
  'model_name'?: (string);
  'stepping'?: (string);
  'microcode'?: (string);
  'cpu_mhz'?: (number | string);
  'cache_size'?: (string);
  'physical_id'?: (string);
  'siblings'?: (number);
  'core_id'?: (string);
  'cpu_cores'?: (number);
  'apic_id'?: (string);
  'initial_apic_id'?: (string);
  'fpu'?: (string);
  'fpu_exception'?: (string);
  'cpu_id_level'?: (number);
  'wp'?: (string);
  'flags'?: (string)[];
  'bugs'?: (string)[];
  'bogo_mips'?: (number | string);
  'cl_flush_size'?: (number);
  'cache_alignment'?: (number);
  'address_sizes'?: (string);
  'power_management'?: (string);
}

export interface CPUInfo__Output {
  'processor': (number);
  'vendor_id': (string);
  'cpu_family': (string);
  'model': (string);
  'model_name': (string);
  'stepping': (string);
  'microcode': (string);
  'cpu_mhz': (number);
  'cache_size': (string);
  'physical_id': (string);
  'siblings': (number);
  'core_id': (string);
  'cpu_cores': (number);
  'apic_id': (string);
  'initial_apic_id': (string);
  'fpu': (string);
  'fpu_exception': (string);
  'cpu_id_level': (number);
  'wp': (string);
  'flags': (string)[];
  'bugs': (string)[];
  'bogo_mips': (number);
  'cl_flush_size': (number);
  'cache_alignment': (number);
  'address_sizes': (string);
  'power_management': (string);
}
