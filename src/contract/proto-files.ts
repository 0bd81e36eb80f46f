// Every proto file of the contract, by its import path under protos/, in dependency order.
// Data only: image-builder/protos.ts compiles them into one descriptor at build time.
export const PROTO_FILES: readonly string[] = [
  'google/rpc/status.proto',
  'common/common.proto',
  'machine/machine.proto',
  'machine/image.proto',
  'inspect/inspect.proto',
  'time/time.proto',
  'security/security.proto',
  'cosi/v1alpha1/resource.proto',
  'cosi/v1alpha1/state.proto',
  'cosi/v1alpha1/meta.proto',
  'resource/definitions/enums/enums.proto',
  'resource/definitions/block/block.proto',
  'resource/definitions/network/network.proto',
  'resource/definitions/runtime/runtime.proto',
  'resource/definitions/time/time.proto',
  'resource/definitions/v1alpha1/v1alpha1.proto',
  'resource/definitions/containers/containers.proto',
  'resource/config/config.proto',
  'bronze/resource/definitions/runtime.proto',
  'bronze/resource/definitions/config.proto',
  'bronze/resource/definitions/containers.proto',
  'resource/definitions/cluster/cluster.proto',
  'bronze/cluster/registry.proto',
  'etcd/kv.proto',
  'etcd/rpc.proto',
  'grpc/health/v1/health.proto',
];

/** google.protobuf types the protos import, taken from protobufjs's built-in copies. */
export const WELL_KNOWN_PROTOS: readonly string[] = ['google/protobuf/empty.proto', 'google/protobuf/any.proto', 'google/protobuf/timestamp.proto', 'google/protobuf/duration.proto'];

/** The module id under which the bundler (image-builder/bundle.ts) and vitest hand over the descriptor. */
export const PROTO_DESCRIPTOR_MODULE = 'bronze:protos';
