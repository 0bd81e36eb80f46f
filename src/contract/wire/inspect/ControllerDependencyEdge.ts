// Original file: protos/inspect/inspect.proto

import type { DependencyEdgeType as _inspect_DependencyEdgeType, DependencyEdgeType__Output as _inspect_DependencyEdgeType__Output } from '../inspect/DependencyEdgeType.ts';

export interface ControllerDependencyEdge {
  'controller_name'?: (string);
  'edge_type'?: (_inspect_DependencyEdgeType);
  'resource_namespace'?: (string);
  'resource_type'?: (string);
  'resource_id'?: (string);
}

export interface ControllerDependencyEdge__Output {
  'controller_name': (string);
  'edge_type': (_inspect_DependencyEdgeType__Output);
  'resource_namespace': (string);
  'resource_type': (string);
  'resource_id': (string);
}
