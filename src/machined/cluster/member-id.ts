// The node's member id in the cluster registry: 128 random bits, made once and kept in STATE
// (<state>/member-id, 0600), so that it outlives reboots and upgrades and goes with a reset of
// STATE. Never the SMBIOS UUID, the MAC or the machine id: those name the hardware (and the
// SMBIOS UUID is what a LUKS2 nodeID key is derived from), while the registry's ids are read
// by every member and every os:reader.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../../lib/log.ts';

export const MEMBER_ID_FILE = 'member-id';
const ID = /^[0-9a-f]{32}$/;

/** Reads <stateDir>/member-id, making it first when absent (or not an id); throws when STATE cannot hold it. */
export function loadOrCreateMemberId(stateDir: string): string {
  const file = path.join(stateDir, MEMBER_ID_FILE);
  try {
    const text = fs.readFileSync(file, 'utf8').trim();
    if (ID.test(text)) return text;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const id = crypto.randomBytes(16).toString('hex');
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  // Written beside, synced, renamed over: a crash leaves the old file or the new one.
  const tmp = path.join(stateDir, `.${MEMBER_ID_FILE}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`);
  const fd = fs.openSync(tmp, 'wx', 0o600);
  try {
    fs.fchmodSync(fd, 0o600);
    fs.writeFileSync(fd, `${id}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return id;
}

/**
 * The member id, read once from STATE. Should STATE not hold it (read-only, absent), a random
 * id for this boot, said once in the log; never an id of the hardware.
 */
export function memberIdReader(stateDir: string, log?: Logger): () => string {
  let id: string | undefined;
  let warned = false;
  return () => {
    if (id) return id;
    try {
      id = loadOrCreateMemberId(stateDir);
      return id;
    } catch (err) {
      if (!warned) log?.warn(`member id: cannot keep it in ${path.join(stateDir, MEMBER_ID_FILE)} (${(err as Error).message}); a random one for this boot`);
      warned = true;
      id = crypto.randomBytes(16).toString('hex');
      return id;
    }
  };
}
