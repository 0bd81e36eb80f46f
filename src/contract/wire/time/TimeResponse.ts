// Original file: protos/time/time.proto

import type { Time as _time_Time, Time__Output as _time_Time__Output } from '../time/Time.ts';

export interface TimeResponse {
  'messages'?: (_time_Time)[];
}

export interface TimeResponse__Output {
  'messages': (_time_Time__Output)[];
}
