// Benchmark: latency (p50, p99) and throughput of Version through the full path on loopback
// (client → mTLS → apid → unix socket → machined), next to a bare grpc-js server answering
// the same RPC over the same TLS 1.3 with the same certificates, in the same run; and the
// cold start of `bronzectl version --client`. Prints numbers, asserts nothing.
//   make bench (runs it bundled)   (BENCH_CALLS, BENCH_CONCURRENCY to change the load)
import { execFileSync, spawnSync } from 'node:child_process';
import tls from 'node:tls';
import * as grpc from '@grpc/grpc-js';
import { generateConfigs } from '../src/contract/genconfig.ts';
import { serviceClient, serviceDefinition } from '../src/contract/protos.ts';
import { generateSecrets } from '../src/contract/secrets.ts';
import { versionReply } from '../src/daemon/serve.ts';
import { issueClientCert, issueServerCert } from '../src/pki/certs.ts';
import { HostNode } from '../test/lib/nodes.ts';
import { freePort } from '../test/lib/ports.ts';

const CALLS = Number(process.env.BENCH_CALLS ?? 2000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32);

type VersionClient = grpc.Client & { Version: (req: object, cb: (e: grpc.ServiceError | null) => void) => void };

function call(c: VersionClient): Promise<void> {
  return new Promise((resolve, reject) => c.Version({}, (e) => (e ? reject(e) : resolve())));
}

async function measure(name: string, c: VersionClient): Promise<void> {
  for (let i = 0; i < 100; i++) await call(c); // warm up
  const lat: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t = process.hrtime.bigint();
    await call(c);
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  lat.sort((a, b) => a - b);
  const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!.toFixed(2);
  const t0 = Date.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < CALLS) await call(c);
    }),
  );
  const rps = (CALLS / ((Date.now() - t0) / 1000)).toFixed(0);
  console.log(`${name.padEnd(34)} p50 ${q(0.5)} ms  p99 ${q(0.99)} ms  throughput ${rps} calls/s (${CONCURRENCY} in flight)`);
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

  const port = await freePort();
  const node = new HostNode({
    name: 'bench',
    address: '127.0.0.1',
    apiPort: port,
    config: generateConfigs({ clusterName: 'bench', endpoint: '127.0.0.1', secrets }).controlplane,
    services: ['apid'],
  }).start();
  try {
    await node.waitFor(/serving the API on/, 60_000);
    console.log(`Version RPC, ${CALLS} sequential calls for latency, ${CALLS} with ${CONCURRENCY} in flight for throughput`);
    await measure('bare grpc-js server (mTLS)', new Machine(`127.0.0.1:${barePort}`, creds) as unknown as VersionClient);
    await measure('apid → machined (mTLS + unix)', new Machine(`127.0.0.1:${port}`, creds) as unknown as VersionClient);
  } finally {
    bare.forceShutdown();
    await node.stop();
  }

  // Cold start of the CLI: a fresh process each time.
  execFileSync('image-builder/bundle.sh', ['src/bronzectl/main.ts', '_out/build/bronzectl.cjs'], { stdio: 'pipe' });
  const times: number[] = [];
  for (let i = 0; i < 10; i++) {
    const t = Date.now();
    const r = spawnSync(process.execPath, ['_out/build/bronzectl.cjs', 'version', '--client'], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`bronzectl version --client failed: ${r.stderr}`);
    times.push(Date.now() - t);
  }
  times.sort((a, b) => a - b);
  console.log(`bronzectl version --client cold start: median ${times[5]} ms, min ${times[0]} ms, max ${times[9]} ms (${process.version})`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
