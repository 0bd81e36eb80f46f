// Run by bench/codecs.ts (bundled, under qemu-x86_64): the first encode and decode of each
// message named on the command line, as a boot makes them (fromObject, encode, decode,
// toObject), timed. Prints one JSON line.
import { messageType, LOADER_OPTIONS } from '../src/contract/protos.ts';

const names = process.argv.slice(2);
// The types are built first: what is timed is their first calls alone.
const types = names.map((n) => messageType(n));
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (const t of types) t.toObject(t.decode(t.encode(t.fromObject({})).finish()), LOADER_OPTIONS);
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
process.stdout.write(`${JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000 })}\n`);
