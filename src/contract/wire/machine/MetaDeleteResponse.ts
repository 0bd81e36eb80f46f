// Original file: protos/machine/machine.proto

import type { MetaDelete as _machine_MetaDelete, MetaDelete__Output as _machine_MetaDelete__Output } from '../machine/MetaDelete.ts';

export interface MetaDeleteResponse {
  'messages'?: (_machine_MetaDelete)[];
}

export interface MetaDeleteResponse__Output {
  'messages': (_machine_MetaDelete__Output)[];
}
