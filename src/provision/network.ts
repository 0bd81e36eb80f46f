// A cluster's private network: a network namespace of its own with a bridge, and each node's
// tap device on that bridge. Nothing of it is in the host's namespace, so the cluster's
// addresses (10.5.0.0/24 by default, as talosctl's) cannot meet the host's networks.
//
// QEMU opens a node's tap by name in the namespace QEMU runs in (the host's: its user network,
// which forwards the node's API to 127.0.0.1, must be there). So QEMU makes the tap in the
// host's namespace and this moves it into the cluster's at once; the open device goes on
// working there, and it vanishes when QEMU exits. Deleting the namespace removes the bridge.
//
// The links are made with iproute2's `ip` (Debian's iproute2, which scripts/deps.sh installs),
// the tool an operator would use, rather than with netlink by hand: these are a few one-shot
// calls on the operator's host, not a daemon's steady work.
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The bridge inside every cluster's namespace. */
export const BRIDGE = 'br0';

async function ip(args: string[]): Promise<void> {
  try {
    await run('ip', args, { timeout: 10_000 });
  } catch (e) {
    const err = e as NodeJS.ErrnoException & { stderr?: string };
    if (err.code === 'ENOENT') throw new Error('`ip` (iproute2) is not installed: apt-get install iproute2');
    throw new Error(`ip ${args.join(' ')}: ${(err.stderr ?? err.message).trim()}`);
  }
}

export function namespaceExists(ns: string): boolean {
  return fs.existsSync(`/run/netns/${ns}`);
}

/** The namespace `ns` with the bridge up and holding `gatewayCidr` (e.g. 10.5.0.1/24). */
export async function createNetwork(ns: string, gatewayCidr: string): Promise<void> {
  if (namespaceExists(ns)) throw new Error(`network namespace ${ns} exists already`);
  await ip(['netns', 'add', ns]);
  try {
    await ip(['-n', ns, 'link', 'set', 'lo', 'up']);
    await ip(['-n', ns, 'link', 'add', BRIDGE, 'type', 'bridge']);
    await ip(['-n', ns, 'addr', 'add', gatewayCidr, 'dev', BRIDGE]);
    await ip(['-n', ns, 'link', 'set', BRIDGE, 'up']);
  } catch (e) {
    await destroyNetwork(ns);
    throw e;
  }
}

/** Waits for QEMU to make `tap` in the host's namespace, then puts it on the cluster's bridge. */
export async function attachTap(tap: string, ns: string, exited: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!fs.existsSync(`/sys/class/net/${tap}`)) {
    if (exited()) throw new Error(`QEMU exited before it made its network device ${tap}`);
    if (Date.now() > deadline) throw new Error(`QEMU made no network device ${tap} in ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await ip(['link', 'set', tap, 'netns', ns]);
  await ip(['-n', ns, 'link', 'set', tap, 'master', BRIDGE, 'up']);
}

/** Removes the namespace and with it the bridge (a missing namespace is no error). */
export async function destroyNetwork(ns: string): Promise<void> {
  if (namespaceExists(ns)) await ip(['netns', 'del', ns]);
}
