// The daemons' users as data, and the directories machined makes for them: real directories
// and real ownership (as root, as on a node), and files machined writes there afterwards
// (lib/atomic.ts) taking the directory's owner.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeFileAtomic } from './atomic.ts';
import { DAEMON_USERS, daemonUser, daemonUsersEnabled, ensureDaemonDirs, ensureEtcdDirs } from './daemon-users.ts';

const isRoot = process.getuid?.() === 0;

describe('daemon users', () => {
  it('take Talos\'s numbers for apid, trustd and etcd, and CAP_SYS_TIME for timed alone', () => {
    expect(DAEMON_USERS.apid).toMatchObject({ uid: 50, gid: 50, capabilities: [] });
    expect(DAEMON_USERS.trustd).toMatchObject({ uid: 51, gid: 51, capabilities: [] });
    expect(DAEMON_USERS.etcd).toMatchObject({ uid: 60, gid: 60, capabilities: [] });
    expect(DAEMON_USERS.timed).toMatchObject({ uid: 52, gid: 52, capabilities: ['CAP_SYS_TIME'] });
  });

  it('are on as PID 1 or when BRONZE_DAEMON_USERS=1 asks; anything else in it is an error', () => {
    expect(daemonUsersEnabled({}, 1)).toBe(true);
    expect(daemonUsersEnabled({}, 4242)).toBe(false);
    expect(daemonUsersEnabled({ BRONZE_DAEMON_USERS: '1' }, 4242)).toBe(true);
    expect(daemonUsersEnabled({ BRONZE_DAEMON_USERS: '0' }, 1)).toBe(false);
    expect(() => daemonUsersEnabled({ BRONZE_DAEMON_USERS: 'yes' }, 1)).toThrow(/BRONZE_DAEMON_USERS must be "1" or "0", not "yes"/);
    expect(daemonUser('networkd', { BRONZE_DAEMON_USERS: '1' })).toBeUndefined();
    expect(daemonUser('apid', { BRONZE_DAEMON_USERS: '0' })).toBeUndefined();
    expect(daemonUser('apid', { BRONZE_DAEMON_USERS: '1' })?.uid).toBe(50);
  });
});

describe.skipIf(!isRoot)('their directories', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-daemon-dirs-'));
  const dirs = { runDir: path.join(dir, 'run'), secretsDir: path.join(dir, 'secrets') };
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const owner = (p: string) => {
    const st = fs.statSync(p);
    return { uid: st.uid, gid: st.gid, mode: st.mode & 0o7777 };
  };

  it('apid: its socket directory (group apid) and its secrets, shared with trustd; files already there follow', async () => {
    fs.mkdirSync(path.join(dirs.secretsDir, 'apid'), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(dirs.secretsDir, 'apid', 'server.key'), 'old', { mode: 0o600 });
    ensureDaemonDirs('apid', dirs);
    expect(owner(dirs.runDir)).toEqual({ uid: 0, gid: 0, mode: 0o711 });
    expect(owner(dirs.secretsDir)).toEqual({ uid: 0, gid: 0, mode: 0o711 });
    expect(owner(path.join(dirs.runDir, 'apid'))).toEqual({ uid: 50, gid: 50, mode: 0o2750 });
    expect(owner(path.join(dirs.secretsDir, 'apid'))).toEqual({ uid: 50, gid: 51, mode: 0o2750 });
    expect(owner(path.join(dirs.secretsDir, 'apid', 'server.key'))).toEqual({ uid: 50, gid: 51, mode: 0o640 });
    // What machined writes there later: apid's, readable by trustd's group, never by others.
    await writeFileAtomic(path.join(dirs.secretsDir, 'apid', 'server.crt'), 'crt');
    expect(owner(path.join(dirs.secretsDir, 'apid', 'server.crt'))).toEqual({ uid: 50, gid: 51, mode: 0o640 });
    // Again: nothing changes (idempotent).
    ensureDaemonDirs('apid', dirs);
    expect(owner(path.join(dirs.secretsDir, 'apid'))).toEqual({ uid: 50, gid: 51, mode: 0o2750 });
  });

  it('trustd and timed: their own, 0700 secrets; the sockets\' directories of group apid', async () => {
    ensureDaemonDirs('trustd', dirs);
    ensureDaemonDirs('timed', dirs);
    expect(owner(path.join(dirs.secretsDir, 'trustd'))).toEqual({ uid: 51, gid: 51, mode: 0o700 });
    expect(owner(path.join(dirs.runDir, 'timed'))).toEqual({ uid: 52, gid: 50, mode: 0o2750 });
    await writeFileAtomic(path.join(dirs.secretsDir, 'trustd', 'ca.key'), 'key');
    expect(owner(path.join(dirs.secretsDir, 'trustd', 'ca.key'))).toEqual({ uid: 51, gid: 51, mode: 0o600 });
  });

  it('a root-owned directory keeps root-owned files (host runs, STATE)', async () => {
    await writeFileAtomic(path.join(dir, 'plain', 'f'), 'x');
    expect(owner(path.join(dir, 'plain', 'f'))).toEqual({ uid: 0, gid: 0, mode: 0o600 });
  });

  it('etcd: its data (all of it) and certificates, their parents traversable', () => {
    const data = path.join(dir, 'var', 'lib', 'etcd');
    fs.mkdirSync(path.join(data, 'member', 'wal'), { recursive: true, mode: 0o700 });
    fs.chmodSync(path.join(dir, 'var', 'lib'), 0o700);
    fs.writeFileSync(path.join(data, 'member', 'wal', '0.wal'), 'wal');
    const pki = path.join(dirs.secretsDir, 'etcd');
    ensureEtcdDirs({ dataDir: data, pkiDir: pki });
    expect(owner(path.join(data, 'member', 'wal', '0.wal'))).toMatchObject({ uid: 60, gid: 60 });
    expect(owner(data)).toEqual({ uid: 60, gid: 60, mode: 0o700 });
    expect(owner(pki)).toEqual({ uid: 60, gid: 60, mode: 0o700 });
    expect(owner(path.join(dir, 'var', 'lib')).mode).toBe(0o701);
  });
});
