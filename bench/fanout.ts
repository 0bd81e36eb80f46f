// Benchmark: fan-out. `version` with the `nodes` metadata naming 1, 10 and 50 nodes, through one
// endpoint's apid, which proxies to every named node's apid and gathers the replies (talosctl's
// `-n a,b,c`). The nodes are simulated as real node processes on this host (machined in host
// mode with apid, each on its own 127.0.0.x: test/lib/nodes.ts), with real mTLS between the
// apids. Prints the median latency per size and the ratio of 50 nodes to 1 (the goal: <= 2x).
// Asserts nothing.
//   make bench-fanout   (BENCH_FANOUT_NODES=50, BENCH_FANOUT_CALLS=30 to change the load)
import { connect, nodes as nodesMetadata, type Client } from '../src/client/index.ts';
import { newClientConfig } from '../src/contract/clientconfig.ts';
import { generateConfigs } from '../src/contract/genconfig.ts';
import { generateSecrets } from '../src/contract/secrets.ts';
import fs from 'node:fs';
import os from 'node:os';
import { bundledBinary } from '../test/lib/bundle.ts';
import { HostNode } from '../test/lib/nodes.ts';
import { freePort } from '../test/lib/ports.ts';

const MAX = Number(process.env.BENCH_FANOUT_NODES ?? 50);
const CALLS = Number(process.env.BENCH_FANOUT_CALLS ?? 30);
const SIZES = [1, 10, MAX].filter((n, i, a) => n <= MAX && a.indexOf(n) === i);

/**
 * CPU time (ms) used so far by every simulated node's processes (machined and apid, found by
 * the bundle they run) and by this process (the client). On a machine with fewer cores than
 * nodes, the fleet's CPU per call bounds the latency from below: it says how much of a 50-node
 * call is the simulation sharing the cores rather than the fan-out itself.
 */
const TICK_MS = 1000 / 100; // USER_HZ
function cpuMs(): { fleet: number; client: number } {
  const bundle = bundledBinary();
  let fleet = 0;
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      if (!fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(bundle)) continue;
      const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      fleet += (Number(f[11]) + Number(f[12])) * TICK_MS; // utime, stime
    } catch {
      // gone meanwhile
    }
  }
  const u = process.cpuUsage();
  return { fleet, client: (u.user + u.system) / 1000 };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const port = await freePort();
  const secrets = await generateSecrets();
  const cfg = generateConfigs({ clusterName: 'fanout', endpoint: 'https://127.0.0.100:6443', secrets });
  const hosts: HostNode[] = [];
  const t0 = Date.now();
  try {
    for (let i = 0; i < MAX; i++) {
      hosts.push(new HostNode({ name: `fan${i}`, address: `127.0.0.${100 + i}`, apiPort: port, config: cfg.controlplane, services: ['apid'] }).start());
      // Started a few at a time: 50 at once would only measure the machine's start-up queue.
      if (i % 5 === 4) await Promise.all(hosts.slice(i - 4).map((h) => h.waitFor(/serving the API on/, 180_000)));
    }
    await Promise.all(hosts.map((h) => h.waitFor(/serving the API on/, 180_000)));
    console.log(`fan-out: ${MAX} node processes up in ${((Date.now() - t0) / 1000).toFixed(1)} s (machined + apid each, 127.0.0.100..${99 + MAX})`);

    const ctx = (await newClientConfig({ contextName: 'fanout', endpoints: [hosts[0]!.endpoint], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 })).contexts.fanout!;
    const client: Client = connect({ endpoints: [hosts[0]!.endpoint], ca: ctx.ca, crt: ctx.crt, key: ctx.key });
    const targets = hosts.map((h) => h.o.address);
    const call = async (n: number) => {
      const r = await client.machine.Version({}, { metadata: nodesMetadata(targets.slice(0, n)) });
      const bad = r.messages.filter((m) => m.metadata?.error);
      if (r.messages.length !== n || bad.length) throw new Error(`${n} nodes: ${r.messages.length} replies, errors: ${bad.map((m) => m.metadata?.error).join('; ')}`);
    };
    // Warm every proxy connection once, then rounds alternating between the sizes, so that each
    // size sees the same machine.
    await call(MAX);
    const times = new Map<number, number[]>(SIZES.map((n) => [n, []]));
    const cpu = new Map<number, number>(SIZES.map((n) => [n, 0]));
    for (let i = 0; i < CALLS; i++) {
      for (const n of SIZES) {
        const c0 = cpuMs();
        const t = process.hrtime.bigint();
        await call(n);
        times.get(n)!.push(Number(process.hrtime.bigint() - t) / 1e6);
        const c1 = cpuMs();
        cpu.set(n, cpu.get(n)! + (c1.fleet - c0.fleet) + (c1.client - c0.client));
      }
    }
    client.close();
    const cores = os.availableParallelism();
    for (const n of SIZES) {
      const perCall = cpu.get(n)! / CALLS;
      console.log(`fan-out: version -n <${String(n).padStart(2)} nodes>   median ${median(times.get(n)!).toFixed(1)} ms   CPU per call ${perCall.toFixed(1)} ms (nodes and client; >= ${(perCall / cores).toFixed(1)} ms on ${cores} cores)   (${CALLS} calls)`);
    }
    const ratio = median(times.get(MAX)!) / median(times.get(1)!);
    console.log(`fan-out: ${MAX} nodes / 1 node = ${ratio.toFixed(2)}x (target <= 2x)`);
    const bound = cpu.get(MAX)! / CALLS / cores;
    console.log(`fan-out: of the ${MAX}-node median, ${((bound / median(times.get(MAX)!)) * 100).toFixed(0)}% is the CPU the ${MAX} simulated nodes need on this machine's ${cores} cores`);
  } finally {
    await Promise.all(hosts.map((h) => h.stop()));
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
