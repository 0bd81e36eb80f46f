// An esbuild plugin for bundle.ts (its own module, so that a test can load it).
import fs from 'node:fs';
import type * as esbuild from 'esbuild';

/**
 * long.js (protobufjs's 64-bit integers) without its WebAssembly module. At load it compiles a
 * small wasm module for 64-bit multiply and divide, and falls back to plain JavaScript when that
 * throws; under QEMU/TCG the compiled machine code is translated again, and every role that
 * loads protobufjs paid for it (protobufjs/light's bundle loading from its code cache under
 * qemu-x86_64: 15 ms of CPU without it, 46 ms with it, median of 8). Bronze only converts
 * int64 fields to and from strings, where the fallback is as good.
 */
export const LONG_MODULE = /[\\/]node_modules[\\/]long[\\/](umd[\\/])?index\.js$/;
export const LONG_WASM = 'wasm = new WebAssembly.Instance(';
export function longWithoutWasm(source: string, file: string): string {
  const at = source.indexOf(LONG_WASM);
  if (at < 0 || source.indexOf(LONG_WASM, at + 1) >= 0) throw new Error(`bundle: ${file}: expected one '${LONG_WASM}' (long.js changed: look at it again)`);
  // A throw before it, inside long's own try: the module is neither compiled nor instantiated.
  return source.replace(LONG_WASM, `throw new Error("no WebAssembly in Bronze's bundles"); ${LONG_WASM}`);
}
export const longWithoutWasmPlugin: esbuild.Plugin = {
  name: 'long-without-wasm',
  setup(build) {
    build.onLoad({ filter: LONG_MODULE }, (args) => ({ contents: longWithoutWasm(fs.readFileSync(args.path, 'utf8'), args.path), loader: 'js' }));
  },
};
