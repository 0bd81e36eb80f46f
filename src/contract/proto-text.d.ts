// .proto files are imported as their text: esbuild's `text` loader in the bundle, and a tiny
// transform in vitest.config.ts under test. The binary then needs no files on disk.
declare module '*.proto' {
  const text: string;
  export default text;
}
