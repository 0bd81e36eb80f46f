// containerd 1.6's API protos compiled at build time (image-builder/containerd-protos.ts), served
// as this module by the bundler (image-builder/bundle.ts) and by vitest.config.ts.
declare module 'bronze:containerd-protos' {
  /** The protobufjs JSON descriptor of every containerd proto Bronze uses, as JSON text. */
  export const descriptor: string;
}
