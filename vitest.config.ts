import { defineConfig, type Plugin } from 'vitest/config';
import { BUILD_DATA } from './image-builder/build-data.ts';

// The modules made at build time (image-builder/build-data.ts: the compiled protos, containerd's
// protos, the seccomp profile), served as the bundler serves them (image-builder/bundle.ts).
const buildData: Plugin = {
  name: 'bronze-build-data',
  resolveId: (id) => (id in BUILD_DATA ? '\0' + id : undefined),
  load: (id) => (id.startsWith('\0') && id.slice(1) in BUILD_DATA ? BUILD_DATA[id.slice(1)]!() : undefined),
};

// Two projects: unit and integration tests (fast, real processes and sockets), and the
// end-to-end tests that boot the real image under QEMU (run by `make test` after the image
// is built, one file at a time).
export default defineConfig({
  plugins: [buildData],
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
