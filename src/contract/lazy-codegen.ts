// protobufjs generates a message type's five functions (encode, decode, verify, fromObject,
// toObject) all at once, with `new Function`, the first time any one of them is called
// (Type.prototype.setup). A process mostly needs two of them per type: a server fromObject and
// encode for its replies, decode and toObject for its requests, a client the other way round.
// Generated code is the largest single cost of a role's first calls under QEMU/TCG (in boot
// profiles, machined spent 357 ms and networkd 267 ms in protobufjs's Codegen; each of the five
// costs about a fifth), and no code cache can hold it.
//
// lazyCodegen makes protobufjs generate each function when it is first called, with the same
// generators and arguments as Type.prototype.setup, and the same wrappers for the well-known
// types (google.protobuf.Any's fromObject and toObject). What it replaces is protobufjs 7's
// setup, checked by src/contract/lazy-codegen.test.ts against protobufjs's own functions.
import type protobufLight from 'protobufjs/light.js';

type Protobuf = typeof protobufLight;
type Generated = (...args: unknown[]) => unknown;
export const GENERATED = ['encode', 'decode', 'verify', 'fromObject', 'toObject'] as const;
type Name = (typeof GENERATED)[number];

/** A message's five functions written at build time (image-builder/protos.ts codecsModuleSource), by full name without the leading dot. */
export type BuildTimeCodecs = Record<string, (Writer: unknown, Reader: unknown, types: unknown[], util: unknown) => Record<Name, (...args: unknown[]) => unknown>>;

/** Each type's functions from its build-time factory, made once per type (the factory makes all five closures; each compiles when first called). */
const madeAtBuild = new WeakMap<protobufLight.Type, Record<Name, Generated>>();

/** The function protobufjs's setup would make for `name`, wrapped as setup wraps it. */
function generate(pb: Protobuf, type: protobufLight.Type, name: Name, codecs: BuildTimeCodecs): Generated {
  // As setup: resolving the fields on the way (fieldsArray initializes them).
  const types = type.fieldsArray.map((f) => f.resolve().resolvedType);
  const util = pb.util;
  let fn: Generated;
  let built = madeAtBuild.get(type);
  const key = type.fullName.slice(1);
  if (!built && Object.hasOwn(codecs, key)) {
    built = codecs[key]!(pb.Writer, pb.Reader, types, util);
    madeAtBuild.set(type, built);
  }
  if (built) fn = built[name];
  else switch (name) {
    case 'encode':
      fn = pb.encoder(type)({ Writer: pb.Writer, types, util }) as Generated;
      break;
    case 'decode':
      fn = pb.decoder(type)({ Reader: pb.Reader, types, util }) as Generated;
      break;
    case 'verify':
      fn = pb.verifier(type)({ types, util }) as Generated;
      break;
    case 'fromObject':
      fn = pb.converter.fromObject(type)({ types, util }) as Generated;
      break;
    case 'toObject':
      fn = pb.converter.toObject(type)({ types, util }) as Generated;
      break;
  }
  const wrapper = (name === 'fromObject' || name === 'toObject') && pb.wrappers[type.fullName];
  const wrap = wrapper ? wrapper[name] : undefined;
  if (!wrap) return fn;
  // setup's wrapping: the wrapper runs with a `this` whose own fromObject/toObject is the generated one.
  const original = Object.create(type) as Record<string, unknown>;
  original[name] = fn;
  return (wrap as Generated).bind(original);
}

/** protobufjs's own Type.generateConstructor, as it was before lazyCodegen replaced it (for tests). */
export let protobufGenerateConstructor: ((type: protobufLight.Type) => () => unknown) | undefined;

/**
 * A message type's constructor without `new Function`: what protobufjs's generateConstructor
 * writes per type (every map field a new {}, every repeated one a new [], in field order, then
 * the properties given, but for null, undefined and __proto__), as one closure for all types.
 * protobufjs makes it when it resolves a field (Field.resolve sets the default on the
 * constructor's prototype), so every type added to a root cost one code generation: 192 ms of
 * machined's boot profile, in Codegen under Type.resolveAll.
 */
function closureConstructor(type: protobufLight.Type): () => unknown {
  const fresh: Array<[string, boolean]> = [];
  for (const f of type.fieldsArray) if (f.map || f.repeated) fresh.push([f.name, f.map]);
  return () => {
    const ctor = function (this: Record<string, unknown>, p?: Record<string, unknown>): void {
      for (const [name, map] of fresh) this[name] = map ? {} : [];
      if (p) for (const k of Object.keys(p)) if (p[k] != null && k !== '__proto__') this[k] = p[k];
    };
    Object.defineProperty(ctor, 'name', { value: type.name });
    return ctor;
  };
}

/**
 * Makes every protobufjs Type generate each of its functions on first use; once per process.
 * A type `codecs` has (by full name) takes its functions from there instead of generating them:
 * the same code, written at build time from the same descriptor.
 */
export function lazyCodegen(pb: Protobuf, codecs: BuildTimeCodecs = {}): void {
  const proto = pb.Type.prototype as unknown as Record<string, unknown> & { __bronzeLazyCodegen?: true };
  if (proto.__bronzeLazyCodegen) return;
  Object.defineProperty(proto, '__bronzeLazyCodegen', { value: true });
  const TypeStatics = pb.Type as unknown as { generateConstructor: (type: protobufLight.Type) => () => unknown };
  protobufGenerateConstructor = TypeStatics.generateConstructor;
  TypeStatics.generateConstructor = closureConstructor;
  for (const name of GENERATED) {
    proto[name] = function lazyGenerated(this: protobufLight.Type, ...args: unknown[]): unknown {
      const fn = generate(pb, this, name, codecs);
      (this as unknown as Record<string, unknown>)[name] = fn;
      return fn.apply(this, args);
    };
  }
  // An explicit setup() still makes all five, as protobufjs's does.
  proto.setup = function setup(this: protobufLight.Type): protobufLight.Type {
    for (const name of GENERATED) (this as unknown as Record<string, unknown>)[name] = generate(pb, this, name, codecs);
    return this;
  };
}
