// Original file: protos/inspect/inspect.proto

import type { Metadata as _common_Metadata, Metadata__Output as _common_Metadata__Output } from '../common/Metadata.ts';
import type { ControllerDependencyEdge as _inspect_ControllerDependencyEdge, ControllerDependencyEdge__Output as _inspect_ControllerDependencyEdge__Output } from '../inspect/ControllerDependencyEdge.ts';

export interface ControllerRuntimeDependency {
  'metadata'?: (_common_Metadata | null);
  'edges'?: (_inspect_ControllerDependencyEdge)[];
}

export interface ControllerRuntimeDependency__Output {
  'metadata': (_common_Metadata__Output | null);
  'edges': (_inspect_ControllerDependencyEdge__Output)[];
}
