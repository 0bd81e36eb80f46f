// Which replies carry a node's metadata, read from the proto descriptors (not a hand list), so
// that apid stamps exactly the messages that have room for it:
//   'envelope'  a unary reply `repeated <Item> messages = 1` whose Item has
//               `common.Metadata metadata = 1` (Talos's envelope: VersionResponse, ...);
//   'stamped'   a streamed message with `common.Metadata metadata = 1` (common.Data, FileInfo,
//               Event, Progress, ...);
//   'plain'     anything else, e.g. COSI State's replies: apid passes them through untouched
//               and never fans them out (there is nowhere to say which node answered).
import { methodInfo } from './protos.ts';
import { shapeOf, type ReplyShape } from './reply-shape.ts';

export { shapeOf, type ReplyShape };

/** The reply shape of a method by its full path (`/machine.MachineService/Version`), from the table made at build time. */
export function replyShape(methodPath: string): ReplyShape {
  const info = methodInfo(methodPath);
  if (!info) throw new Error(`unknown method ${methodPath}`);
  return info.reply;
}
