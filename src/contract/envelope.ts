// Which replies carry a node's metadata, read from the proto descriptors (not a hand list), so
// that apid stamps exactly the messages that have room for it:
//   'envelope'  a unary reply `repeated <Item> messages = 1` whose Item has
//               `common.Metadata metadata = 1` (Talos's envelope: VersionResponse, ...);
//   'stamped'   a streamed message with `common.Metadata metadata = 1` (common.Data, FileInfo,
//               Event, Progress, ...);
//   'plain'     anything else, e.g. COSI State's replies: apid passes them through untouched
//               and never fans them out (there is nowhere to say which node answered).
import protobuf from 'protobufjs/light.js';
import { protoRoot } from './protos.ts';

export type ReplyShape = 'envelope' | 'stamped' | 'plain';

const METADATA = '.common.Metadata';

/** True when `type` has `common.Metadata metadata = 1` (singular). */
function hasMetadataField(type: protobuf.Type): boolean {
  const f = type.fieldsById[1];
  if (!f || f.repeated || f.map) return false;
  f.resolve();
  return f.resolvedType instanceof protobuf.Type && f.resolvedType.fullName === METADATA;
}

/** The shape of one response type, for a unary or a streaming method. */
export function shapeOf(response: protobuf.Type, streaming: boolean): ReplyShape {
  if (streaming) return hasMetadataField(response) ? 'stamped' : 'plain';
  const f = response.fieldsById[1];
  if (!f || !f.repeated || f.map) return 'plain';
  f.resolve();
  return f.resolvedType instanceof protobuf.Type && hasMetadataField(f.resolvedType) ? 'envelope' : 'plain';
}

const cache = new Map<string, ReplyShape>();

/** The reply shape of a method by its full path (`/machine.MachineService/Version`). */
export function replyShape(methodPath: string): ReplyShape {
  let shape = cache.get(methodPath);
  if (shape) return shape;
  const [, service, method] = methodPath.split('/');
  let m: protobuf.Method | undefined;
  try {
    m = protoRoot().lookupService(service!).methods[method!];
  } catch {
    m = undefined;
  }
  if (!m) throw new Error(`unknown method ${methodPath}`);
  m.resolve();
  shape = shapeOf(m.resolvedResponseType!, !!m.responseStream);
  cache.set(methodPath, shape);
  return shape;
}
