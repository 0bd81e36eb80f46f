// Compiles protos/ into one protobufjs JSON descriptor at build time, so that no process parses
// .proto text when it starts. The bundler (image-builder/bundle.ts) and vitest (vitest.config.ts)
// both serve it as the module `bronze:protos`; src/contract/protos.ts reads it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { PROTO_FILES, WELL_KNOWN_PROTOS } from '../src/contract/proto-files.ts';
import { shapeOf } from '../src/contract/reply-shape.ts';

const PROTOS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'protos');

/** The resolved descriptor of every proto file (plus the well-known types they import). */
export function compileProtos(dir = PROTOS_DIR): protobuf.INamespace {
  const root = new protobuf.Root();
  for (const name of WELL_KNOWN_PROTOS) {
    const json = protobuf.common.get(name);
    if (!json) throw new Error(`protobufjs has no well-known type ${name}`);
    root.addJSON(json.nested as Record<string, protobuf.AnyNestedObject>);
  }
  for (const file of PROTO_FILES) {
    const text = fs.readFileSync(path.join(dir, file), 'utf8');
    try {
      protobuf.parse(text, root, { keepCase: true });
    } catch (err) {
      throw new Error(`protos/${file}: ${(err as Error).message}`);
    }
  }
  root.resolveAll();
  return root.toJSON({ keepComments: false });
}

/** The top-level message or enum a type belongs to (its unit): a nested type travels in its outermost message's descriptor. */
function unitOf(t: protobuf.ReflectionObject): string {
  let top = t;
  while (top.parent && !(top.parent instanceof protobuf.Root) && (top.parent instanceof protobuf.Type || top.parent instanceof protobuf.Enum)) top = top.parent;
  return top.fullName.replace(/^\./, '');
}

/** The other units a unit's fields name, its nested types' fields included. */
function directUnits(root: protobuf.Root, unit: string): Set<string> {
  const out = new Set<string>();
  const walk = (o: protobuf.ReflectionObject): void => {
    if (!(o instanceof protobuf.Type)) return;
    for (const f of o.fieldsArray) {
      const t = f.resolve().resolvedType;
      if (t) out.add(unitOf(t));
    }
    for (const n of o.nestedArray) walk(n);
  };
  walk(root.lookup(unit)!);
  out.delete(unit);
  return out;
}

/** Every type of the descriptor's root, walked in proto order. */
function eachType(root: protobuf.Root, visit: (t: protobuf.Type | protobuf.Enum) => void, services?: (s: protobuf.Service) => void): void {
  const walkNs = (ns: protobuf.NamespaceBase) => {
    for (const child of ns.nestedArray) {
      if (child instanceof protobuf.Service) services?.(child);
      else if (child instanceof protobuf.Type || child instanceof protobuf.Enum) visit(child);
      else if (child instanceof protobuf.Namespace) walkNs(child);
    }
  };
  walkNs(root);
}

/**
 * For every top-level message and enum (a unit) by full name without the leading dot, the
 * other units its fields name directly, nested types' fields included. src/contract/protos.ts
 * builds the protobufjs root of one message from its closure under these: the root of every
 * proto costs machined about a quarter of a second under QEMU/TCG, and its first resource read
 * through the API waited on it.
 */
export function unitDeps(descriptor: protobuf.INamespace): Record<string, string[]> {
  const root = protobuf.Root.fromJSON(descriptor);
  root.resolveAll();
  const out: Record<string, string[]> = {};
  eachType(root, (t) => {
    const unit = unitOf(t);
    out[unit] = [...directUnits(root, unit)].sort();
  });
  return out;
}

/**
 * For every method (`pkg.Service/Method`), the top-level messages and enums its request and
 * response need, directly or through their fields, by full name without the leading dot. A
 * nested type counts as its outermost message, whose descriptor holds it. src/contract/protos.ts
 * builds each service's protobufjs root from these alone: building the root of every proto at
 * start was the largest single cost of a daemon's start under QEMU/TCG.
 */
export function methodUnits(descriptor: protobuf.INamespace): Record<string, string[]> {
  const root = protobuf.Root.fromJSON(descriptor);
  root.resolveAll();
  const out: Record<string, string[]> = {};
  eachMethod(root, (service, m) => {
    const units = new Set<string>();
    const visit = (unit: string): void => {
      if (units.has(unit)) return;
      units.add(unit);
      // The whole unit travels, so everything it holds is needed too.
      for (const u of directUnits(root, unit)) visit(u);
    };
    visit(unitOf(m.resolvedRequestType!));
    visit(unitOf(m.resolvedResponseType!));
    out[`${service}/${m.name}`] = [...units].sort();
  });
  return out;
}

/** Every method of every service, resolved, in proto order, with its service's full name (no leading dot). */
function eachMethod(root: protobuf.Root, visit: (service: string, m: protobuf.Method) => void): void {
  eachType(
    root,
    () => {},
    (svc) => {
      for (const m of svc.methodsArray) {
        m.resolve();
        visit(svc.fullName.replace(/^\./, ''), m);
      }
    },
  );
}

/**
 * For every method, by its path (`/pkg.Service/Method`), in the order the protos define them:
 * whether it streams each way, and the shape of its reply for apid's stamping (envelope.ts).
 * apid routes every method with this alone, without building a protobufjs root.
 */
export function methodInfoTable(descriptor: protobuf.INamespace): Record<string, { requestStream: boolean; responseStream: boolean; reply: string }> {
  const root = protobuf.Root.fromJSON(descriptor);
  root.resolveAll();
  const out: Record<string, { requestStream: boolean; responseStream: boolean; reply: string }> = {};
  eachMethod(root, (service, m) => {
    out[`/${service}/${m.name}`] = { requestStream: !!m.requestStream, responseStream: !!m.responseStream, reply: shapeOf(m.resolvedResponseType!, !!m.responseStream) };
  });
  return out;
}

/**
 * Each top-level message, enum and service of the descriptor (its unit), by full name without
 * the leading dot, as its own JSON text: src/contract/protos.ts parses a unit's text only when
 * something first needs it. The descriptor parsed whole was about half a megabyte of V8 heap in
 * every process (a daemon needs a tenth of it), and its JSON.parse a good part of a daemon's
 * module code under QEMU/TCG.
 */
export function unitTexts(descriptor: protobuf.INamespace): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (ns: protobuf.INamespace, prefix: string): void => {
    for (const [name, child] of Object.entries(ns.nested ?? {})) {
      const c = child as protobuf.INamespace & { fields?: unknown; values?: unknown; methods?: unknown };
      if (c.fields !== undefined || c.values !== undefined || c.methods !== undefined) out[prefix + name] = JSON.stringify(c);
      else walk(c, `${prefix}${name}.`);
    }
  };
  walk(descriptor, '');
  return out;
}

/**
 * The messages whose protobufjs functions (encode, decode, verify, fromObject, toObject) are
 * written at build time instead of generated in every process at its first call: the messages
 * of these methods (`pkg.Service/*`: every method of the service) and these messages, with
 * what their fields name. They are what every boot exchanges: the COSI state calls between
 * machined and the daemons, the health checks, Version, and the ResourceDefinitions the first
 * API reads return. A boot under QEMU/TCG generated 184 functions at run time, all of these
 * messages (78 in machined, 38 in networkd); the rest of the protos stay generated on first use.
 */
export const BUILD_TIME_CODECS = {
  methods: ['cosi.resource.State/*', 'grpc.health.v1.Health/*', 'machine.MachineService/Version'],
  messages: ['cosi.resource.meta.ResourceDefinitionSpec', 'google.protobuf.Empty'],
} as const;

/** The names of protobufjs's generated functions, in the order a codec factory returns them. */
export const CODEC_FUNCTIONS = ['encode', 'decode', 'verify', 'fromObject', 'toObject'] as const;

/**
 * The source of each generated function of `type`, as protobufjs's Type.setup would generate
 * it: its encoder, decoder, verifier and converters, each a function whose free names are the
 * scope protobufjs gives it (Writer, Reader, types, util).
 */
export function codecSources(type: protobuf.Type): Record<(typeof CODEC_FUNCTIONS)[number], string> {
  const pb = protobuf as unknown as {
    encoder(t: protobuf.Type): { toString(): string };
    decoder(t: protobuf.Type): { toString(): string };
    verifier(t: protobuf.Type): { toString(): string };
    converter: { fromObject(t: protobuf.Type): { toString(): string }; toObject(t: protobuf.Type): { toString(): string } };
  };
  return {
    encode: pb.encoder(type).toString(),
    decode: pb.decoder(type).toString(),
    verify: pb.verifier(type).toString(),
    fromObject: pb.converter.fromObject(type).toString(),
    toObject: pb.converter.toObject(type).toString(),
  };
}

/** What protosModuleSource has made from the descriptor already, so that the codecs do not make it again. */
interface MadeFromDescriptor {
  root: protobuf.Root;
  methodUnits: Record<string, string[]>;
  unitDeps: Record<string, string[]>;
}

function resolvedRoot(descriptor: protobuf.INamespace): protobuf.Root {
  const root = protobuf.Root.fromJSON(descriptor);
  root.resolveAll();
  return root;
}

/** Every message type (nested ones included) of the units BUILD_TIME_CODECS names, by full name without the leading dot. */
export function buildTimeCodecTypes(descriptor: protobuf.INamespace, made: Partial<MadeFromDescriptor> = {}, wanted: { methods: readonly string[]; messages: readonly string[] } = BUILD_TIME_CODECS): string[] {
  const units = new Set<string>();
  const byMethod = made.methodUnits ?? methodUnits(descriptor);
  const deps = made.unitDeps ?? unitDeps(descriptor);
  const visit = (u: string): void => {
    if (units.has(u)) return;
    if (!Object.hasOwn(deps, u)) throw new Error(`BUILD_TIME_CODECS: no message ${u}`);
    units.add(u);
    for (const d of deps[u]!) visit(d);
  };
  for (const m of wanted.methods) {
    const [service, method] = m.split('/') as [string, string];
    const found = Object.keys(byMethod).filter((k) => (method === '*' ? k.startsWith(`${service}/`) : k === m));
    if (found.length === 0) throw new Error(`BUILD_TIME_CODECS: no method ${m}`);
    for (const k of found) for (const u of byMethod[k]!) visit(u);
  }
  for (const u of wanted.messages) visit(u);
  const root = made.root ?? resolvedRoot(descriptor);
  const out: string[] = [];
  const walk = (o: protobuf.ReflectionObject): void => {
    if (!(o instanceof protobuf.Type)) return;
    out.push(o.fullName.replace(/^\./, ''));
    for (const n of o.nestedArray) walk(n);
  };
  for (const u of [...units].sort()) walk(root.lookup(u)!);
  return out;
}

/**
 * The `codecs` export of the protos module: for each message of buildTimeCodecTypes, a factory
 * taking protobufjs's scope (Writer, Reader, types, util) and returning its five functions,
 * written out as protobufjs generates them (codecSources). In the bundle they are code like the
 * rest: compiled when first called (from the code cache's lazy functions, without protobufjs
 * building their source text and a Function of it in every process, which its boot profiles
 * showed as machined's and networkd's largest self time).
 */
export function codecsModuleSource(descriptor: protobuf.INamespace, made: Partial<MadeFromDescriptor> = {}): string {
  const root = made.root ?? resolvedRoot(descriptor);
  const entries = buildTimeCodecTypes(descriptor, { ...made, root }).map((name) => {
    const src = codecSources(root.lookupType(name));
    const fns = CODEC_FUNCTIONS.map((f) => `${f}: ${src[f]}`).join(',\n');
    return `${JSON.stringify(name)}: function (Writer, Reader, types, util) { return {\n${fns}\n}; }`;
  });
  return `export const codecs = {\n${entries.join(',\n')}\n};\n`;
}

/**
 * The descriptor as an ES module's source (a JSON.parse of a string is V8's fastest literal):
 * `unitText` each unit's JSON text (unitTexts), `methodUnits` what each method needs of them,
 * `unitDeps` what each top-level message and enum names directly, `methodInfo` each method's
 * streaming and reply shape, `codecs` the functions of the messages every boot exchanges
 * (codecsModuleSource).
 */
export function protosModuleSource(dir = PROTOS_DIR): string {
  const descriptor = compileProtos(dir);
  const units = methodUnits(descriptor);
  const deps = unitDeps(descriptor);
  return (
    `export const unitText = JSON.parse(${JSON.stringify(JSON.stringify(unitTexts(descriptor)))});\n` +
    `export const methodUnits = JSON.parse(${JSON.stringify(JSON.stringify(units))});\n` +
    `export const unitDeps = JSON.parse(${JSON.stringify(JSON.stringify(deps))});\n` +
    `export const methodInfo = JSON.parse(${JSON.stringify(JSON.stringify(methodInfoTable(descriptor)))});\n` +
    codecsModuleSource(descriptor, { methodUnits: units, unitDeps: deps })
  );
}

let protosModule: string | undefined;
/**
 * protosModuleSource, made once per process: the bundler (image-builder/bundle.ts) asks for it
 * once per role, vitest (vitest.config.ts) once per test file's module graph.
 */
export function protosModuleOnce(): string {
  return (protosModule ??= protosModuleSource());
}

/** Files whose change changes the descriptor (for build tools that watch inputs). */
export function protoInputs(dir = PROTOS_DIR): string[] {
  return PROTO_FILES.map((f) => path.join(dir, f));
}
