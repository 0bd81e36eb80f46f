// The protos compiled at build time (image-builder/protos.ts): a protobufjs JSON descriptor, one
// text per top-level message, enum and service, served as this module by the bundler
// (image-builder/bundle.ts) and by vitest.config.ts.
declare module 'bronze:protos' {
  /** A top-level message, enum or service (`machine.VersionResponse`) → its protobufjs JSON descriptor, as text. */
  export const unitText: Record<string, string>;
  /** `pkg.Service/Method` → the top-level messages and enums it needs (image-builder/protos.ts). */
  export const methodUnits: Record<string, string[]>;
  /** A top-level message or enum → the others its fields name directly (image-builder/protos.ts). */
  export const unitDeps: Record<string, string[]>;
  /** `/pkg.Service/Method` → its streaming and reply shape, in proto order (image-builder/protos.ts). */
  export const methodInfo: Record<string, { requestStream: boolean; responseStream: boolean; reply: 'envelope' | 'stamped' | 'plain' }>;
  /**
   * A message (`cosi.resource.Metadata`) → a factory of its five protobufjs functions, written at
   * build time for the messages every boot exchanges (image-builder/protos.ts codecsModuleSource).
   */
  export const codecs: Record<string, (Writer: unknown, Reader: unknown, types: unknown[], util: unknown) => Record<'encode' | 'decode' | 'verify' | 'fromObject' | 'toObject', (...args: unknown[]) => unknown>>;
}
