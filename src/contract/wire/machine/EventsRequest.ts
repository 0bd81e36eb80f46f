// Original file: protos/machine/machine.proto


export interface EventsRequest {
  'tail_events'?: (number);
  'tail_id'?: (string);
  'tail_seconds'?: (number);
  'with_actor_id'?: (string);
}

export interface EventsRequest__Output {
  'tail_events': (number);
  'tail_id': (string);
  'tail_seconds': (number);
  'with_actor_id': (string);
}
