// The contract layer's gRPC definitions, from the protos in protos/ compiled into one descriptor
// at build time (image-builder/protos.ts, served as the module `bronze:protos` by the bundler
// and by vitest), so daemons, machined and bronzectl share one source of truth and no process
// parses .proto text when it starts.
//
// Service definitions are made here, lazily and per service, rather than by @grpc/proto-loader:
// proto-loader builds a FileDescriptorProto for every message of every file up front (tens of
// milliseconds on a fast host, a second under QEMU/TCG), which no Bronze process uses. The
// conversions are proto-loader's own: fromObject + encode to serialize, decode + toObject with
// the options below to deserialize (src/contract/protos.test.ts checks both agree).
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs/light.js';
import descriptor from 'bronze:protos';

export { PROTO_FILES } from './proto-files.ts';

/** How messages are handed to and from handlers: proto-loader's options as Bronze used them. */
export const LOADER_OPTIONS = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

const CONVERSION: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

let cachedRoot: protobuf.Root | undefined;
let cachedObject: grpc.GrpcObject | undefined;
const definitions = new Map<string, grpc.ServiceDefinition>();
const clients = new Map<string, grpc.ServiceClientConstructor>();

/**
 * The protobufjs root of every proto file (plus the well-known types), for code that encodes
 * messages itself, e.g. packing a machine.SequenceEvent into an Event's Any.
 */
export function protoRoot(): protobuf.Root {
  if (!cachedRoot) {
    const root = protobuf.Root.fromJSON(descriptor as protobuf.INamespace);
    root.resolveAll();
    cachedRoot = root;
  }
  return cachedRoot;
}

function serializer(type: protobuf.Type): grpc.serialize<unknown> {
  return (value) => Buffer.from(type.encode(type.fromObject(value as Record<string, unknown>)).finish());
}

function deserializer(type: protobuf.Type): grpc.deserialize<unknown> {
  return (bytes) => type.toObject(type.decode(bytes), CONVERSION);
}

function buildDefinition(fullName: string): grpc.ServiceDefinition {
  let service: protobuf.Service;
  try {
    service = protoRoot().lookupService(fullName);
  } catch {
    throw new Error(`unknown gRPC service ${fullName}`);
  }
  const def: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const m of service.methodsArray) {
    m.resolve();
    const req = m.resolvedRequestType!;
    const res = m.resolvedResponseType!;
    def[m.name] = {
      path: `/${fullName}/${m.name}`,
      requestStream: !!m.requestStream,
      responseStream: !!m.responseStream,
      requestSerialize: serializer(req),
      requestDeserialize: deserializer(req),
      responseSerialize: serializer(res),
      responseDeserialize: deserializer(res),
      originalName: m.name.charAt(0).toLowerCase() + m.name.slice(1),
    };
  }
  return def;
}

/** The definition of one service, e.g. `machine.MachineService`, made on first use. */
export function serviceDefinition(fullName: string): grpc.ServiceDefinition {
  let def = definitions.get(fullName);
  if (!def) {
    def = buildDefinition(fullName);
    definitions.set(fullName, def);
  }
  return def;
}

/** The client constructor of one service, e.g. `machine.MachineService`. */
export function serviceClient(fullName: string): grpc.ServiceClientConstructor {
  let ctor = clients.get(fullName);
  if (!ctor) {
    ctor = grpc.makeClientConstructor(serviceDefinition(fullName), fullName.split('.').pop()!);
    clients.set(fullName, ctor);
  }
  return ctor;
}

/** Every service's full name, e.g. `machine.MachineService`, in the order the protos define them. */
export function serviceNames(): string[] {
  const out: string[] = [];
  const walk = (ns: protobuf.NamespaceBase) => {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf.Service) out.push(child.fullName.replace(/^\./, ''));
      else if (child instanceof protobuf.Namespace) walk(child);
    }
  };
  walk(protoRoot());
  return out;
}

/** The gRPC object tree of every service (`machine.MachineService`, `grpc.health.v1.Health`, ...). */
export function grpcObject(): grpc.GrpcObject {
  if (cachedObject) return cachedObject;
  const tree: grpc.GrpcObject = {};
  for (const name of serviceNames()) {
    const parts = name.split('.');
    let node = tree;
    for (const p of parts.slice(0, -1)) node = (node[p] ??= {}) as grpc.GrpcObject;
    node[parts.at(-1)!] = serviceClient(name);
  }
  cachedObject = tree;
  return tree;
}
