// Build identity, stamped by the image builder through esbuild `define`; plain runs from the
// source tree report "dev".
declare const __BRONZE_VERSION__: string | undefined;
declare const __BRONZE_SHA__: string | undefined;
declare const __BRONZE_BUILT__: string | undefined;

export const VERSION = {
  tag: typeof __BRONZE_VERSION__ === 'string' ? __BRONZE_VERSION__ : 'dev',
  sha: typeof __BRONZE_SHA__ === 'string' ? __BRONZE_SHA__ : 'unknown',
  built: typeof __BRONZE_BUILT__ === 'string' ? __BRONZE_BUILT__ : '',
};
