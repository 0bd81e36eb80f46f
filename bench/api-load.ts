// Benchmark: load held by one node under QEMU. Boots the image as a control plane (configured
// from a URL served on the host's loopback), then runs BENCH_LOAD_CLIENTS concurrent mTLS
// clients (200 by default), each on a connection of its own, for BENCH_LOAD_SECONDS (600), in
// a mix of what operators and tools do at once:
//   - Version callers (half of the clients), each calling, then pausing BENCH_LOAD_THINK_MS;
//   - resource List callers (a fifth): Services.v1alpha1.talos.dev, then the pause;
//   - resource Watch holders (the rest, split with the next): a Watch kept open, re-opened when it ends;
//   - `logs machined --follow` holders: the stream kept open, re-opened when it ends.
// Every 30 s it samples apid's and machined's resident memory through the API (Processes). It
// prints the calls made, their p50/p99 latency, every error by gRPC code (RESOURCE_EXHAUSTED
// counts as deliberate backpressure, anything else as an error), and the memory from minute 2
// to the end (first, last, min, max), so that "flat" can be read off. Asserts nothing.
//   make bench-api-load     (BENCH_LOAD_CLIENTS, BENCH_LOAD_SECONDS, BENCH_LOAD_THINK_MS, BENCH_LOAD_MEMORY=512)
import * as grpc from '@grpc/grpc-js';
import { QemuVM } from '../image-builder/qemu.ts';
import { connect, type Client } from '../src/client/index.ts';
import { generateConfigs } from '../src/contract/genconfig.ts';
import { generateSecrets } from '../src/contract/secrets.ts';
import { issueClientCert } from '../src/pki/certs.ts';
import { consoleFile } from '../test/lib/console-log.ts';
import { serveFiles } from '../test/lib/http-files.ts';
import { freePort } from '../test/lib/ports.ts';

const CLIENTS = Number(process.env.BENCH_LOAD_CLIENTS ?? 200);
const SECONDS = Number(process.env.BENCH_LOAD_SECONDS ?? 600);
const THINK_MS = Number(process.env.BENCH_LOAD_THINK_MS ?? 1000);
const MEMORY = Number(process.env.BENCH_LOAD_MEMORY ?? 512);
const SAMPLE_MS = 30_000;
const WARMUP_MS = 120_000;

type Kind = 'version' | 'list' | 'watch' | 'logs';

/** The client mix: half Version, a fifth List, the rest split between Watch and Logs --follow. */
function kindOf(i: number, n: number): Kind {
  const f = i / n;
  if (f < 0.5) return 'version';
  if (f < 0.7) return 'list';
  if (f < 0.85) return 'watch';
  return 'logs';
}

const latencies: Record<'version' | 'list', number[]> = { version: [], list: [] };
const errors = new Map<string, number>();
let streamsOpened = 0;
let streamItems = 0;

function recordError(kind: Kind, err: unknown): void {
  const code = (err as { code?: number }).code;
  const name = code === undefined ? `non-gRPC: ${(err as Error).message}` : (grpc.status[code] ?? String(code));
  const key = `${kind}: ${name}`;
  errors.set(key, (errors.get(key) ?? 0) + 1);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runClient(c: Client, kind: Kind, until: number): Promise<void> {
  // Spread the start over the first 10 s, as real clients would arrive.
  await sleep(Math.random() * 10_000);
  while (Date.now() < until) {
    const t = process.hrtime.bigint();
    try {
      if (kind === 'version') {
        await c.machine.Version({}, { deadline: Date.now() + 60_000 });
        latencies.version.push(Number(process.hrtime.bigint() - t) / 1e6);
      } else if (kind === 'list') {
        for await (const _ of c.state.list('v1alpha1', 'Services.v1alpha1.talos.dev', { deadline: Date.now() + 60_000 })) void _;
        latencies.list.push(Number(process.hrtime.bigint() - t) / 1e6);
      } else {
        const ac = new AbortController();
        const stop = setTimeout(() => ac.abort(), Math.max(0, until - Date.now()));
        streamsOpened++;
        try {
          const stream = kind === 'watch' ? c.state.watch({ namespace: 'v1alpha1', type: 'Services.v1alpha1.talos.dev' }, { signal: ac.signal }) : c.machine.Logs({ namespace: 'system', id: 'machined', follow: true, tail_lines: 10 }, { signal: ac.signal });
          for await (const _ of stream) streamItems++;
        } finally {
          clearTimeout(stop);
        }
        if (ac.signal.aborted) return;
      }
    } catch (err) {
      if (Date.now() >= until && (err as { code?: number }).code === grpc.status.CANCELLED) return;
      recordError(kind, err);
      await sleep(1000);
    }
    await sleep(THINK_MS);
  }
}

function quantile(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
}

interface Sample {
  atMs: number;
  apidMiB?: number;
  machinedMiB?: number;
  error?: string;
}

async function sample(c: Client, startedAt: number): Promise<Sample> {
  const at = Date.now() - startedAt;
  try {
    const res = await c.machine.Processes({}, { deadline: Date.now() + 60_000 });
    const procs = res.messages[0]?.processes ?? [];
    const mib = (p?: { resident_memory: string }) => (p ? Number(p.resident_memory) / (1 << 20) : undefined);
    return { atMs: at, apidMiB: mib(procs.find((p) => p.command === 'apid' || /(^|\/)apid$/.test(p.args.split(' ')[0] ?? ''))), machinedMiB: mib(procs.find((p) => p.pid === 1)) };
  } catch (err) {
    return { atMs: at, error: (err as Error).message.split('\n')[0] };
  }
}

async function main(): Promise<void> {
  const secrets = await generateSecrets();
  const cfg = generateConfigs({ clusterName: 'load', endpoint: 'https://10.0.2.15:6443', additionalSANs: ['127.0.0.1'], secrets });
  const files = await serveFiles({ '/controlplane.yaml': cfg.controlplane });
  const port = await freePort();
  const vm = new QemuVM({ apiPort: port, memoryMiB: MEMORY, append: `ip=dhcp bronze.config=http://10.0.2.2:${files.port}/controlplane.yaml` }, consoleFile('api-load')).start();
  try {
    await vm.waitFor(/machined\[1\]: all \d+ services Running/, 300_000);
    const { crt, key } = await issueClientCert(secrets.certs.os, { commonName: 'api-load', roles: ['os:admin'], ttlMs: 3 * 3600_000 });
    // One connection per client: a channel option of its own keeps grpc-js from sharing one subchannel.
    const client = (i: number) => connect({ endpoints: [`127.0.0.1:${port}`], ca: secrets.certs.os.crt, crt, key, channelOptions: { 'bronze.bench.client': i } as grpc.ChannelOptions });
    const probe = client(-1);
    for (let t0 = Date.now(); ; ) {
      try {
        await probe.machine.Version({}, { deadline: Date.now() + 10_000 });
        break;
      } catch (err) {
        if (Date.now() - t0 > 180_000) throw err;
        await sleep(2000);
      }
    }
    console.log(`api-load: node Running; ${CLIENTS} clients for ${SECONDS} s (think ${THINK_MS} ms), ${MEMORY} MiB VM`);
    const startedAt = Date.now();
    const until = startedAt + SECONDS * 1000;
    const clients = Array.from({ length: CLIENTS }, (_, i) => client(i));
    const samples: Sample[] = [];
    const sampler = (async () => {
      while (Date.now() < until) {
        const s = await sample(probe, startedAt);
        samples.push(s);
        console.log(`api-load: t=${(s.atMs / 1000).toFixed(0)} s apid ${s.apidMiB?.toFixed(1) ?? '?'} MiB, machined ${s.machinedMiB?.toFixed(1) ?? '?'} MiB RSS; ${latencies.version.length + latencies.list.length} calls, ${streamsOpened} streams, ${[...errors.values()].reduce((a, b) => a + b, 0)} errors${s.error ? ` (sample: ${s.error})` : ''}`);
        await sleep(Math.min(SAMPLE_MS, Math.max(0, until - Date.now())));
      }
    })();
    await Promise.all([...clients.map((c, i) => runClient(c, kindOf(i, CLIENTS), until)), sampler]);
    samples.push(await sample(probe, startedAt));
    for (const c of [...clients, probe]) c.close();

    const secs = (Date.now() - startedAt) / 1000;
    for (const k of ['version', 'list'] as const) {
      const xs = latencies[k];
      console.log(`api-load: ${k}: ${xs.length} calls (${(xs.length / secs).toFixed(1)}/s), p50 ${quantile(xs, 0.5).toFixed(1)} ms, p99 ${quantile(xs, 0.99).toFixed(1)} ms, max ${quantile(xs, 1).toFixed(1)} ms`);
    }
    console.log(`api-load: streams (watch, logs -f) opened ${streamsOpened}, items received ${streamItems}`);
    const backpressure = [...errors].filter(([k]) => k.endsWith('RESOURCE_EXHAUSTED'));
    const other = [...errors].filter(([k]) => !k.endsWith('RESOURCE_EXHAUSTED'));
    console.log(`api-load: backpressure (RESOURCE_EXHAUSTED): ${backpressure.map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`);
    console.log(`api-load: other errors: ${other.map(([k, n]) => `${k} ${n}`).join(', ') || 'none'}`);
    const held = samples.filter((s) => s.atMs >= WARMUP_MS && s.apidMiB !== undefined && s.machinedMiB !== undefined);
    for (const name of ['apidMiB', 'machinedMiB'] as const) {
      const xs = held.map((s) => s[name]!);
      if (!xs.length) continue;
      console.log(`api-load: ${name.replace('MiB', '')} RSS from minute 2: first ${xs[0]!.toFixed(1)}, last ${xs.at(-1)!.toFixed(1)}, min ${Math.min(...xs).toFixed(1)}, max ${Math.max(...xs).toFixed(1)} MiB (${xs.length} samples)`);
    }
    if (vm.oom) console.log(`api-load: OOM on the node: ${vm.oom}`);
  } finally {
    vm.kill();
    await files.close();
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
