// Protobuf wire-level edits apid makes to replies it relays without decoding them. Every
// Talos-style reply is `repeated <Item> messages = 1` whose items carry `common.Metadata
// metadata = 1`, and every streamed message carries the same metadata as its field 1. On the
// wire, a repeated embedded message field that occurs twice is merged, and concatenated
// encodings of one message are that message with both sets of fields: so apid stamps a reply
// by appending an encoded metadata field to each item, and merges replies from several nodes
// by concatenating them. Written by hand because no library edits protobuf at the wire level
// without the schema; protobufjs's Reader/Writer do the varint work.
import protobuf from 'protobufjs';

export interface NodeMetadata {
  hostname: string;
  error?: string;
  /** gRPC status code of a failed node. */
  code?: number;
}

/** common.Metadata{hostname=1, error=2, status=3 google.rpc.Status{code=1, message=2}}. */
export function encodeMetadata(md: NodeMetadata): Uint8Array {
  const w = protobuf.Writer.create();
  if (md.hostname) w.uint32((1 << 3) | 2).string(md.hostname);
  if (md.error) {
    w.uint32((2 << 3) | 2).string(md.error);
    const s = protobuf.Writer.create();
    if (md.code) s.uint32((1 << 3) | 0).int32(md.code);
    s.uint32((2 << 3) | 2).string(md.error);
    w.uint32((3 << 3) | 2).bytes(s.finish());
  }
  return w.finish();
}

/** The bytes of field 1 (length-delimited) holding `md`: appended to a message, it sets its metadata. */
export function metadataField(md: NodeMetadata): Uint8Array {
  return protobuf.Writer.create().uint32((1 << 3) | 2).bytes(encodeMetadata(md)).finish();
}

/** A streamed message (e.g. common.Data) stamped with the node's metadata. */
export function stampMessage(msg: Uint8Array, md: NodeMetadata): Buffer {
  return Buffer.concat([msg, metadataField(md)]);
}

/**
 * An envelope reply (`repeated Item messages = 1`) with every item stamped. Fields other
 * than 1 at the top level are kept as they are. Throws on malformed input.
 */
export function stampEnvelope(reply: Uint8Array, md: NodeMetadata): Buffer {
  const r = protobuf.Reader.create(reply);
  const stamp = metadataField(md);
  const parts: Uint8Array[] = [];
  while (r.pos < r.len) {
    const start = r.pos;
    const tag = r.uint32();
    const wire = tag & 7;
    if (tag >>> 3 === 1 && wire === 2) {
      const item = r.bytes();
      parts.push(protobuf.Writer.create().uint32(tag).bytes(Buffer.concat([item, stamp])).finish());
    } else {
      r.skipType(wire);
      parts.push(reply.subarray(start, r.pos)); // any other field, verbatim
    }
  }
  return Buffer.concat(parts);
}

/** The envelope item a failed node contributes: only metadata, with the error. */
export function errorEnvelope(md: NodeMetadata): Buffer {
  return Buffer.from(protobuf.Writer.create().uint32((1 << 3) | 2).bytes(metadataField(md)).finish());
}

/** A streamed message that only reports a node's error (the stream's other nodes go on). */
export function errorMessage(md: NodeMetadata): Buffer {
  return Buffer.from(metadataField(md));
}
