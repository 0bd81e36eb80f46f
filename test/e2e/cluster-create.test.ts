// End-to-end: `bronzectl cluster create --controlplanes 3 --workers 1 --wait` boots four QEMU
// nodes (512 MiB each) on a bridge in the cluster's own network namespace, applies their
// configurations, bootstraps etcd and waits for health. Then: etcd has 3 members and every node
// is a Member (4), etcd's data is on EPHEMERAL and a second bootstrap is refused; with one
// control plane's VM killed (power pulled), health names it, etcd still answers and a reboot of
// either other control plane is refused for quorum; `cluster destroy` leaves no VM, no
// namespace, no file and no context behind. (What happens before the bootstrap, etcd waiting in
// Preparing, is test/integration/etcd-cluster.test.ts's.)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterState } from '../../src/provision/state.ts';
import { bronzectl, until, type CliResult } from '../lib/bronzectl.ts';

const NAME = `e2e-${process.pid}`;
const rows = (out: string) =>
  out
    .trim()
    .split('\n')
    .slice(1)
    .filter(Boolean);

/** QEMU processes whose command line names this cluster's state directory. */
function qemuOf(stateDir: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        return fs.readFileSync(`/proc/${p}/cmdline`, 'utf8').includes(stateDir) && fs.readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('qemu');
      } catch {
        return false;
      }
    })
    .map(Number);
}

describe('bronzectl cluster create: 3 control planes and a worker', () => {
  let dir: string;
  let stateDir: string;
  let config: string;
  let create: CliResult;
  let state: ClusterState;
  const cli = (args: string[], timeoutMs = 60_000) => bronzectl(args, { config, timeoutMs });

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-cluster-e2e-'));
    stateDir = path.join(dir, 'clusters');
    config = path.join(dir, 'bronzeconfig');
    // One vCPU each: four VMs share the machine's cores.
    create = await cli(['cluster', 'create', '--name', NAME, '--state', stateDir, '--controlplanes', '3', '--workers', '1', '--cpus', '1', '--wait-timeout', '12m'], 900_000);
    if (fs.existsSync(path.join(stateDir, NAME, 'state.json'))) state = JSON.parse(fs.readFileSync(path.join(stateDir, NAME, 'state.json'), 'utf8'));
  }, 960_000);

  afterAll(async () => {
    if (state) await cli(['cluster', 'destroy', '--name', NAME, '--state', stateDir]);
    fs.rmSync(dir, { recursive: true, force: true });
  }, 120_000);

  it('creates the cluster, reporting its steps, and health passes before it returns', () => {
    expect(create.stderr).toBe('');
    expect(create.code).toBe(0);
    for (const step of ['generating PKI and tokens', `creating network bronze-${NAME}`, `creating node ${NAME}-controlplane-3`, `creating node ${NAME}-worker-1`, `bootstrapping cluster on ${NAME}-controlplane-1`]) {
      expect(create.stdout).toContain(step);
    }
    expect(create.stdout).toContain('waiting for all nodes\' services to be running and healthy: OK');
    expect(create.stdout).toMatch(new RegExp(`${NAME}-worker-1\\s+worker\\s+10\\.5\\.0\\.5\\s+127\\.0\\.0\\.1:\\d+\\s+1\\s+512 MiB\\s+running`));
    expect(state.nodes).toHaveLength(4);
    // The context is merged and current, with the control planes' forwarded APIs as endpoints.
    const cfg = YAML.parse(fs.readFileSync(config, 'utf8'));
    expect(cfg.context).toBe(NAME);
    expect(cfg.contexts[NAME].endpoints).toEqual(state.nodes.filter((n) => n.type === 'controlplane').map((n) => `127.0.0.1:${n.apiPort}`));
    expect(cfg.contexts[NAME].nodes).toEqual(['10.5.0.2']);
  });

  it('the network is a bridge in its own namespace, and nothing of it is in the host\'s', () => {
    expect(fs.existsSync(`/run/netns/bronze-${NAME}`)).toBe(true);
    for (const n of state.nodes) expect(fs.existsSync(`/sys/class/net/${n.tap}`), n.tap).toBe(false);
  });

  it('etcd members shows the 3 control planes; get members shows all 4 nodes; etcd is on EPHEMERAL; a second bootstrap is refused', async () => {
    const voters = (r: CliResult) => r.code === 0 && rows(r.stdout).length === 3 && rows(r.stdout).every((l) => /\sfalse$/.test(l));
    const m = await until('three voting members', () => cli(['etcd', 'members']), voters, 120_000);
    for (const n of state.nodes.filter((x) => x.type === 'controlplane')) expect(m.stdout).toContain(`https://${n.ip}:2380`);
    const all = (r: CliResult) => r.code === 0 && state.nodes.every((n) => r.stdout.includes(n.name));
    const g = await until('four members', () => cli(['get', 'members']), all, 60_000);
    expect(rows(g.stdout)).toHaveLength(4);
    expect(g.stdout).toMatch(new RegExp(`${NAME}-worker-1\\s.*worker`));
    // etcd keeps its data on EPHEMERAL; a second bootstrap, on any control plane, is refused.
    const logs = await cli(['-n', '10.5.0.2', 'logs', 'etcd']);
    expect(logs.stdout).toMatch(/data dir = \/var\/lib\/etcd/);
    for (const ip of ['10.5.0.2', '10.5.0.3']) {
      const again = await cli(['-n', ip, 'bootstrap']);
      expect(again.code, ip).toBe(1);
      expect(again.stderr, ip).toMatch(/etcd data directory is not empty|bootstrapped already/);
    }
  }, 200_000);

  it('apid, trustd, timed and etcd run under their own users, with only their capabilities (read /proc/<pid>/status)', async () => {
    const ps = await cli(['-n', '10.5.0.2', 'processes']);
    expect(ps.code, ps.stderr).toBe(0);
    // COMMAND is the last column: the daemons' argv[0] (their role), etcd's path and flags.
    const pidOf = (re: RegExp) => rows(ps.stdout).filter((l) => re.test(l)).map((l) => Number(/^\s*\S+\s+(\d+)\s/.exec(l)?.[1]));
    const want: Record<string, { re: RegExp; uid: number; capEff: string }> = {
      apid: { re: /\sapid\s*$/, uid: 50, capEff: '0000000000000000' },
      trustd: { re: /\strustd\s*$/, uid: 51, capEff: '0000000000000000' },
      timed: { re: /\stimed\s*$/, uid: 52, capEff: '0000000002000000' }, // CAP_SYS_TIME alone
      etcd: { re: /\s\/usr\/sbin\/etcd\s/, uid: 60, capEff: '0000000000000000' },
    };
    for (const [name, w] of Object.entries(want)) {
      const pids = pidOf(w.re);
      expect(pids, `${name} in\n${ps.stdout}`).toHaveLength(1);
      const st = await cli(['-n', '10.5.0.2', 'read', `/proc/${pids[0]}/status`]);
      expect(st.code, st.stderr).toBe(0);
      expect(st.stdout, name).toMatch(new RegExp(`^Uid:\\s+${w.uid}\\s+${w.uid}\\s+${w.uid}\\s+${w.uid}$`, 'm'));
      expect(st.stdout, name).toMatch(new RegExp(`^Gid:\\s+${w.uid}\\s+${w.uid}\\s+${w.uid}\\s+${w.uid}$`, 'm'));
      expect(st.stdout, name).toMatch(new RegExp(`^CapEff:\\s+${w.capEff}$`, 'm'));
      expect(st.stdout, name).toMatch(new RegExp(`^CapPrm:\\s+${w.capEff}$`, 'm'));
    }
  }, 120_000);

  it('cluster show lists the nodes and that they run', async () => {
    const s = await cli(['cluster', 'show', '--name', NAME, '--state', stateDir]);
    expect(s.code).toBe(0);
    expect(s.stdout).toContain(`NETWORK NAMESPACE   bronze-${NAME}`);
    expect(s.stdout.match(/\srunning$/gm)).toHaveLength(4);
  });

  it('with one control plane powered off, health names it, etcd still answers, and a reboot of another is refused for quorum', async () => {
    const cp3 = state.nodes.find((n) => n.name === `${NAME}-controlplane-3`)!;
    process.kill(cp3.pid!, 'SIGKILL');
    const h = await cli(['health', '--wait-timeout', '40s'], 120_000);
    expect(h.code).toBe(1);
    expect(h.stdout + h.stderr).toContain(cp3.ip);
    const m = await cli(['etcd', 'members']);
    expect(m.code, m.stderr).toBe(0);
    expect(rows(m.stdout)).toHaveLength(3);
    const st = await cli(['-n', '10.5.0.2,10.5.0.3', 'etcd', 'status']);
    expect(st.code, st.stderr).toBe(0);
    // With one voter down, a reboot of either other control plane would lose quorum: refused.
    for (const ip of ['10.5.0.2', '10.5.0.3']) {
      const r = await cli(['-n', ip, 'reboot']);
      expect(r.code, ip).toBe(1);
      expect(r.stderr, ip).toMatch(/reboot would break etcd quorum: 1 of the other 2 voting members are healthy, 2 of 3 must stay up; not healthy: /);
    }
    const show = await cli(['cluster', 'show', '--name', NAME, '--state', stateDir]);
    expect(show.stdout).toMatch(new RegExp(`${cp3.name}\\s.*stopped`));
  }, 200_000);

  it('cluster destroy leaves no VM, no namespace, no file and no context behind', async () => {
    const d = await cli(['cluster', 'destroy', '--name', NAME, '--state', stateDir], 120_000);
    expect(d.stderr).toBe('');
    expect(d.code).toBe(0);
    expect(qemuOf(stateDir)).toEqual([]);
    expect(fs.existsSync(`/run/netns/bronze-${NAME}`)).toBe(false);
    expect(fs.existsSync(path.join(stateDir, NAME))).toBe(false);
    expect(YAML.parse(fs.readFileSync(config, 'utf8')).contexts[NAME]).toBeUndefined();
    const again = await cli(['cluster', 'destroy', '--name', NAME, '--state', stateDir]);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain(`no cluster "${NAME}"`);
    state = undefined as unknown as ClusterState;
  }, 150_000);
});
