// The node's member id in the cluster registry: 128 random bits, made once and kept in STATE
// (<state>/member-id, 0600), so that it outlives reboots and upgrades and goes with a reset of
// STATE. Never the SMBIOS UUID, the MAC or the machine id: those name the hardware (and the
// SMBIOS UUID is what a LUKS2 nodeID key is derived from), while the registry's ids are read
// by every member and every os:reader.
import crypto from 'node:crypto';
import path from 'node:path';
import { keptRandomId } from '../../lib/kept-id.ts';
import type { Logger } from '../../lib/log.ts';

export const MEMBER_ID_FILE = 'member-id';

/** Reads <stateDir>/member-id, making it first when absent (or not an id); throws when STATE cannot hold it. */
export function loadOrCreateMemberId(stateDir: string): string {
  return keptRandomId(path.join(stateDir, MEMBER_ID_FILE), 0o600).id;
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
