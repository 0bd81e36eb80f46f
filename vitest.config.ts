import { defineConfig, type Plugin } from 'vitest/config';
import { COMPILED_MODULES, compiledModuleSource } from './image-builder/protos.ts';

// The protos, compiled into one descriptor and the message codecs, as the bundler does (image-builder/bundle.ts).
const compiledProtos: Plugin = {
  name: 'bronze-protos',
  resolveId: (id) => (COMPILED_MODULES.includes(id) ? '\0' + id : undefined),
  load: (id) => (id.startsWith('\0') && COMPILED_MODULES.includes(id.slice(1)) ? compiledModuleSource(id.slice(1)) : undefined),
};

// Two projects: unit and integration tests (fast, real processes and sockets), and the
// end-to-end tests that boot the real image under QEMU (run by `make test` after the image
// is built, one file at a time).
export default defineConfig({
  plugins: [compiledProtos],
  test: {
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'image-builder/**/*.test.ts'],
          testTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          testTimeout: 900_000,
          hookTimeout: 900_000,
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
        },
      },
    ],
  },
});
