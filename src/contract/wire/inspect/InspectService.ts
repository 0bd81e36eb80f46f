// Original file: protos/inspect/inspect.proto

import type { MethodDefinition } from '@grpc/proto-loader'
import type { ControllerRuntimeDependenciesResponse as _inspect_ControllerRuntimeDependenciesResponse, ControllerRuntimeDependenciesResponse__Output as _inspect_ControllerRuntimeDependenciesResponse__Output } from '../inspect/ControllerRuntimeDependenciesResponse.ts';
import type { Empty as _google_protobuf_Empty, Empty__Output as _google_protobuf_Empty__Output } from '../google/protobuf/Empty.ts';

export interface InspectServiceDefinition {
  ControllerRuntimeDependencies: MethodDefinition<_google_protobuf_Empty, _inspect_ControllerRuntimeDependenciesResponse, _google_protobuf_Empty__Output, _inspect_ControllerRuntimeDependenciesResponse__Output>
}
