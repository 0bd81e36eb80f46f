// Original file: protos/inspect/inspect.proto

import type { ControllerRuntimeDependency as _inspect_ControllerRuntimeDependency, ControllerRuntimeDependency__Output as _inspect_ControllerRuntimeDependency__Output } from '../inspect/ControllerRuntimeDependency.ts';

export interface ControllerRuntimeDependenciesResponse {
  'messages'?: (_inspect_ControllerRuntimeDependency)[];
}

export interface ControllerRuntimeDependenciesResponse__Output {
  'messages': (_inspect_ControllerRuntimeDependency__Output)[];
}
