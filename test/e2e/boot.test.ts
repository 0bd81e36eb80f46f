// End-to-end: boots the real image (the KSPP kernel and the initramfs) under QEMU/TCG and
// watches the serial console: machined as PID 1, the five daemons Running, a daemon killed
// with SIGKILL restarted, then the ACPI power button (QEMU `system_powerdown`) stopping every
// service in reverse dependency order and the VM powering itself off.
import { afterAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { SERVICE_GRAPH } from '../../src/machined/services.ts';
import { consoleFile } from '../lib/console-log.ts';
import { freePort } from '../lib/ports.ts';

const DAEMONS = SERVICE_GRAPH.map((s) => s.id);
const BOOT_TIMEOUT = 240_000;

describe('boot under QEMU', () => {
  let vm: QemuVM;
  afterAll(() => vm?.kill());

  it('boots, supervises, restarts a killed daemon and powers off in order', async () => {
    vm = new QemuVM({ apiPort: await freePort(), noReboot: true, append: 'bronze.debug.kill=timed' }, consoleFile('boot')).start();

    // machined is PID 1 (the kernel prefixes its kmsg lines with name[pid]).
    await vm.waitFor(/machined\[1\]: machined v\S+ \(\S+\) starting as PID 1 /, BOOT_TIMEOUT);
    await vm.waitFor(/machined\[1\]: mount \/sys\/fs\/cgroup \(cgroup2\)/, 30_000);
    await vm.waitFor(/machined\[1\]: hostname set to bronze-[0-9a-f]{6}/, 30_000);

    // All five daemons Running and healthy.
    for (const d of DAEMONS) await vm.waitFor(new RegExp(`machined\\[1\\]: service ${d}: Running: Health check successful`), BOOT_TIMEOUT);
    const allUp = await vm.waitFor(/machined\[1\]: all 6 services Running/, 60_000);
    // machined compiled its role from the code cache made at build time (same V8 flags).
    expect(vm.lines.filter((l) => /code cache was rejected/.test(l))).toEqual([]);
    // The roles that load koffi gave back their pages of the SEA blob (src/lib/sea-blob.ts),
    // networkd too, which machined starts before /proc is mounted.
    expect(vm.lines.filter((l) => /keeping the SEA blob's pages/.test(l))).toEqual([]);

    // SIGKILL timed; the supervisor notices, backs off and starts it again.
    const killLine = await vm.waitFor(/debug: sending SIGKILL to timed \(pid (\d+)\)/, 60_000, allUp);
    const oldPid = Number(/pid (\d+)/.exec(vm.lines[killLine]!)![1]);
    await vm.waitFor(/service timed: Waiting: Process killed by signal SIGKILL; restarting in \d+ms/, 30_000, killLine);
    const started = await vm.waitFor(/service timed: Running: Process started \(pid (\d+)\)/, 60_000, killLine);
    const newPid = Number(/pid (\d+)/.exec(vm.lines[started]!)![1]);
    expect(newPid).not.toBe(oldPid);
    await vm.waitFor(/service timed: Running: Health check successful/, 60_000, started);

    // Orderly shutdown from the ACPI power button.
    await vm.monitorCommand('system_powerdown');
    const pressed = await vm.waitFor(/machined\[1\]: power button pressed/, 60_000, started);
    await vm.waitFor(/machined\[1\]: all services stopped/, 60_000, pressed);
    const after = vm.lines.slice(pressed);
    const sigterm = (id: string) => after.findIndex((l) => l.includes(`service ${id}: Running: Stopping: sent SIGTERM`));
    const stopped = (id: string) => after.findIndex((l) => new RegExp(`service ${id}: Finished: Stopped`).test(l));
    for (const node of SERVICE_GRAPH) {
      expect(stopped(node.id), `${node.id} stopped`).toBeGreaterThan(0);
      // Every dependent is gone before its dependency is even asked to stop.
      for (const dep of node.dependsOn) expect(stopped(node.id), `${node.id} stops before ${dep} gets SIGTERM`).toBeLessThan(sigterm(dep));
      // And what a service must outlive (networkd outlives apid) is gone before it is asked to stop.
      for (const first of node.stopAfter ?? []) expect(stopped(first), `${first} stops before ${node.id} gets SIGTERM`).toBeLessThan(sigterm(node.id));
    }
    await vm.waitFor(/machined\[1\]: powering off/, 60_000, pressed);
    await vm.waitFor(/reboot: Power down/, 60_000, pressed);
    expect(await vm.waitExit(60_000)).toBe(0);
  });
});
