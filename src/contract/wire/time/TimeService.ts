// Original file: protos/time/time.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { Empty as _google_protobuf_Empty, Empty__Output as _google_protobuf_Empty__Output } from '../google/protobuf/Empty.ts';
import type { TimeRequest as _time_TimeRequest, TimeRequest__Output as _time_TimeRequest__Output } from '../time/TimeRequest.ts';
import type { TimeResponse as _time_TimeResponse, TimeResponse__Output as _time_TimeResponse__Output } from '../time/TimeResponse.ts';

export interface TimeServiceDefinition {
  Time: MethodDefinition<_google_protobuf_Empty, _time_TimeResponse, _google_protobuf_Empty__Output, _time_TimeResponse__Output>
  TimeCheck: MethodDefinition<_time_TimeRequest, _time_TimeResponse, _time_TimeRequest__Output, _time_TimeResponse__Output>
}
