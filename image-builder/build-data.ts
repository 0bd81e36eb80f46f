// The modules made at build time, by id, as the bundler (image-builder/bundle.ts) and vitest
// (vitest.config.ts) both serve them: Bronze's own protos compiled into one descriptor
// (image-builder/protos.ts), and the data from Debian's packages in the bundles of the roles that
// import it: containerd's API protos (image-builder/containerd-protos.ts) and the default seccomp
// profile (image-builder/seccomp-profile.ts). Each is made once, on first use.
import { PROTO_DESCRIPTOR_MODULE } from '../src/contract/proto-files.ts';
import { CONTAINERD_PROTOS_MODULE, containerdProtosModuleOnce } from './containerd-protos.ts';
import { protosModuleOnce } from './protos.ts';
import { SECCOMP_PROFILE_MODULE, seccompProfileModuleOnce } from './seccomp-profile.ts';

/** Each build-time module's id and the source of its text. */
export const BUILD_DATA: Readonly<Record<string, () => string>> = {
  [PROTO_DESCRIPTOR_MODULE]: protosModuleOnce,
  [CONTAINERD_PROTOS_MODULE]: containerdProtosModuleOnce,
  [SECCOMP_PROFILE_MODULE]: seccompProfileModuleOnce,
};

/** A regular expression matching exactly the ids of BUILD_DATA. */
export const BUILD_DATA_FILTER = new RegExp(`^(?:${Object.keys(BUILD_DATA).map((id) => id.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$`);
