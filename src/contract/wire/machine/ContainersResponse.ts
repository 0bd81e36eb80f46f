// Original file: protos/machine/machine.proto

import type { Container as _machine_Container, Container__Output as _machine_Container__Output } from '../machine/Container.ts';

export interface ContainersResponse {
  'messages'?: (_machine_Container)[];
}

export interface ContainersResponse__Output {
  'messages': (_machine_Container__Output)[];
}
