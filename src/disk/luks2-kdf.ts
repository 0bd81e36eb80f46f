// The key derivations of LUKS2 keyslots (src/disk/luks2.ts): PBKDF2 and Argon2 (argon2id,
// argon2i) as cryptsetup's JSON names them, with Node's crypto (pbkdf2Sync; argon2Sync, Node
// 24.7+), the calibration of new keyslots and the bounds on what an existing one may ask for.
import crypto from 'node:crypto';
import os from 'node:os';

export class Luks2Error extends Error {
  override name = 'Luks2Error';
}

/** A keyslot's key derivation, as its JSON says (the salt apart). Argon2's memory is in KiB. */
export type Luks2Kdf =
  | { type: 'pbkdf2'; iterations: number }
  | { type: 'argon2id' | 'argon2i'; time: number; memory: number; cpus: number };

/** Argon2 memory cost of new keyslots, KiB: 64 MiB, what a 512 MiB node can spare at boot. */
export const ARGON2_MEMORY_KIB = 64 * 1024;
/** The least memory calibration goes down to on a machine too slow for 4 passes of 64 MiB in the time (QEMU TCG). */
export const ARGON2_MIN_MEMORY_KIB = 32 * 1024;
/** Argon2 lanes of new keyslots (cryptsetup: up to 4, bounded by the CPUs). */
export const ARGON2_MAX_CPUS = 2;
/** cryptsetup's floor for Argon2's time cost (passes). */
export const ARGON2_MIN_TIME = 4;

/** PBKDF2 iterations that take about `ms` here, at least 1000 (cryptsetup's floor). */
export function calibrateIterations(ms: number, keySize = 64): number {
  const probe = 20_000;
  const t0 = process.hrtime.bigint();
  crypto.pbkdf2Sync('calibrate', 'salt', probe, keySize, 'sha256');
  const took = Number(process.hrtime.bigint() - t0) / 1e6;
  return Math.max(1000, Math.round((probe * ms) / Math.max(took, 0.001)));
}

type Argon2Sync = (algorithm: 'argon2id' | 'argon2i' | 'argon2d', p: { message: Buffer; nonce: Buffer; parallelism: number; tagLength: number; memory: number; passes: number }) => Buffer;

/** Node's crypto.argon2Sync (24.7+; @types/node here is older), or a clear error naming the runtime. */
function argon2Sync(): Argon2Sync {
  const f = (crypto as unknown as { argon2Sync?: Argon2Sync }).argon2Sync;
  if (typeof f !== 'function') throw new Luks2Error(`argon2 keyslots need Node 24.7 or later (crypto.argon2Sync); this is Node ${process.version}`);
  return f;
}

/**
 * Argon2id settings for new keyslots: ARGON2_MEMORY_KIB, up to ARGON2_MAX_CPUS lanes, and as many
 * passes as take about `ms` here (at least ARGON2_MIN_TIME), measured with two passes (one would
 * count the memory's allocation as a pass, and undershoot). Where even ARGON2_MIN_TIME passes
 * take longer, the memory goes down instead (as cryptsetup's calibration does), to no less than
 * ARGON2_MIN_MEMORY_KIB: under QEMU's TCG a boot then takes about as long as with PBKDF2.
 */
export function calibrateArgon2(ms: number, o: { memory?: number; cpus?: number } = {}): Luks2Kdf {
  let memory = o.memory ?? ARGON2_MEMORY_KIB;
  const cpus = o.cpus ?? Math.max(1, Math.min(ARGON2_MAX_CPUS, os.availableParallelism()));
  const probe = 2;
  const t0 = process.hrtime.bigint();
  argon2Sync()('argon2id', { message: Buffer.from('calibrate'), nonce: Buffer.alloc(32), parallelism: cpus, tagLength: 32, memory, passes: probe });
  const perPass = Math.max(Number(process.hrtime.bigint() - t0) / 1e6, 0.001) / probe;
  const floor = perPass * ARGON2_MIN_TIME;
  if (floor > ms && o.memory === undefined) {
    memory = Math.max(ARGON2_MIN_MEMORY_KIB, Math.floor((memory * ms) / floor / 1024) * 1024);
    return { type: 'argon2id', time: ARGON2_MIN_TIME, memory, cpus };
  }
  return { type: 'argon2id', time: Math.max(ARGON2_MIN_TIME, Math.round(ms / perPass)), memory, cpus };
}

/** The most Argon2 memory a keyslot may ask for here, KiB: half the machine's memory (a larger one would take the node down). */
const argon2MemoryLimit = (): number => Math.floor(os.totalmem() / 1024 / 2);

/** The keyslot KDFs deriveKek runs (argon2id is what new keyslots get). */
export const READABLE_KDFS: ReadonlySet<string> = new Set(['pbkdf2', 'argon2id', 'argon2i']);

/** The key a keyslot's KDF derives from `passphrase`; throws a Luks2Error naming a KDF or setting it will not run. */
export function deriveKek(kdf: { type: string; hash?: string; iterations?: number; time?: number; memory?: number; cpus?: number }, salt: Buffer, passphrase: Buffer, keySize: number, what: string): Buffer {
  if (kdf.type === 'pbkdf2') {
    if (!Number.isInteger(kdf.iterations) || kdf.iterations! < 1) throw new Luks2Error(`${what}: pbkdf2 iterations ${String(kdf.iterations)} is not a positive integer`);
    return crypto.pbkdf2Sync(passphrase, salt, kdf.iterations!, keySize, kdf.hash ?? 'sha256');
  }
  if (kdf.type !== 'argon2id' && kdf.type !== 'argon2i') throw new Luks2Error(`${what} uses ${kdf.type}; Bronze reads pbkdf2, argon2id and argon2i keyslots`);
  const { time, memory, cpus } = kdf;
  const int = (v: unknown, min: number) => Number.isInteger(v) && (v as number) >= min;
  if (!int(time, 1) || !int(cpus, 1) || (cpus as number) > 16 || !int(memory, 8 * (cpus ?? 1))) {
    throw new Luks2Error(`${what}: ${kdf.type} settings time ${String(time)}, memory ${String(memory)} KiB, cpus ${String(cpus)} are not valid Argon2 ones`);
  }
  if (memory! > argon2MemoryLimit()) {
    throw new Luks2Error(`${what}: its ${kdf.type} memory cost (${Math.round(memory! / 1024)} MiB) is more than half this machine's memory (${Math.round(os.totalmem() / 2 ** 20)} MiB); open it with cryptsetup on a larger machine and give it a key with a smaller --pbkdf-memory`);
  }
  const argon2 = argon2Sync();
  try {
    return argon2(kdf.type, { message: passphrase, nonce: salt, parallelism: cpus!, tagLength: keySize, memory: memory!, passes: time! });
  } catch (err) {
    throw new Luks2Error(`${what}: ${kdf.type} (time ${time}, memory ${memory} KiB, cpus ${cpus}) failed: ${(err as Error).message}`);
  }
}
