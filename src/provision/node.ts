// One cluster node's VM: QEMU started in the background (it outlives `cluster create`), its
// console in a log file, its API forwarded from a host port on 127.0.0.1 by QEMU's user network,
// and a second card on the cluster's bridge (a tap, moved into the cluster's namespace). Stopped
// by its process id, after checking that the process is still that node's QEMU.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import { attachTap } from './network.ts';
import { qemuCommand, type QemuArch } from './qemu.ts';
import type { NodeState } from './state.ts';

export interface NodeImage {
  arch: QemuArch;
  vmlinuz: string;
  initrd: string;
  /** The directory with the image's cmdline and roothash (vmlinuz's). */
  imageDir: string;
}

/** The QEMU command line of a node (pure). */
export function nodeCommand(node: NodeState, image: NodeImage, monitor: string): { bin: string; args: string[] } {
  const c = qemuCommand({
    arch: image.arch,
    kernel: image.vmlinuz,
    initrd: image.initrd,
    imageDir: image.imageDir,
    apiPort: node.apiPort,
    memoryMiB: node.memoryMiB,
    cpus: node.cpus,
    monitorSocket: monitor,
    uuid: randomUUID(),
    extraArgs: ['-netdev', `tap,id=cluster,ifname=${node.tap},script=no,downscript=no`, '-device', `virtio-net-pci,netdev=cluster,mac=${node.mac}`],
  });
  return { bin: c.bin, args: c.args };
}

/** Starts the node's QEMU in the background and puts its tap on the cluster's bridge; returns its pid. */
export async function startNode(node: NodeState, image: NodeImage, files: { log: string; monitor: string }, namespace: string): Promise<number> {
  const { bin, args } = nodeCommand(node, image, files.monitor);
  fs.rmSync(files.monitor, { force: true });
  const log = fs.openSync(files.log, 'a');
  let exited = false;
  let spawnError: Error | undefined;
  try {
    const p = spawn(bin, args, { detached: true, stdio: ['ignore', log, log] });
    p.on('error', (e) => {
      spawnError = e;
      exited = true;
    });
    p.on('exit', () => (exited = true));
    p.unref();
    try {
      await attachTap(node.tap, namespace, () => exited);
    } catch (e) {
      if (spawnError) throw new Error(`${node.name}: ${bin}: ${spawnError.message}`);
      const tail = fs.readFileSync(files.log, 'utf8').trim().split('\n').slice(-3).join(' | ');
      if (p.pid && !exited) process.kill(p.pid, 'SIGKILL');
      throw new Error(`${node.name}: ${(e as Error).message}${tail ? ` (QEMU said: ${tail})` : ''}`);
    }
    if (!p.pid) throw new Error(`${node.name}: QEMU did not start`);
    return p.pid;
  } finally {
    fs.closeSync(log);
  }
}

/** Whether `pid` is still the QEMU of the node whose monitor socket is `monitor`. */
export function isNodeProcess(pid: number | undefined, monitor: string): boolean {
  if (!pid) return false;
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').some((a) => a.includes(monitor));
  } catch {
    return false;
  }
}

/** Stops the node's QEMU: SIGTERM, then SIGKILL if it is still there after `graceMs`. */
export async function stopNode(pid: number | undefined, monitor: string, graceMs = 10_000): Promise<void> {
  if (!isNodeProcess(pid, monitor)) return;
  process.kill(pid!, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (isNodeProcess(pid, monitor)) {
    if (Date.now() > deadline) {
      process.kill(pid!, 'SIGKILL');
      while (isNodeProcess(pid, monitor)) await new Promise((r) => setTimeout(r, 50));
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}
