// Original file: protos/machine/machine.proto

import type { EtcdForfeitLeadership as _machine_EtcdForfeitLeadership, EtcdForfeitLeadership__Output as _machine_EtcdForfeitLeadership__Output } from '../machine/EtcdForfeitLeadership.ts';

export interface EtcdForfeitLeadershipResponse {
  'messages'?: (_machine_EtcdForfeitLeadership)[];
}

export interface EtcdForfeitLeadershipResponse__Output {
  'messages': (_machine_EtcdForfeitLeadership__Output)[];
}
