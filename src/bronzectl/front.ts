// What starts first, in the single executable (image-builder/bronzectl.sh) and in
// bin/bronzectl.mjs: the command tree and nothing else (program.ts). It runs help, usage errors,
// `version --client` and `completion` itself, which is all a quick start needs; any other
// command goes, before its action starts and with nothing written, to the full CLI (main.ts),
// which runs the same command line from the start. The full CLI is the SEA asset
// `bronzectl.cjs`, compiled with its V8 code cache `bronzectl.cache` made at build time (as the
// node's binary loads its roles: src/lib/role-source.ts), or else the file bronzectl.cjs beside
// this bundle.
import { loadBundle, optimizeFromNow } from '../lib/role-source.ts';
import { exitWhenWritten } from './exit.ts';
import { HAND_OFF, runProgram } from './program.ts';

/** The full CLI's asset (and code cache asset) in the single executable; its file elsewhere. */
const FULL = 'bronzectl';

interface FullCli {
  start(): void;
}

// No top-level await: the bundle is CommonJS.
void runProgram(process.argv.slice(2), {}, { front: true }).then((code) => {
  if (code !== HAND_OFF) return exitWhenWritten(code);
  const cli = loadBundle<FullCli>(FULL, __dirname, require);
  optimizeFromNow();
  cli.start();
});
