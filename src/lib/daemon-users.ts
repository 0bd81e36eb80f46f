// Who each unprivileged daemon runs as, as data, and the directories it must reach. apid,
// trustd and etcd take Talos's numbers (pkg/machinery/constants: ApidUserID 50, TrustdUserID 51,
// EtcdUserID 60; each its own group of the same number); timed, which Talos runs inside
// machined, takes Bronze's 52. networkd and udevd stay root (netlink, devices).
//
// They are switched only when machined is PID 1 (a node) or BRONZE_DAEMON_USERS=1 asks for it
// (tests, as root): a host run has no such users and may not be root. Light on purpose (fs and
// path only): machined's first moments as PID 1 (early.ts) read it.
import fs from 'node:fs';
import path from 'node:path';

export type UnprivilegedDaemon = 'apid' | 'trustd' | 'timed' | 'etcd';

export interface DaemonUser {
  uid: number;
  gid: number;
  /** Capabilities it keeps (CAP_* names); none unless listed. */
  capabilities: readonly string[];
}

export const DAEMON_USERS: Readonly<Record<UnprivilegedDaemon, DaemonUser>> = Object.freeze({
  apid: { uid: 50, gid: 50, capabilities: [] },
  trustd: { uid: 51, gid: 51, capabilities: [] },
  // clock_settime and adjtimex (timed/clock.ts), called on timed's main thread.
  timed: { uid: 52, gid: 52, capabilities: ['CAP_SYS_TIME'] },
  etcd: { uid: 60, gid: 60, capabilities: [] },
});

export const DAEMON_USERS_ENV = 'BRONZE_DAEMON_USERS';

/** Whether daemons run under their own users: on a node (PID 1), or when BRONZE_DAEMON_USERS=1. */
export function daemonUsersEnabled(env: NodeJS.ProcessEnv = process.env, pid = process.pid): boolean {
  const v = env[DAEMON_USERS_ENV];
  if (v === '1') return true;
  if (v === '0') return false;
  if (v !== undefined && v !== '') throw new Error(`${DAEMON_USERS_ENV} must be "1" or "0", not ${JSON.stringify(v)}`);
  return pid === 1;
}

/** The user `id` runs as, or undefined (root: not one of them, or users are not enabled). */
export function daemonUser(id: string, env: NodeJS.ProcessEnv = process.env): DaemonUser | undefined {
  if (!Object.hasOwn(DAEMON_USERS, id) || !daemonUsersEnabled(env)) return undefined;
  return DAEMON_USERS[id as UnprivilegedDaemon];
}

function ensureDir(dir: string, uid: number, gid: number, mode: number): void {
  fs.mkdirSync(dir, { recursive: true, mode });
  const st = fs.lstatSync(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a directory`);
  const chowned = st.uid !== uid || st.gid !== gid;
  if (chowned) fs.chownSync(dir, uid, gid); // which may clear the setgid bit: the mode follows
  if (chowned || (st.mode & 0o7777) !== mode) fs.chmodSync(dir, mode);
}

/** The files directly in `dir` take its owner and group; group-readable when the directory is. */
function ownFiles(dir: string, uid: number, gid: number, groupRead: boolean): void {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    if (!e.isFile()) continue;
    const f = path.join(dir, e.name);
    const st = fs.lstatSync(f);
    if (st.uid !== uid || st.gid !== gid) fs.chownSync(f, uid, gid);
    const mode = groupRead ? (st.mode & 0o777) | 0o040 : st.mode & 0o777;
    if ((st.mode & 0o777) !== mode) fs.chmodSync(f, mode);
  }
}

export interface DaemonDirs {
  runDir: string;
  secretsDir: string;
}

/**
 * Makes what `id` reads and writes reachable under its user, before it starts (idempotent):
 *  - the run directory and the secrets directory: traversable (0711), not listable;
 *  - <run>/<id>/ (its socket): its own, group apid, 02750: apid reaches the daemons' sockets
 *    (timed's TimeService), the socket taking the directory's group (daemon/serve.ts makes it 0660);
 *  - <secrets>/<id>/: its own, 0700, except apid's, which trustd reads too (it serves with
 *    apid's certificate): apid's, group trustd, 02750 (shared with the group). Files written
 *    there later take the directory's owner and group, and group read where shared
 *    (lib/atomic.ts); files already there are given them now.
 * etcd's own directories (data, PKI) are its service's (machined/etcd/service.ts).
 */
export function ensureDaemonDirs(id: UnprivilegedDaemon, dirs: DaemonDirs): void {
  const user = DAEMON_USERS[id];
  for (const d of [dirs.runDir, dirs.secretsDir]) ensureDir(d, 0, 0, 0o711);
  if (id === 'etcd') return;
  ensureDir(path.join(dirs.runDir, id), user.uid, DAEMON_USERS.apid.gid, 0o2750);
  const secrets = path.join(dirs.secretsDir, id);
  const shared = id === 'apid';
  ensureDir(secrets, user.uid, shared ? DAEMON_USERS.trustd.gid : user.gid, shared ? 0o2750 : 0o700);
  ownFiles(secrets, user.uid, shared ? DAEMON_USERS.trustd.gid : user.gid, shared);
}

/** chown -R: `dir` and everything under it (symbolic links themselves, never followed). */
export function chownTree(dir: string, uid: number, gid: number): void {
  const st = fs.lstatSync(dir);
  if (st.uid !== uid || st.gid !== gid) fs.lchownSync(dir, uid, gid);
  if (!st.isDirectory()) return;
  for (const e of fs.readdirSync(dir)) chownTree(path.join(dir, e), uid, gid);
}

/**
 * etcd's data directory and certificates, made its own before it starts (as Talos's PreFunc:
 * the whole tree, since data or certificates written as root may be there), and their parent
 * directories traversable by it (/var/lib is 0700 otherwise).
 */
export function ensureEtcdDirs(o: { dataDir: string; pkiDir: string }): void {
  const { uid, gid } = DAEMON_USERS.etcd;
  for (const d of [o.dataDir, o.pkiDir]) {
    fs.mkdirSync(d, { recursive: true, mode: 0o700 });
    const parent = path.dirname(d);
    const mode = fs.statSync(parent).mode & 0o7777;
    if ((mode & 0o001) === 0) fs.chmodSync(parent, mode | 0o001);
    chownTree(d, uid, gid);
    fs.chmodSync(d, 0o700);
  }
}
