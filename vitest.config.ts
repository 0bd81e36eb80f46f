import { defineConfig, type Plugin } from 'vitest/config';

// .proto files are imported as text (esbuild's `text` loader does the same in the bundle).
const protoText: Plugin = {
  name: 'proto-text',
  transform(code, id) {
    if (id.endsWith('.proto')) return { code: `export default ${JSON.stringify(code)};`, map: null };
    return undefined;
  },
};

// Two projects: unit and integration tests (fast, real processes and sockets), and the
// end-to-end tests that boot the real image under QEMU (run by `make test` after the image
// is built, one file at a time).
export default defineConfig({
  plugins: [protoText],
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
