// The supervisor starts a service under its own user with only the capabilities its spec
// names (ServiceSpec.user): real child processes, read back from /proc/<pid>/status (every
// thread's), and the supervising thread left as it was. Needs root, as on a node.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { initNative } from '../../lib/native.ts';
import { capabilityMask, getCapabilities, parseProcStatus, readProcessCredentials } from '../../lib/capabilities.ts';
import { DAEMON_USERS } from '../../lib/daemon-users.ts';
import { Supervisor } from './supervisor.ts';
import type { ServiceSpec } from './types.ts';

const fixtures = fileURLToPath(new URL('../../../test/fixtures/supervisor/', import.meta.url));
const isRoot = process.getuid?.() === 0;
const SYS_TIME = capabilityMask(['CAP_SYS_TIME']);

function spec(id: string, user: ServiceSpec['user']): ServiceSpec {
  return { id, dependsOn: [], command: process.execPath, args: [path.join(fixtures, 'run.mjs'), '--name', id], user, restart: 'never', stopTimeout: 2000 };
}

/** Every thread's credentials (capabilities are per thread). */
function threads(pid: number) {
  return fs.readdirSync(`/proc/${pid}/task`).map((t) => parseProcStatus(fs.readFileSync(`/proc/${pid}/task/${t}/status`, 'utf8')));
}

describe.skipIf(!isRoot)('services under their own users', () => {
  let sup: Supervisor;
  let before: ReturnType<typeof getCapabilities>;
  let lines: string[];
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-users-'));

  beforeAll(async () => {
    await initNative();
    before = getCapabilities();
    lines = [];
    sup = new Supervisor(
      [
        spec('timed', { uid: DAEMON_USERS.timed.uid, gid: DAEMON_USERS.timed.gid, capabilities: DAEMON_USERS.timed.capabilities }),
        spec('apid', { uid: DAEMON_USERS.apid.uid, gid: DAEMON_USERS.apid.gid }),
        spec('bad', { uid: 53, gid: 53, capabilities: ['CAP_NO_SUCH_THING'] }),
        spec('networkd', undefined),
      ],
      { log: (l) => lines.push(l) },
    );
    await Promise.all(['timed', 'apid', 'bad', 'networkd'].map((id) => sup.startService(id)));
    // Each prints "ready" once its Node runtime is up, with all its threads.
    const deadline = Date.now() + 15_000;
    while (['timed', 'apid', 'networkd'].some((id) => !sup.logs(id).some((l) => l.startsWith('ready')))) {
      if (Date.now() > deadline) throw new Error(`not ready: ${lines.join('\n')}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }, 30_000);

  afterAll(async () => {
    await sup?.stop();
    fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('timed: its uid and gid, no supplementary group, CAP_SYS_TIME alone, in every thread', () => {
    const pid = sup.get('timed')!.pid!;
    const all = threads(pid);
    expect(all.length).toBeGreaterThan(1); // Node's own threads too
    for (const t of all) {
      expect(t.uid).toEqual([52, 52, 52, 52]);
      expect(t.gid).toEqual([52, 52, 52, 52]);
      expect(t.groups).toEqual([]);
      expect(t.capEff).toBe(SYS_TIME);
      expect(t.capPrm).toBe(SYS_TIME);
      expect(t.capAmb).toBe(SYS_TIME);
    }
  });

  it('apid: its uid, no capability at all', () => {
    const c = readProcessCredentials(sup.get('apid')!.pid!);
    expect(c.uid).toEqual([50, 50, 50, 50]);
    expect(c.gid).toEqual([50, 50, 50, 50]);
    for (const t of threads(sup.get('apid')!.pid!)) expect([t.capEff, t.capPrm, t.capInh, t.capAmb]).toEqual([0n, 0n, 0n, 0n]);
  });

  it('a service without a user stays as machined (root, its capabilities)', () => {
    const c = readProcessCredentials(sup.get('networkd')!.pid!);
    expect(c.uid[0]).toBe(0);
    expect(c.capEff).toBe(before.effective);
  });

  it('an unknown capability is a failed start, said so, with nothing spawned', () => {
    const bad = sup.get('bad')!;
    expect(bad.state).toBe('Failed');
    expect(bad.pid).toBeUndefined();
    expect(bad.events.map((e) => e.message).join('\n')).toMatch(/unknown capability "CAP_NO_SUCH_THING"/);
  });

  it('leaves the supervising thread as it was: no inheritable or ambient capability, the same securebits', () => {
    expect(getCapabilities()).toEqual(before);
    const self = readProcessCredentials(process.pid);
    // vitest's worker runs this file on its main thread: the one that forked.
    expect(self.capAmb).toBe(0n);
    expect(self.capInh).toBe(before.inheritable);
    // A child spawned with a uid and no capabilities afterwards has none.
    expect(fs.readFileSync(`/proc/${process.pid}/status`, 'utf8')).toMatch(/^CapAmb:\s*0+$/m);
  });
});
