// Compiles protos/ into one protobufjs JSON descriptor at build time, so that no process parses
// .proto text when it starts. The bundler (image-builder/bundle.ts) and vitest (vitest.config.ts)
// both serve it as the module `bronze:protos`; src/contract/protos.ts reads it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { PROTO_FILES, WELL_KNOWN_PROTOS } from '../src/contract/proto-files.ts';

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

/** The descriptor as an ES module's source: a JSON.parse of a string is V8's fastest literal. */
export function protosModuleSource(dir = PROTOS_DIR): string {
  return `export default JSON.parse(${JSON.stringify(JSON.stringify(compileProtos(dir)))});\n`;
}

/** Files whose change changes the descriptor (for build tools that watch inputs). */
export function protoInputs(dir = PROTOS_DIR): string[] {
  return PROTO_FILES.map((f) => path.join(dir, f));
}
