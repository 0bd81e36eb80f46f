// What every role bundle exports (image-builder/bundle.ts makes one per role, each from a
// two-line module that imports the role's main and this): load the native module, then run.
import { initNative } from './lib/native.ts';

export function roleEntry(main: () => Promise<void>): { start(): Promise<void> } {
  return {
    async start() {
      await initNative();
      await main();
    },
  };
}
