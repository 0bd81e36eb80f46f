// Original file: protos/cosi/v1alpha1/state.proto

import type { Resource as _cosi_resource_Resource, Resource__Output as _cosi_resource_Resource__Output } from '../../cosi/resource/Resource.ts';
import type { EventType as _cosi_resource_EventType, EventType__Output as _cosi_resource_EventType__Output } from '../../cosi/resource/EventType.ts';

export interface Event {
  'resource'?: (_cosi_resource_Resource | null);
  'event_type'?: (_cosi_resource_EventType);
  'old'?: (_cosi_resource_Resource | null);
  'error'?: (string);
  'bookmark'?: (Buffer | Uint8Array | string);
  '_error'?: "error";
  '_bookmark'?: "bookmark";
}

export interface Event__Output {
  'resource': (_cosi_resource_Resource__Output | null);
  'event_type': (_cosi_resource_EventType__Output);
  'old': (_cosi_resource_Resource__Output | null);
  'error'?: (string);
  'bookmark'?: (Buffer);
  '_error'?: "error";
  '_bookmark'?: "bookmark";
}
