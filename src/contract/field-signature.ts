// What protobufjs's generated code for a message type depends on, per field: its id, name,
// type, rule and map key type. The build writes it beside each type's prebuilt codecs
// (image-builder/protos.ts); src/contract/codecs.ts compares it before it uses them.
interface FieldLike {
  id: number;
  name: string;
  type: string;
  rule?: string;
  map?: boolean;
  keyType?: string;
}

export function fieldSignature(type: { fieldsArray: readonly FieldLike[] }): string {
  return type.fieldsArray.map((f) => `${f.id}:${f.name}:${f.type}:${f.rule ?? ''}:${f.map ? (f.keyType ?? '') : ''}`).join(',');
}
