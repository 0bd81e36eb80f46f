// The contract layer's gRPC definitions, built from the .proto files in protos/ (embedded as
// text at bundle time), so daemons, machined and bronzectl all share one source of truth.
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import statusProto from '../../protos/google/rpc/status.proto';
import commonProto from '../../protos/common/common.proto';
import machineProto from '../../protos/machine/machine.proto';
import timeProto from '../../protos/time/time.proto';
import securityProto from '../../protos/security/security.proto';
import cosiResourceProto from '../../protos/cosi/v1alpha1/resource.proto';
import cosiStateProto from '../../protos/cosi/v1alpha1/state.proto';
import healthProto from '../../protos/grpc/health/v1/health.proto';

/** Every proto file, keyed by its import path, in dependency order. */
export const PROTO_FILES: ReadonlyArray<readonly [string, string]> = [
  ['google/rpc/status.proto', statusProto],
  ['common/common.proto', commonProto],
  ['machine/machine.proto', machineProto],
  ['time/time.proto', timeProto],
  ['security/security.proto', securityProto],
  ['cosi/v1alpha1/resource.proto', cosiResourceProto],
  ['cosi/v1alpha1/state.proto', cosiStateProto],
  ['grpc/health/v1/health.proto', healthProto],
];

/** google.protobuf types the protos import, taken from protobufjs's built-in copies. */
const WELL_KNOWN = ['google/protobuf/empty.proto', 'google/protobuf/any.proto', 'google/protobuf/timestamp.proto', 'google/protobuf/duration.proto'];

export const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

let cachedRoot: protobuf.Root | undefined;
let cached: grpc.GrpcObject | undefined;

/**
 * The parsed protobufjs root of every proto file (plus the well-known types), for code that
 * encodes messages itself, e.g. packing a machine.SequenceEvent into an Event's Any.
 */
export function protoRoot(): protobuf.Root {
  if (cachedRoot) return cachedRoot;
  const root = new protobuf.Root();
  for (const name of WELL_KNOWN) {
    const json = protobuf.common.get(name);
    if (!json) throw new Error(`protobufjs has no well-known type ${name}`);
    root.addJSON(json.nested as Record<string, protobuf.AnyNestedObject>);
  }
  for (const [file, text] of PROTO_FILES) {
    try {
      protobuf.parse(text, root, { keepCase: true });
    } catch (err) {
      throw new Error(`protos/${file}: ${(err as Error).message}`);
    }
  }
  root.resolveAll();
  cachedRoot = root;
  return root;
}

/** The loaded gRPC object tree (`machine.MachineService`, `grpc.health.v1.Health`, ...). */
export function grpcObject(): grpc.GrpcObject {
  if (cached) return cached;
  const def = protoLoader.fromJSON(protoRoot().toJSON(), LOADER_OPTIONS);
  cached = grpc.loadPackageDefinition(def);
  return cached;
}

/** Looks up a service constructor by its full name, e.g. `machine.MachineService`. */
export function serviceClient(fullName: string): grpc.ServiceClientConstructor {
  let node: unknown = grpcObject();
  for (const part of fullName.split('.')) node = (node as Record<string, unknown> | undefined)?.[part];
  if (typeof node !== 'function' || !('service' in node)) throw new Error(`unknown gRPC service ${fullName}`);
  return node as grpc.ServiceClientConstructor;
}

export function serviceDefinition(fullName: string): grpc.ServiceDefinition {
  return serviceClient(fullName).service;
}
