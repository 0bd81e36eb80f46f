// The shape of a reply as far as apid's stamping goes (see envelope.ts), worked out from a
// resolved protobufjs type. Pure and free of the compiled descriptor: the build
// (image-builder/protos.ts) runs it to make the table envelope.ts reads at run time.
import protobuf from 'protobufjs/light.js';

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

