// The protos compiled at build time (image-builder/protos.ts): a protobufjs JSON descriptor,
// served as this module by the bundler (image-builder/bundle.ts) and by vitest.config.ts.
declare module 'bronze:protos' {
  const descriptor: Record<string, unknown>;
  export default descriptor;
}
