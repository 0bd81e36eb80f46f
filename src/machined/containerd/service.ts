// containerd as a supervised service, as Talos runs its system containerd: Debian's binary,
// as root (it must: it mounts, makes namespaces and cgroups for containers), serving on
// /system/run/containerd/containerd.sock, its data on EPHEMERAL (/var/lib/containerd) and its
// state on tmpfs. machined writes its config.toml (config.ts) before every start.
//
// Off the API's critical path: it depends on nothing and starts with the supervisor (after the
// volumes are mounted, so /var is EPHEMERAL's). No start nice value: its process goes into
// /system/runtime (cgroups.ts, Talos's, with OOM score -999), alone in its group, where a nice
// value weighs against nobody; the groups share the CPU by their cpu.weight
// (docs/decisions/0029-start-priority-in-cgroups.md). Health: containerd's grpc.health.v1
// service over the socket (what Talos checks), every 5 s.
import fs from 'node:fs';
import path from 'node:path';
import { healthChecker } from '../../daemon/health-client.ts';
import type { ServiceSpec } from '../supervisor/types.ts';
import { containerdConfigToml, type ContainerdConfig } from './config.ts';

export interface ContainerdPaths extends ContainerdConfig {
  /** The containerd executable. */
  bin: string;
  /** Where its config.toml is written. */
  configPath: string;
}

/** A node's: the rootfs's binary, data on EPHEMERAL, state and socket under /system/run (tmpfs). */
export const NODE_CONTAINERD: Readonly<ContainerdPaths> = {
  bin: '/usr/bin/containerd',
  root: '/var/lib/containerd',
  state: '/system/run/containerd',
  address: '/system/run/containerd/containerd.sock',
  configPath: '/system/etc/containerd/config.toml',
};

/**
 * A host run's (tests, BRONZE_SERVICES naming containerd): everything under the run directory,
 * never the host's own /var/lib/containerd or /run/containerd; the host's binary.
 */
export function hostContainerd(runDir: string, bin = '/usr/bin/containerd'): ContainerdPaths {
  const state = path.join(runDir, 'containerd');
  return { bin, root: path.join(runDir, 'containerd-root'), state, address: path.join(state, 'containerd.sock'), configPath: path.join(runDir, 'containerd-config.toml') };
}

/** Writes config.toml (and its directory) for `p`; the directories of root and state are containerd's to make. */
export function writeContainerdConfig(p: ContainerdPaths): void {
  fs.mkdirSync(path.dirname(p.configPath), { recursive: true, mode: 0o755 });
  const tmp = `${p.configPath}.tmp`;
  fs.writeFileSync(tmp, containerdConfigToml(p), { mode: 0o644 });
  fs.renameSync(tmp, p.configPath);
}

/**
 * `env`: what every service starts from (machined's, plus machine.env through the env
 * controller): its PATH (preinit's: /sbin:/usr/sbin:/bin:/usr/bin) is where containerd finds
 * its shim and the shim finds runc.
 */
export function containerdSpec(p: ContainerdPaths, env: Record<string, string>): ServiceSpec {
  const health = healthChecker(p.address, 2000);
  return {
    id: 'containerd',
    dependsOn: [],
    command: p.bin,
    args: ['--config', p.configPath],
    env,
    beforeStart: () => writeContainerdConfig(p),
    healthCheck: health.check,
    healthInterval: 5000,
    // containerd stops its gRPC server and exits; the shims (and so the containers) outlive it,
    // as they outlive a restart: they are machined's to stop (NodeWorkloads.stopAll, before this
    // stop at shutdown), not its.
    stopTimeout: 10_000,
    restart: 'always',
  };
}
