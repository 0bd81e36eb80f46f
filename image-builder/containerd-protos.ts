// Compiles containerd 1.6's own API protos (as Debian ships them with the daemon's version, in
// golang-github-containerd-containerd-dev) and the cgroup v2 metrics proto (golang-github-
// containerd-cgroups-dev) into one protobufjs JSON descriptor at build time. The bundler
// (image-builder/bundle.ts) and vitest (vitest.config.ts) serve it as the module
// `bronze:containerd-protos`, separate from `bronze:protos`: only code that talks to containerd
// (src/containerd/client.ts, by dynamic import) loads it, never every daemon at every boot.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';

/** Where Debian installs Go sources (and with them the .proto files). */
export const GOCODE = '/usr/share/gocode/src';

/** The module id the bundler and vitest serve the descriptor under. */
export const CONTAINERD_PROTOS_MODULE = 'bronze:containerd-protos';

/** The files Bronze uses, by import path under GOCODE, in dependency order. */
export const CONTAINERD_PROTO_FILES: readonly string[] = [
  'github.com/containerd/containerd/api/types/descriptor.proto',
  'github.com/containerd/containerd/api/types/mount.proto',
  'github.com/containerd/containerd/api/types/platform.proto',
  'github.com/containerd/containerd/api/types/metrics.proto',
  'github.com/containerd/containerd/api/types/task/task.proto',
  'github.com/containerd/containerd/api/services/containers/v1/containers.proto',
  'github.com/containerd/containerd/api/services/content/v1/content.proto',
  'github.com/containerd/containerd/api/services/diff/v1/diff.proto',
  'github.com/containerd/containerd/api/services/events/v1/events.proto',
  'github.com/containerd/containerd/api/services/images/v1/images.proto',
  'github.com/containerd/containerd/api/services/leases/v1/leases.proto',
  'github.com/containerd/containerd/api/services/namespaces/v1/namespace.proto',
  'github.com/containerd/containerd/api/services/snapshots/v1/snapshots.proto',
  'github.com/containerd/containerd/api/services/tasks/v1/tasks.proto',
  'github.com/containerd/containerd/api/services/version/v1/version.proto',
  'github.com/containerd/containerd/api/events/task.proto',
  'github.com/containerd/containerd/api/events/container.proto',
  'github.com/containerd/containerd/api/events/image.proto',
  'github.com/containerd/containerd/runtime/v2/runc/options/oci.proto',
  'github.com/containerd/cgroups/v2/stats/metrics.proto',
  // A task's metrics on a host with cgroup v1 (the test hosts); nodes run cgroup v2.
  'github.com/containerd/cgroups/stats/v1/metrics.proto',
];

/** google.protobuf types they import, from protobufjs's built-in copies. */
const WELL_KNOWN = ['google/protobuf/any.proto', 'google/protobuf/empty.proto', 'google/protobuf/timestamp.proto', 'google/protobuf/duration.proto', 'google/protobuf/field_mask.proto'];

/** google/rpc/status.proto: Bronze keeps a copy under protos/ (protobufjs has none built in). */
const RPC_STATUS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'protos', 'google', 'rpc', 'status.proto');

/**
 * The resolved descriptor. Imports are not followed: the files are parsed in order into one root,
 * and the weak imports (gogoproto, containerd's fieldpath plugin) only carry options protobufjs
 * keeps as opaque option values, so they need no definitions.
 */
export function compileContainerdProtos(gocode = GOCODE): protobuf.INamespace {
  const root = new protobuf.Root();
  for (const name of WELL_KNOWN) {
    const json = protobuf.common.get(name);
    if (!json) throw new Error(`protobufjs has no well-known type ${name}`);
    root.addJSON(json.nested as Record<string, protobuf.AnyNestedObject>);
  }
  protobuf.parse(fs.readFileSync(RPC_STATUS, 'utf8'), root, { keepCase: true });
  for (const file of CONTAINERD_PROTO_FILES) {
    const full = path.join(gocode, file);
    let text: string;
    try {
      text = fs.readFileSync(full, 'utf8');
    } catch {
      throw new Error(`${full} is missing: install golang-github-containerd-containerd-dev and golang-github-containerd-cgroups-dev`);
    }
    try {
      protobuf.parse(text, root, { keepCase: true });
    } catch (err) {
      throw new Error(`${file}: ${(err as Error).message}`);
    }
  }
  root.resolveAll();
  return root.toJSON({ keepComments: false });
}

/** The descriptor as an ES module: `descriptor`, the JSON text (parsed only by whoever loads it). */
export function containerdProtosModuleSource(gocode = GOCODE): string {
  return `export const descriptor = ${JSON.stringify(JSON.stringify(compileContainerdProtos(gocode)))};\n`;
}

let cached: string | undefined;
/** containerdProtosModuleSource, made once per process (the bundler asks once per role). */
export function containerdProtosModuleOnce(): string {
  return (cached ??= containerdProtosModuleSource());
}
