// The work of `bronzectl cluster create|show|destroy` (cluster.ts): a local cluster of QEMU nodes,
// as talosctl's qemu provisioner makes one. create plans the nodes, makes the PKI and the
// configurations, the network (a namespace with a bridge) and the VMs, applies each node's
// configuration through its maintenance API, merges a context into the client config, bootstraps
// etcd on the first control plane and, with --wait, runs `health`. A create that fails tears
// down what it made. destroy stops the VMs, deletes the namespace and the cluster's files, and
// takes its context out of the client config.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Client } from '../../client/index.ts';
import { MACHINE_STATUS_ID, MACHINE_STATUS_TYPE } from '../../contract/resources/machine-status.ts';
import { merge, newClientConfig, load as loadClientConfig, save as saveClientConfig, type ClientConfig } from '../../contract/clientconfig.ts';
import { generateConfigs } from '../../contract/genconfig.ts';
import { generateSecrets } from '../../contract/secrets.ts';
import { goDurationMs } from '../../lib/duration.ts';
import { createNetwork, destroyNetwork, namespaceExists } from '../../provision/network.ts';
import { isNodeProcess, startNode, stopNode, type NodeImage } from '../../provision/node.ts';
import { nodeConfig, planCluster } from '../../provision/plan.ts';
import { isQemuArch, QEMU_ARCHES } from '../../provision/qemu.ts';
import { ClusterDir, type ClusterState, type NodeState } from '../../provision/state.ts';
import { load } from '../lazy.ts';
import { Session, UserError, type Ctx } from '../session.ts';

// What commands get from `load('cluster')` (lazy.ts): named here, not in lazy.ts, so that lazy.ts
// names no command file (the commands import it: that would be an import circle).
declare module '../lazy.ts' {
  interface LazyModules {
    cluster: {
      create: typeof create;
      show: typeof show;
      destroy: typeof destroy;
    };
  }
}

export interface CreateFlags {
  name: string;
  controlplanes: number;
  workers: number;
  wait: boolean;
  waitTimeout: string;
  memory: number;
  cpus: number;
  cidr: string;
  arch: string;
  vmlinuzPath?: string;
  initrdPath?: string;
  state: string;
}

export interface ClusterFlags {
  name: string;
  state: string;
}

const HOUR = 3600_000;
/** How long a node may take to boot to its maintenance API, and etcd to be bootstrapped (TCG). */
const BOOT_TIMEOUT_MS = 10 * 60_000;
/** How long one ApplyConfiguration may take to reply, the node answering already. */
const APPLY_TIMEOUT_MS = 3 * 60_000;

/** How many nodes of `cpusPerNode` vCPUs boot at once on a host of `hostCpus` (at least one). */
export function bootConcurrency(hostCpus: number, cpusPerNode: number): number {
  return Math.max(1, Math.floor(hostCpus / cpusPerNode));
}

/** The cluster's namespace: a name the operator can find with `ip netns list`. */
const namespaceOf = (name: string) => `bronze-${name}`;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function image(flags: CreateFlags, cwd: string): NodeImage {
  if (!isQemuArch(flags.arch)) throw new UserError(`--arch ${JSON.stringify(flags.arch)}: expected one of ${QEMU_ARCHES.join(', ')}`);
  const vmlinuz = path.resolve(cwd, flags.vmlinuzPath ?? path.join('_out', flags.arch, 'vmlinuz'));
  const initrd = path.resolve(cwd, flags.initrdPath ?? path.join(path.dirname(vmlinuz), 'initramfs.xz'));
  for (const [flag, f] of [['--vmlinuz-path', vmlinuz], ['--initrd-path', initrd]] as const) {
    if (!fs.existsSync(f)) throw new UserError(`${flag} ${f}: no such file (build the image with \`make image${flags.arch === 'amd64' ? '' : ` ARCH=${flags.arch}`}\`)`);
  }
  return { arch: flags.arch, vmlinuz, initrd, imageDir: path.dirname(vmlinuz) };
}

/** Retries `f` until it resolves, `done` says an error is final, or the time is up. */
async function retry<T>(what: string, timeoutMs: number, f: () => Promise<T>, final: (e: Error) => boolean = () => false, report: (line: string) => void = () => {}): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      return await f();
    } catch (e) {
      const msg = (e as Error).message;
      if (final(e as Error) || Date.now() > deadline) throw new Error(`${what}: ${msg}`);
      // Each new reason once (a node still booting says the same thing for a minute).
      if (msg !== last) report(`${what}: ${msg} (retrying)`);
      last = msg;
    }
    await new Promise((r) => setTimeout(r, 2000));
  }
}

export async function create(ctx: Ctx, flags: CreateFlags): Promise<void> {
  const out = (line: string) => void ctx.io.stdout.write(`${line}\n`);
  const waitMs = goDurationMs(flags.waitTimeout);
  if (waitMs === undefined || waitMs <= 0) throw new UserError(`--wait-timeout ${JSON.stringify(flags.waitTimeout)}: expected a duration such as 30s, 5m or 1h`);
  if (!(flags.memory >= 288)) throw new UserError(`--memory ${flags.memory}: a Bronze node needs at least 288 MiB`);
  if (!(Number.isInteger(flags.cpus) && flags.cpus >= 1)) throw new UserError(`--cpus ${flags.cpus}: expected a whole number of 1 or more`);
  let plan;
  let dir: ClusterDir;
  try {
    dir = new ClusterDir(flags.state, flags.name);
    plan = planCluster(flags.name, flags.cidr, flags.controlplanes, flags.workers);
  } catch (e) {
    throw new UserError((e as Error).message);
  }
  const img = image(flags, ctx.io.cwd);
  const namespace = namespaceOf(flags.name);
  if (namespaceExists(namespace)) throw new UserError(`network namespace ${namespace} exists already: is cluster ${JSON.stringify(flags.name)} running? (\`bronzectl cluster destroy --name ${flags.name}\`)`);
  try {
    dir.create();
  } catch (e) {
    throw new UserError((e as Error).message);
  }

  // The client config the context goes into: --bronzeconfig, $BRONZECONFIG or the default.
  const configPath = await ctx.session().configPath();
  const state: ClusterState = { name: flags.name, provisioner: 'qemu', arch: flags.arch, namespace, cidr: plan.cidr, gateway: plan.gateway, nodes: [] };
  try {
    out(`validating CIDR and reserving IPs`);
    for (const n of plan.nodes) {
      state.nodes.push({ name: n.name, type: n.type, ip: n.ip, mac: n.mac, tap: n.tap, apiPort: await freePort(), memoryMiB: flags.memory, cpus: flags.cpus });
    }
    dir.write(state);

    out(`generating PKI and tokens`);
    const secrets = await generateSecrets();
    const cp1 = state.nodes[0]!;
    const generated = generateConfigs({ clusterName: flags.name, endpoint: `https://${cp1.ip}:6443`, additionalSANs: ['127.0.0.1'], secrets });
    const configs = new Map<string, string>();
    for (const n of plan.nodes) {
      const text = nodeConfig(n.type === 'controlplane' ? generated.controlplane : generated.worker, n, plan);
      fs.writeFileSync(dir.file(`${n.name}.yaml`), text, { mode: 0o600 });
      configs.set(n.name, text);
    }

    out(`creating network ${namespace} (bridge ${plan.gateway}/${plan.prefixLength} in its own network namespace)`);
    await createNetwork(namespace, `${plan.gateway}/${plan.prefixLength}`);
    const { connect, RpcError } = await load('client');
    /** Boots node `n` and applies its configuration through its maintenance API. */
    const bringUp = async (n: NodeState) => {
      out(`creating node ${n.name} (${n.type}, ${n.ip}, API at 127.0.0.1:${n.apiPort})`);
      n.pid = await startNode(n, img, { log: dir.consoleLog(n.name), monitor: dir.monitor(n.name) }, namespace);
      dir.write(state);
      const target = `127.0.0.1:${n.apiPort}`;
      const c: Client = connect({ endpoints: [target], insecure: true });
      try {
        // First until its maintenance API answers at all (QEMU's user network accepts the
        // connection before the node listens), with short calls; then the apply, once, with
        // time to spare: a node busy booting beside others may take a minute to reply, and an
        // apply sent again would be applied again.
        const vmGone = () => (isNodeProcess(n.pid, dir.monitor(n.name)) ? undefined : new Error(`its VM has exited (console: ${dir.consoleLog(n.name)})`));
        await retry(`${n.name}: waiting for its maintenance API at ${target}`, BOOT_TIMEOUT_MS, async () => {
          const gone = vmGone();
          if (gone) throw gone;
          await c.state.get('runtime', MACHINE_STATUS_TYPE, MACHINE_STATUS_ID, { deadline: Date.now() + 10_000 });
        }, () => vmGone() !== undefined, out);
        await retry(`${n.name}: applying its configuration through the maintenance API at ${target}`, BOOT_TIMEOUT_MS, async () => {
          const gone = vmGone();
          if (gone) throw gone;
          await c.machine.ApplyConfiguration({ data: Buffer.from(configs.get(n.name)!), mode: 'AUTO', dry_run: false }, { deadline: Date.now() + APPLY_TIMEOUT_MS });
        }, () => vmGone() !== undefined, out);
      } finally {
        c.close();
      }
      out(`applied the configuration to ${n.name}`);
    };
    // Under TCG a booting node keeps each of its vCPUs busy: more nodes booting at once than the
    // host has CPUs for makes every boot slower than booting them in turn (measured: four 1-vCPU
    // nodes on 2 host CPUs took 10 minutes to come up together), and the nodes' own timeouts
    // start to fire. So at most (host CPUs / vCPUs per node) nodes boot at a time; the next
    // starts when one has taken its configuration.
    const atOnce = bootConcurrency(os.availableParallelism(), flags.cpus);
    if (atOnce < state.nodes.length) out(`booting ${atOnce} node${atOnce === 1 ? '' : 's'} at a time (${os.availableParallelism()} host CPUs, ${flags.cpus} per node)`);
    const queue = [...state.nodes];
    let failed = false;
    await Promise.all(
      Array.from({ length: Math.min(atOnce, queue.length) }, async () => {
        for (let n = queue.shift(); n && !failed; n = queue.shift()) {
          await bringUp(n).catch((e: unknown) => {
            failed = true;
            throw e;
          });
        }
      }),
    );

    const cps = state.nodes.filter((n) => n.type === 'controlplane');
    const client = await newClientConfig({ contextName: flags.name, endpoints: cps.map((n) => `127.0.0.1:${n.apiPort}`), nodes: [cp1.ip], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 365 * 24 * HOUR });
    const into: ClientConfig = fs.existsSync(configPath) ? await loadClientConfig(configPath) : { context: '', contexts: {} };
    const { config: merged, renames } = merge(into, client);
    state.bronzeconfig = configPath;
    state.context = renames[0]?.to ?? flags.name;
    await saveClientConfig(configPath, merged);
    dir.write(state);
    out(`merged context ${JSON.stringify(state.context)} into ${configPath} (endpoints ${client.contexts[flags.name]!.endpoints.join(', ')}; nodes ${cp1.ip})`);

    out(`bootstrapping cluster on ${cp1.name}`);
    const ctxInfo = client.contexts[flags.name]!;
    const c: Client = connect({ endpoints: [`127.0.0.1:${cp1.apiPort}`], ca: ctxInfo.ca, crt: ctxInfo.crt, key: ctxInfo.key });
    try {
      await retry(`bootstrapping etcd on ${cp1.name}`, BOOT_TIMEOUT_MS, () => c.machine.Bootstrap({}, { deadline: Date.now() + 30_000 }), (e) => e instanceof RpcError && e.code === 6 /* ALREADY_EXISTS */, out);
    } finally {
      c.close();
    }

    if (flags.wait) {
      const cluster: Ctx = { io: ctx.io, session: () => new Session(ctx.io, { bronzeconfig: configPath, context: state.context, endpoints: [], nodes: [] }) };
      await (await load('health')).health(cluster, {
        controlPlaneNodes: cps.map((n) => n.ip),
        workerNodes: state.nodes.filter((n) => n.type === 'worker').map((n) => n.ip),
        waitTimeout: flags.waitTimeout,
      });
    }
  } catch (e) {
    out(`creating cluster ${JSON.stringify(flags.name)} failed: ${(e as Error).message}`);
    out(`tearing down what was made`);
    await teardown(dir, state, () => {});
    throw e instanceof UserError ? e : new UserError(`cluster create: ${(e as Error).message}`);
  }
  out('');
  printCluster(ctx, state, dir);
}

function printCluster(ctx: Ctx, state: ClusterState, dir: ClusterDir): void {
  const table = (rows: string[][]) => {
    const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
    return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]! + 3))).join('').trimEnd()).join('\n');
  };
  ctx.io.stdout.write(
    `${table([
      ['PROVISIONER', state.provisioner],
      ['NAME', state.name],
      ['NETWORK NAMESPACE', state.namespace],
      ['NETWORK CIDR', state.cidr],
      ['NETWORK GATEWAY', state.gateway],
      ['CONTEXT', state.context ?? '-'],
    ])}\n\nNODES:\n\n`,
  );
  const rows = [['NAME', 'TYPE', 'IP', 'API', 'CPU', 'RAM', 'STATE']];
  for (const n of state.nodes) {
    rows.push([n.name, n.type, n.ip, `127.0.0.1:${n.apiPort}`, String(n.cpus), `${n.memoryMiB} MiB`, isNodeProcess(n.pid, dir.monitor(n.name)) ? 'running' : 'stopped']);
  }
  ctx.io.stdout.write(`${table(rows)}\n`);
}

/** The cluster's directory and recorded state; a missing or unreadable one is the user's error. */
function openCluster(flags: ClusterFlags): { dir: ClusterDir; state: ClusterState } {
  try {
    const dir = new ClusterDir(flags.state, flags.name);
    return { dir, state: dir.read() };
  } catch (e) {
    throw new UserError((e as Error).message);
  }
}

export async function show(ctx: Ctx, flags: ClusterFlags): Promise<void> {
  const { dir, state } = openCluster(flags);
  printCluster(ctx, state, dir);
}

/** Stops every VM, deletes the namespace, takes the context out of the client config, removes the files. */
async function teardown(dir: ClusterDir, state: ClusterState, out: (line: string) => void): Promise<void> {
  const problems: string[] = [];
  await Promise.all(
    state.nodes.map(async (n: NodeState) => {
      try {
        await stopNode(n.pid, dir.monitor(n.name));
        out(`destroyed node ${n.name}`);
      } catch (e) {
        problems.push(`${n.name}: ${(e as Error).message}`);
      }
    }),
  );
  try {
    await destroyNetwork(state.namespace);
    out(`destroyed network ${state.namespace}`);
  } catch (e) {
    problems.push((e as Error).message);
  }
  if (state.bronzeconfig && state.context && fs.existsSync(state.bronzeconfig)) {
    try {
      const cfg = await loadClientConfig(state.bronzeconfig);
      if (Object.hasOwn(cfg.contexts, state.context)) {
        const { [state.context]: _gone, ...contexts } = cfg.contexts;
        await saveClientConfig(state.bronzeconfig, { context: cfg.context === state.context ? '' : cfg.context, contexts });
        out(`removed context ${JSON.stringify(state.context)} from ${state.bronzeconfig}`);
      }
    } catch (e) {
      problems.push(`${state.bronzeconfig}: ${(e as Error).message}`);
    }
  }
  // The files go last, and only when everything else is gone: a failed destroy can be run again.
  if (problems.length) throw new Error(problems.join('; '));
  dir.remove();
}

export async function destroy(ctx: Ctx, flags: ClusterFlags): Promise<void> {
  const out = (line: string) => void ctx.io.stdout.write(`${line}\n`);
  const { dir, state } = openCluster(flags);
  try {
    await teardown(dir, state, out);
  } catch (e) {
    throw new UserError(`cluster destroy: ${(e as Error).message} (run it again once that is fixed)`);
  }
  out(`destroyed cluster ${JSON.stringify(flags.name)}`);
}
