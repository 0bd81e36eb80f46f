import { defineConfig, type Plugin } from 'vitest/config';
import { protosModuleOnce } from './image-builder/protos.ts';
import { PROTO_DESCRIPTOR_MODULE } from './src/contract/proto-files.ts';
import { CONTAINERD_PROTOS_MODULE, containerdProtosModuleOnce } from './image-builder/containerd-protos.ts';
import { SECCOMP_PROFILE_MODULE, seccompProfileModuleOnce } from './image-builder/seccomp-profile.ts';

// The protos, compiled into one descriptor as the bundler does (image-builder/bundle.ts).
const PROTOS_ID = '\0' + PROTO_DESCRIPTOR_MODULE;
const compiledProtos: Plugin = {
  name: 'bronze-protos',
  resolveId: (id) => (id === PROTO_DESCRIPTOR_MODULE ? PROTOS_ID : undefined),
  load: (id) => (id === PROTOS_ID ? protosModuleOnce() : undefined),
};
// Build-time data from Debian's packages, as the bundler serves it (image-builder/bundle.ts):
// containerd's API protos and the default seccomp profile.
const BUILD_DATA: Record<string, () => string> = { [CONTAINERD_PROTOS_MODULE]: containerdProtosModuleOnce, [SECCOMP_PROFILE_MODULE]: seccompProfileModuleOnce };
const buildData: Plugin = {
  name: 'bronze-build-data',
  resolveId: (id) => (id in BUILD_DATA ? '\0' + id : undefined),
  load: (id) => (id.startsWith('\0') && id.slice(1) in BUILD_DATA ? BUILD_DATA[id.slice(1)]!() : undefined),
};

// Two projects: unit and integration tests (fast, real processes and sockets), and the
// end-to-end tests that boot the real image under QEMU (run by `make test` after the image
// is built, one file at a time).
export default defineConfig({
  plugins: [compiledProtos, buildData],
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
