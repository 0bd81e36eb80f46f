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
import { codecs, methodInfo as METHOD_INFO, methodUnits, unitDeps, unitText } from 'bronze:protos';
import { lazyCodegen } from './lazy-codegen.ts';
import { type LongClass, fastLongToString } from './long-string.ts';

export { PROTO_FILES } from './proto-files.ts';

/** How messages are handed to and from handlers: proto-loader's options as Bronze used them. */
export const LOADER_OPTIONS = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
} as const;

// Each message type generates each of its functions when first called, not all five at once;
// the messages every boot exchanges have theirs written at build time (`codecs`).
lazyCodegen(protobuf, codecs);
fastLongToString(protobuf.util.Long as unknown as LongClass | null);

const CONVERSION: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true, oneofs: true };

let cachedRoot: protobuf.Root | undefined;
let cachedObject: grpc.GrpcObject | undefined;
const definitions = new Map<string, grpc.ServiceDefinition>();
const clients = new Map<string, grpc.ServiceClientConstructor>();

/**
 * The protobufjs root of every proto file (plus the well-known types), for code that encodes
 * messages itself, e.g. bronzectl decoding an event's Any. It parses every unit's text.
 */
export function protoRoot(): protobuf.Root {
  if (!cachedRoot) {
    const root = new protobuf.Root();
    for (const name of Object.keys(unitText)) {
      const dot = name.lastIndexOf('.');
      (dot < 0 ? root : root.define(name.slice(0, dot))).addJSON({ [name.slice(dot + 1)]: jsonAt(name) as protobuf.AnyNestedObject });
    }
    root.resolveAll();
    cachedRoot = root;
  }
  return cachedRoot;
}

function serialize(type: protobuf.Type, value: unknown): Buffer {
  // fromObject first: in `type.encode(type.fromObject(v))` encode is looked up before
  // fromObject sets the type up, so the first call would set it up (codegen) twice.
  const message = type.fromObject(value as Record<string, unknown>);
  return Buffer.from(type.encode(message).finish());
}

function deserialize(type: protobuf.Type, bytes: Buffer): unknown {
  return type.toObject(type.decode(bytes), CONVERSION);
}

interface JsonUnit {
  methods?: Record<string, unknown>;
}

const parsedUnits = new Map<string, JsonUnit>();

/**
 * The descriptor's JSON of a top-level message, enum or service (a unit) by full name such as
 * `machine.VersionResponse`, parsed from its text the first time it is asked for (the build
 * keeps each unit's text apart, image-builder/protos.ts unitTexts, so that a process parses only
 * what it uses). protobufjs keeps the objects it is given, so each is parsed once.
 */
function jsonAt(fullName: string): JsonUnit | undefined {
  let json = parsedUnits.get(fullName);
  if (!json && Object.hasOwn(unitText, fullName)) {
    json = JSON.parse(unitText[fullName]!) as JsonUnit;
    parsedUnits.set(fullName, json);
  }
  return json;
}

/**
 * The one protobufjs root that every method's and message's types are built in, holding only
 * the top-level messages and enums (units) something has asked for, added as they are first
 * needed. One root, so that a message several methods share (cosi's Resource and Metadata, say)
 * is one protobufjs type, whose encoder and decoder are generated once: protobufjs generates
 * them per type, and under QEMU/TCG machined spent more time in that code generation than in
 * anything else its first API calls did.
 */
const lazyRoot = new protobuf.Root();
const addedUnits = new Set<string>();

/** Adds what is not in lazyRoot yet: these units, and these methods of a service. */
function grow(units: Iterable<string>, service?: { fullName: string; methods: Record<string, unknown> }): protobuf.Root {
  let grew = false;
  for (const u of units) {
    if (addedUnits.has(u)) continue;
    const dot = u.lastIndexOf('.');
    const parent = dot < 0 ? lazyRoot : lazyRoot.define(u.slice(0, dot));
    parent.addJSON({ [u.slice(dot + 1)]: jsonAt(u) as protobuf.AnyNestedObject });
    addedUnits.add(u);
    grew = true;
  }
  if (service) {
    const existing = lazyRoot.lookup(service.fullName);
    const svc = existing instanceof protobuf.Service ? existing : undefined;
    const missing = Object.entries(service.methods).filter(([m]) => !svc?.methods[m]);
    if (missing.length > 0) {
      if (svc) for (const [m, json] of missing) svc.add(protobuf.Method.fromJSON(m, json as protobuf.IMethod));
      else {
        const dot = service.fullName.lastIndexOf('.');
        lazyRoot.define(service.fullName.slice(0, dot)).addJSON({ [service.fullName.slice(dot + 1)]: { methods: Object.fromEntries(missing) } as protobuf.AnyNestedObject });
      }
      grew = true;
    }
  }
  if (grew) lazyRoot.resolveAll();
  return lazyRoot;
}

/**
 * The root holding one service's methods and the messages they need (image-builder/protos.ts
 * `methodUnits`), not every proto: under QEMU/TCG, the root of every proto cost a daemon about
 * a second of its start.
 */
function serviceRoot(fullName: string, methods: readonly string[]): protobuf.Root {
  const svc = jsonAt(fullName);
  if (!svc?.methods) throw new Error(`unknown gRPC service ${fullName}`);
  const units = new Set<string>();
  const chosen: Record<string, unknown> = {};
  for (const m of methods) {
    const needs = methodUnits[`${fullName}/${m}`];
    if (!needs || !Object.hasOwn(svc.methods, m)) throw new Error(`unknown gRPC method ${fullName}/${m}`);
    chosen[m] = svc.methods[m];
    for (const u of needs) units.add(u);
  }
  return grow(units, { fullName, methods: chosen });
}

const messageTypes = new Map<string, protobuf.Type>();

/**
 * One message's protobufjs type by its full name (`machine.SequenceEvent`, a nested
 * `machine.RebootRequest.Mode`'s message, ...), resolved, in the root of only the top-level
 * messages and enums asked for (it adds the ones this needs: `unitDeps`, followed to its
 * closure), made once. Resource specs
 * and event payloads are encoded with these: the root of every proto took machined a quarter
 * of a second under QEMU/TCG, on its first resource read through the API.
 */
export function messageType(fullName: string): protobuf.Type {
  let t = messageTypes.get(fullName);
  if (t) return t;
  // The unit is the longest prefix that is a top-level message or enum.
  let unit = fullName;
  while (!Object.hasOwn(unitDeps, unit)) {
    const dot = unit.lastIndexOf('.');
    if (dot < 0) throw new Error(`no such message type: ${fullName}`);
    unit = unit.slice(0, dot);
  }
  const units = new Set<string>();
  const visit = (u: string) => {
    if (units.has(u)) return;
    units.add(u);
    for (const d of unitDeps[u] ?? []) visit(d);
  };
  visit(unit);
  t = grow(units).lookupType(fullName);
  messageTypes.set(fullName, t);
  return t;
}

/** A method's request and response types, built the first time one of its messages is (de)serialized. */
function lazyTypes(fullName: string, method: string): () => { req: protobuf.Type; res: protobuf.Type } {
  let types: { req: protobuf.Type; res: protobuf.Type } | undefined;
  return () => {
    if (!types) {
      const m = serviceRoot(fullName, [method]).lookupService(fullName).methods[method]!;
      m.resolve();
      types = { req: m.resolvedRequestType!, res: m.resolvedResponseType! };
    }
    return types;
  };
}

/**
 * A service's gRPC definition from the descriptor's JSON alone. Each method's protobufjs types
 * are built when its first message is, from only what that method needs: a server registers
 * every method of its services when it starts, and under QEMU/TCG building all of
 * machine.MachineService's types then cost machined most of a second before its socket was
 * there (the first API read waits on it); a node at boot calls a handful of them.
 */
function buildDefinition(fullName: string, methods?: readonly string[]): grpc.ServiceDefinition {
  const all = jsonAt(fullName)?.methods;
  const names = methods ?? Object.keys(all ?? {});
  if (!all || names.length === 0) throw new Error(`unknown gRPC service ${fullName}`);
  const def: Record<string, grpc.MethodDefinition<unknown, unknown>> = {};
  for (const name of names) {
    const json = Object.hasOwn(all, name) ? (all[name] as { requestStream?: boolean; responseStream?: boolean }) : undefined;
    if (!json || !methodUnits[`${fullName}/${name}`]) throw new Error(`unknown gRPC method ${fullName}/${name}`);
    const types = lazyTypes(fullName, name);
    def[name] = {
      path: `/${fullName}/${name}`,
      requestStream: !!json.requestStream,
      responseStream: !!json.responseStream,
      requestSerialize: (value) => serialize(types().req, value),
      requestDeserialize: (bytes) => deserialize(types().req, bytes),
      responseSerialize: (value) => serialize(types().res, value),
      responseDeserialize: (bytes) => deserialize(types().res, bytes),
      originalName: name.charAt(0).toLowerCase() + name.slice(1),
    };
  }
  return def;
}

/**
 * The definition of one service, e.g. `machine.MachineService`, made on first use; with
 * `methods`, of only those (a daemon that serves one method of a large service).
 */
export function serviceDefinition(fullName: string, methods?: readonly string[]): grpc.ServiceDefinition {
  const key = methods ? `${fullName}|${methods.join(',')}` : fullName;
  let def = definitions.get(key);
  if (!def) {
    def = buildDefinition(fullName, methods);
    definitions.set(key, def);
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

export interface MethodInfo {
  name: string;
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  /** How apid stamps its replies (envelope.ts). */
  reply: 'envelope' | 'stamped' | 'plain';
}

/** One method by its path (`/machine.MachineService/Version`), without building any protobufjs type. */
export function methodInfo(path: string): MethodInfo | undefined {
  const info = Object.hasOwn(METHOD_INFO, path) ? METHOD_INFO[path] : undefined;
  return info && { name: path.slice(path.lastIndexOf('/') + 1), path, ...info };
}

/** Every method of a service, in proto order, without building any protobufjs type (apid routes with these). */
export function methodsOf(fullName: string): MethodInfo[] {
  const prefix = `/${fullName}/`;
  const out = Object.keys(METHOD_INFO).filter((p) => p.startsWith(prefix)).map((p) => methodInfo(p)!);
  if (out.length === 0) throw new Error(`unknown gRPC service ${fullName}`);
  return out;
}

/** Every service's full name, e.g. `machine.MachineService`, in the order the protos define them. */
export function serviceNames(): string[] {
  const out = new Set<string>();
  for (const path of Object.keys(METHOD_INFO)) out.add(path.slice(1, path.lastIndexOf('/')));
  return [...out];
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
