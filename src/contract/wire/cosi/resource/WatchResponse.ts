// Original file: protos/cosi/v1alpha1/state.proto

import type { Event as _cosi_resource_Event, Event__Output as _cosi_resource_Event__Output } from '../../cosi/resource/Event.ts';

export interface WatchResponse {
  'event'?: (_cosi_resource_Event)[];
}

export interface WatchResponse__Output {
  'event': (_cosi_resource_Event__Output)[];
}
