// The time of each lifecycle flow under QEMU/TCG: install from the ISO, first boot from the
// disk, upgrade (upload to Running on the new slot), rollback, an upgrade to a broken image
// (until the node is Running again on the old slot by itself), a power cut and a STATE repair.
// The flows are the end-to-end test's (test/e2e/lifecycle.test.ts), run for real; this prints
// their timings. (Reset is the README's last step: test/e2e/readme.test.ts.)
//   make bench-lifecycle      (needs `make image test-images`)
import { spawnSync } from 'node:child_process';

const runs = Number(process.env.BENCH_RUNS ?? 1);
const all: Array<Record<string, number>> = [];
for (let i = 0; i < runs; i++) {
  const r = spawnSync('vitest', ['run', '--project', 'e2e', 'test/e2e/lifecycle.test.ts'], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const m = /lifecycle: times (\{.*\})/.exec(r.stdout);
  if (r.status !== 0 || !m) {
    process.stderr.write(r.stdout.slice(-4000) + r.stderr.slice(-2000));
    throw new Error(`bench-lifecycle: the flows failed (run ${i + 1})`);
  }
  all.push(JSON.parse(m[1]!) as Record<string, number>);
}
console.log(`lifecycle flows under QEMU/TCG (${runs} run${runs > 1 ? 's' : ''}; seconds)`);
for (const name of Object.keys(all[0]!)) {
  const xs = all.map((t) => t[name]!).sort((a, b) => a - b);
  console.log(`  ${name.padEnd(52)} ${xs.map((x) => x.toFixed(1)).join(' / ')}${runs > 1 ? `  (median ${xs[Math.floor(xs.length / 2)]!.toFixed(1)})` : ''}`);
}
