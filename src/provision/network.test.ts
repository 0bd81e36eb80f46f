// Real namespaces and devices (root and iproute2, as `cluster create` needs): a persistent tap
// stands in for QEMU's, made in the host's namespace and moved onto the cluster's bridge.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { attachTap, createNetwork, destroyNetwork, namespaceExists } from './network.ts';

const NS = `bronze-test-${process.pid}`;
const TAP = `bzt${process.pid % 100000}`;
const ip = (...args: string[]) => execFileSync('ip', args, { encoding: 'utf8' });

afterEach(async () => {
  await destroyNetwork(NS);
  if (fs.existsSync(`/sys/class/net/${TAP}`)) ip('link', 'del', TAP);
});

describe.runIf(process.getuid?.() === 0)('the cluster network', () => {
  it('makes a namespace with the bridge up at the gateway, moves a tap onto it, and removes it all', async () => {
    await createNetwork(NS, '10.77.0.1/24');
    expect(namespaceExists(NS)).toBe(true);
    expect(ip('-n', NS, '-o', 'addr', 'show', 'dev', 'br0')).toContain('inet 10.77.0.1/24');
    ip('tuntap', 'add', 'mode', 'tap', 'name', TAP);
    await attachTap(TAP, NS, () => false);
    expect(fs.existsSync(`/sys/class/net/${TAP}`)).toBe(false); // gone from the host's namespace
    expect(ip('-n', NS, '-o', 'link', 'show', TAP)).toContain('master br0');
    await destroyNetwork(NS);
    expect(namespaceExists(NS)).toBe(false);
    await destroyNetwork(NS); // a missing namespace is no error
  });

  it('refuses a namespace that exists, and says when QEMU never made its tap', async () => {
    await createNetwork(NS, '10.77.0.1/24');
    await expect(createNetwork(NS, '10.77.0.1/24')).rejects.toThrow(`network namespace ${NS} exists already`);
    await expect(attachTap(TAP, NS, () => true)).rejects.toThrow(`QEMU exited before it made its network device ${TAP}`);
    await expect(attachTap(TAP, NS, () => false, 200)).rejects.toThrow(`QEMU made no network device ${TAP} in 0.2 s`);
  });

  it('cleans up after a bad gateway address, naming the ip command that failed', async () => {
    await expect(createNetwork(NS, '10.77.0.1/99')).rejects.toThrow(/ip -n .* addr add 10.77.0.1\/99 dev br0/);
    expect(namespaceExists(NS)).toBe(false);
  });
});
