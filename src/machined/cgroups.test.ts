import { describe, expect, it } from 'vitest';
import { SERVICE_GRAPH } from './service-graph.ts';
import {
  CGROUP_CONTAINERS,
  CGROUP_LAYOUT,
  SERVICE_CGROUPS,
  cgroupSettings,
  killCgroups,
  cpuWeight,
  memoryCgroupFs,
  servicePlacement,
  setupCgroups,
} from './cgroups.ts';

const MiB = 1024 * 1024;
const quiet = { info: () => {}, warn: () => {} };

describe('cgroup layout', () => {
  it('has every group once, parents before children', () => {
    const seen = new Set<string>();
    for (const g of CGROUP_LAYOUT) {
      expect(seen.has(g.path)).toBe(false);
      const parent = g.path.slice(0, g.path.lastIndexOf('/')) || '/';
      if (parent !== '/') expect(seen.has(parent), `${parent} before ${g.path}`).toBe(true);
      seen.add(g.path);
    }
  });

  it('places every supervised service, and only in groups of the layout, outside the containers', () => {
    const paths = new Set(CGROUP_LAYOUT.map((g) => g.path));
    for (const node of SERVICE_GRAPH) expect(SERVICE_CGROUPS[node.id], node.id).toBeDefined();
    for (const id of ['containerd', 'etcd']) expect(SERVICE_CGROUPS[id]).toBeDefined();
    for (const [id, p] of Object.entries(SERVICE_CGROUPS)) {
      expect(paths.has(p.cgroup), id).toBe(true);
      expect(p.cgroup.startsWith(CGROUP_CONTAINERS)).toBe(false);
    }
  });

  it("keeps Talos's paths and protections for machined, apid and containerd", () => {
    const g = (p: string) => CGROUP_LAYOUT.find((x) => x.path === p)!;
    expect(SERVICE_CGROUPS.containerd).toEqual({ cgroup: '/system/runtime', oomScoreAdj: -999 });
    expect(SERVICE_CGROUPS.apid?.cgroup).toBe('/system/apid');
    expect(g('/init').memoryMin).toBe(96 * MiB);
    expect(g('/system').memoryMin).toBe(96 * MiB);
    expect(g('/system/apid').memoryMin).toBe(16 * MiB);
    expect(g('/system/runtime').memoryMin).toBe(48 * MiB);
    // children's hard protections fit in their parent's
    const sum = CGROUP_LAYOUT.filter((x) => /^\/system\/[^/]+$/.test(x.path)).reduce((a, x) => a + (x.memoryMin ?? 0), 0);
    expect(sum).toBeLessThanOrEqual(g('/system').memoryMin!);
  });

  it("turns millicores into Talos's cpu.weight, capped at the cores", () => {
    expect(cpuWeight(2000, 2)).toBe(79);
    expect(cpuWeight(1500, 2)).toBe(59);
    expect(cpuWeight(500, 2)).toBe(20);
    expect(cpuWeight(4000, 2)).toBe(79); // only two cores
    expect(cpuWeight(1000, 2)).toBeLessThan(cpuWeight(1500, 2)); // containers below the services
  });

  it('writes memory.low as twice memory.min unless given', () => {
    expect(cgroupSettings({ path: '/x', memoryMin: 8, memoryMax: 100, swapMax: 0, cpuMillicores: 250, purpose: '' }, 2)).toEqual([
      ['memory.min', '8'],
      ['memory.low', '16'],
      ['memory.max', '100'],
      ['memory.swap.max', '0'],
      ['cpu.weight', '10'],
    ]);
    expect(cgroupSettings({ path: '/x', memoryLow: 5, pidsMax: 7, purpose: '' }, 2)).toEqual([
      ['memory.low', '5'],
      ['pids.max', '7'],
    ]);
  });

  it("puts the containers' parent where the runtime puts each container's own group", () => {
    expect(CGROUP_CONTAINERS).toBe('/taloscontainers');
    expect(CGROUP_LAYOUT.some((g) => g.path === CGROUP_CONTAINERS)).toBe(true);
  });
});

describe('setupCgroups', () => {
  it('enables the controllers down the tree, writes each group, and moves machined into /init', () => {
    const cg = memoryCgroupFs();
    const problems = setupCgroups({ fs: cg, log: quiet, selfPid: 1, cores: 2, memoryBytes: 4 * 1024 * MiB });
    expect(problems).toEqual([]);
    expect(cg.files.get('/cgroup.subtree_control')).toBe('+cpu +memory +pids +io\n');
    expect(cg.files.get('/system/cgroup.subtree_control')).toBe('+cpu +memory +pids +io\n');
    expect(cg.files.get('/podruntime/cgroup.subtree_control')).toBe('+cpu +memory +pids +io\n');
    expect(cg.files.get('/init/cgroup.subtree_control')).toBe(''); // a leaf: machined lives there
    expect(cg.files.get('/init/cgroup.procs')).toBe('1\n');
    expect(cg.files.get('/init/memory.min')).toBe(String(96 * MiB));
    expect(cg.files.get('/init/memory.low')).toBe(String(192 * MiB));
    expect(cg.files.get('/system/runtime/memory.min')).toBe(String(48 * MiB));
    expect(cg.files.get('/system/apid/memory.max')).toBe(String(256 * MiB));
    expect(cg.files.get('/taloscontainers/pids.max')).toBe('16384');
  });

  it('reserves memory softly only on a machine under 2 GiB (a 512 MiB node)', () => {
    const cg = memoryCgroupFs();
    expect(setupCgroups({ fs: cg, log: quiet, selfPid: 1, cores: 2, memoryBytes: 512 * MiB })).toEqual([]);
    expect(cg.files.get('/init/memory.min') || '0').toBe('0');
    expect(cg.files.get('/system/runtime/memory.min') || '0').toBe('0');
    expect(cg.files.get('/init/memory.low')).toBe(String(192 * MiB));
    expect(cg.files.get('/system/runtime/memory.low')).toBe(String(96 * MiB));
  });

  it('enables only what the kernel has, and says what it lacks', () => {
    const cg = memoryCgroupFs('cpu memory');
    const warned: string[] = [];
    const problems = setupCgroups({ fs: cg, log: { info: () => {}, warn: (m) => warned.push(m) }, cores: 2 });
    expect(cg.files.get('/cgroup.subtree_control')).toBe('+cpu +memory\n');
    expect(problems).toEqual(['controllers: the kernel lacks pids, io']);
    expect(warned).toHaveLength(1);
  });

  it('skips memory.swap.max where the kernel has no swap accounting', () => {
    const cg = memoryCgroupFs();
    const write = cg.write;
    cg.write = (g, f, v) => {
      if (f === 'memory.swap.max') throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
      write(g, f, v);
    };
    expect(setupCgroups({ fs: cg, log: quiet, cores: 2 })).toEqual([]);
  });

  it('reports, and does not throw, when cgroup2 is not mounted', () => {
    const cg = memoryCgroupFs();
    cg.files.delete('/cgroup.controllers');
    expect(setupCgroups({ fs: cg, log: quiet })[0]).toMatch(/is cgroup2 mounted/);
  });
});

describe('servicePlacement', () => {
  it("moves a service's process into its group with its OOM score", () => {
    const cg = memoryCgroupFs();
    setupCgroups({ fs: cg, log: quiet, cores: 2 });
    const scores: Array<[number, number]> = [];
    const place = servicePlacement({ fs: cg, log: quiet, oomScore: (pid, s) => void scores.push([pid, s]) });
    place(42, 'containerd');
    place(43, 'timed');
    place(44, 'not-a-service');
    expect(cg.files.get('/system/runtime/cgroup.procs')).toBe('42\n');
    expect(cg.files.get('/system/timed/cgroup.procs')).toBe('43\n');
    expect(scores).toEqual([[42, -999]]);
  });

  it('is quiet about a process that is gone already', () => {
    const cg = memoryCgroupFs();
    cg.write = () => {
      throw Object.assign(new Error('ESRCH'), { code: 'ESRCH' });
    };
    const warned: string[] = [];
    const place = servicePlacement({ fs: cg, log: { info: () => {}, warn: (m) => warned.push(m) }, oomScore: () => {
      throw Object.assign(new Error('ENOENT'), { code: 'ENOENT' });
    } });
    place(1234, 'apid');
    expect(warned).toEqual([]);
  });
});

describe('killCgroups (shutdown)', () => {
  it('kills what is left in the containers, then the system groups, and skips empty or missing ones', async () => {
    const cg = memoryCgroupFs();
    setupCgroups({ fs: cg, log: quiet, cores: 2 });
    cg.files.set('/taloscontainers/cgroup.events', 'populated 1\nfrozen 0\n');
    cg.files.set('/system/cgroup.events', 'populated 1\nfrozen 0\n');
    cg.files.set('/podruntime/cgroup.events', 'populated 0\nfrozen 0\n');
    const logged: string[] = [];
    await killCgroups({ fs: cg, log: { info: (m) => logged.push(m), warn: (m) => logged.push(m) }, waitMs: 100 });
    expect(cg.files.get('/taloscontainers/cgroup.kill')).toBe('1');
    expect(cg.files.get('/system/cgroup.kill')).toBe('1');
    expect(cg.files.get('/podruntime/cgroup.kill')).toBe('');
    expect(logged).toEqual(['cgroups: killed what was left in /taloscontainers', 'cgroups: killed what was left in /system']);
    await killCgroups({ fs: memoryCgroupFs(), log: quiet, groups: ['/nothing'] }); // no such group: nothing to do
  });
});
