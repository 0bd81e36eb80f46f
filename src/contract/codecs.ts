// Message codecs compiled at build time (image-builder/protos.ts `codecsModuleSource`, served
// as the module `bronze:protos-codecs`), installed into protobufjs in place of its run-time
// codegen. protobufjs makes a message type's constructor, encode, decode, fromObject and
// toObject the first time the type is used, by building their source as strings and compiling
// it with `Function()`; under QEMU/TCG that was 1.3-1.7 s of machined's start. The prebuilt
// functions are the same source, made by the same protobufjs from the same descriptor, so only
// where and when they are compiled changes. A type that is not in the table, or whose fields
// differ from the ones the table was made from, gets protobufjs's own codegen as before.
//
// protobufjs has no hook for this, so Type's `setup` and `generateConstructor` are replaced (setup
// takes the same steps as protobufjs 7's own, with the factories swapped in): a process opts in by calling
// useCompiledCodecs with the table, before its first message is encoded.
import protobuf from 'protobufjs/light.js';
import { fieldSignature } from './field-signature.ts';

type Factory = (...scope: unknown[]) => (...args: unknown[]) => unknown;
/** `full.Name` → [field signature, constructor, encode, decode, fromObject, toObject] factories. */
export type CodecTable = Record<string, [string, Factory, Factory, Factory, Factory, Factory]>;

interface TypeInternals {
  _ctor: unknown;
  _fieldsArray: protobuf.Field[];
  encode: unknown;
  decode: unknown;
  verify: unknown;
  fromObject: unknown;
  toObject: unknown;
}

let installed: CodecTable | undefined;
/** How many types got prebuilt codecs and how many protobufjs's codegen (tests, profiles). */
export const codecStats = { prebuilt: 0, generated: 0, generatedNames: [] as string[] };

function entryFor(type: protobuf.Type): CodecTable[string] | undefined {
  const entry = installed && Object.hasOwn(installed, type.fullName.slice(1)) ? installed[type.fullName.slice(1)] : undefined;
  return entry && entry[0] === fieldSignature(type) ? entry : undefined;
}

/** Makes protobufjs use `table`'s functions for the types it holds, from now on, in this process. */
export function useCompiledCodecs(table: CodecTable): void {
  const first = installed === undefined;
  installed = table;
  if (!first) return;
  const proto = protobuf.Type.prototype as unknown as Record<string, unknown>;
  const originalSetup = proto.setup as (this: protobuf.Type) => protobuf.Type;
  // Type's `ctor` getter makes the constructor through Type.generateConstructor(type)().
  const generateConstructor = protobuf.Type.generateConstructor;
  protobuf.Type.generateConstructor = function prebuiltConstructor(type: protobuf.Type) {
    const entry = entryFor(type);
    return entry ? (((() => entry[1]()) as unknown) as ReturnType<typeof generateConstructor>) : generateConstructor(type);
  };

  proto.setup = function setup(this: protobuf.Type): protobuf.Type {
    const entry = entryFor(this);
    if (!entry) {
      codecStats.generated++;
      if (codecStats.generatedNames.length < 20) codecStats.generatedNames.push(this.fullName);
      return originalSetup.call(this);
    }
    codecStats.prebuilt++;
    const t = this as unknown as TypeInternals;
    const types: unknown[] = [];
    for (let i = 0; i < this.fieldsArray.length; ++i) types.push(t._fieldsArray[i]!.resolve().resolvedType);
    const util = protobuf.util;
    t.encode = entry[2](protobuf.Writer, types, util);
    t.decode = entry[3](protobuf.Reader, types, util);
    // Bronze never verifies; made on first use, as protobufjs would have made it.
    const type = this;
    t.verify = function verify(message: unknown) {
      const fn = protobuf.verifier(type)({ types, util }) as (m: unknown) => unknown;
      t.verify = fn;
      return fn(message);
    };
    t.fromObject = entry[4](types, util);
    t.toObject = entry[5](types, util);
    // protobufjs's wrappers for well-known types (google.protobuf.Any), as its setup has them.
    const wrapper = (protobuf.wrappers as Record<string, { fromObject: (...a: unknown[]) => unknown; toObject: (...a: unknown[]) => unknown }>)[this.fullName];
    if (wrapper) {
      const originalThis = Object.create(this) as TypeInternals;
      originalThis.fromObject = t.fromObject;
      t.fromObject = wrapper.fromObject.bind(originalThis);
      originalThis.toObject = t.toObject;
      t.toObject = wrapper.toObject.bind(originalThis);
    }
    return this;
  };
}
