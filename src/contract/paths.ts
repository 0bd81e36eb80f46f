// Where daemons listen. On a node the run directory is /system/run; tests and host runs point
// BRONZE_RUN_DIR elsewhere.
import path from 'node:path';

export const DAEMONS = ['apid', 'trustd', 'networkd', 'timed', 'udevd'] as const;
export type DaemonName = (typeof DAEMONS)[number];

export function runDir(): string {
  return process.env.BRONZE_RUN_DIR ?? '/system/run';
}

export function socketPath(name: string): string {
  return path.join(runDir(), name, `${name}.sock`);
}

/** Where machined leaves the machine identity it chose for the daemons (lib/hostname.ts; tmpfs on a node). */
export function identityFile(): string {
  return path.join(runDir(), 'machined', 'identity.json');
}

/** Where machined leaves certificates and keys for apid and trustd (tmpfs on a node). */
export function secretsDir(): string {
  return process.env.BRONZE_SECRETS_DIR ?? '/system/secrets';
}

/** apid's listen address; host runs and tests pick another. */
export function apidListenAddress(): string {
  return process.env.BRONZE_APID_LISTEN ?? '[::]:50000';
}
