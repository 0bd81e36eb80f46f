import { defineConfig, type Plugin } from 'vitest/config';
import { protosModuleOnce } from './image-builder/protos.ts';
import { PROTO_DESCRIPTOR_MODULE } from './src/contract/proto-files.ts';

// The protos, compiled into one descriptor as the bundler does (image-builder/bundle.ts).
const PROTOS_ID = '\0' + PROTO_DESCRIPTOR_MODULE;
const compiledProtos: Plugin = {
  name: 'bronze-protos',
  resolveId: (id) => (id === PROTO_DESCRIPTOR_MODULE ? PROTOS_ID : undefined),
  load: (id) => (id === PROTOS_ID ? protosModuleOnce() : undefined),
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
