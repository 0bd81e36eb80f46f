// `bronzectl upgrade --wait`: after the node said it reboots into the new image, follows it as
// talosctl's --wait does: "waiting for node reboot" (until its API stops answering), then "waiting
// for node to be ready" (until its boot status says the upgrade was committed: machined commits
// the new slot only once every service, etcd included on a control plane, is Running and
// healthy), then, on a control plane that is an etcd member, "waiting for etcd to be healthy"
// (EtcdStatus from that node with no member errors). A failed upgrade (GRUB or machined fell back to the old slot) or
// the --timeout passing is an error naming what it saw last.
import YAML from 'yaml';
import type { CallOptions, Client } from '../../client/index.ts';
import { BOOT_STATUS_ID, BOOT_STATUS_TYPE, type BootStatusSpec } from '../../contract/resources/boot-status.ts';

// What commands get from `load('upgrade')` (lazy.ts): named here, not in lazy.ts, so that lazy.ts
// names no command file (the commands import it: that would be an import circle).
declare module '../lazy.ts' {
  interface LazyModules {
    upgrade: {
      clientDeps: typeof clientDeps;
      waitForUpgrade: typeof waitForUpgrade;
    };
  }
}

/** What the wait needs of the client: a node's boot status, services and etcd status. */
export interface UpgradeWaitDeps {
  bootStatus(o: CallOptions): Promise<BootStatusSpec>;
  /** The node's etcd service state ('Running', 'Preparing', ...), undefined when it has none or skips it. */
  etcdState(o: CallOptions): Promise<string | undefined>;
  etcdErrors(o: CallOptions): Promise<string[]>;
  /** Options for one call to the node, with this deadline. */
  options(deadlineMs: number): CallOptions;
  out(line: string): void;
  sleep(ms: number): Promise<void>;
  now(): number;
}

export const POLL_MS = 2000;
/** A node that still answers this long after it said it reboots did not reboot. */
export const DOWN_WITHIN_MS = 5 * 60_000;
const CALL_MS = 5000;

export function clientDeps(client: Client, base: CallOptions, out: (line: string) => void): UpgradeWaitDeps {
  return {
    bootStatus: async (o) => (YAML.parse((await client.state.get('runtime', BOOT_STATUS_TYPE, BOOT_STATUS_ID, o)).spec?.yaml_spec ?? '') ?? {}) as BootStatusSpec,
    etcdState: async (o) => {
      const r = await client.machine.ServiceList({}, o);
      const svc = r.messages[0]?.services?.find((x) => x.id === 'etcd');
      return svc && svc.state !== 'Skipped' ? svc.state : undefined;
    },
    etcdErrors: async (o) => {
      const r = await client.machine.EtcdStatus({}, o);
      const m = r.messages[0];
      if (m?.metadata?.error) return [m.metadata.error];
      return m?.member_status?.errors ?? [];
    },
    options: (deadlineMs) => ({ ...base, deadline: Date.now() + deadlineMs }),
    out,
    sleep: (ms) => new Promise((r) => setTimeout(r, ms)),
    now: () => Date.now(),
  };
}

const message = (e: unknown) => (e as Error).message;

/** Waits for `node` to come back on the new slot, committed and healthy; throws with the reason otherwise. */
export async function waitForUpgrade(d: UpgradeWaitDeps, node: string, timeoutMs: number): Promise<void> {
  const deadline = d.now() + timeoutMs;
  const step = async <T>(what: string, limitMs: number, attempt: () => Promise<T | undefined>): Promise<T> => {
    d.out(`waiting for ${what}...`);
    const until = Math.min(deadline, d.now() + limitMs);
    let last = '';
    for (;;) {
      let r: T | undefined;
      try {
        r = await attempt();
      } catch (e) {
        last = message(e);
      }
      if (r !== undefined) return r;
      if (d.now() >= until) throw new Error(`${node}: timed out waiting for ${what}${last ? ` (last: ${last})` : ''}`);
      await d.sleep(POLL_MS);
    }
  };

  await step('node reboot', DOWN_WITHIN_MS, async () => {
    try {
      await d.bootStatus(d.options(CALL_MS));
    } catch {
      return true; // its API went away: it is rebooting
    }
    return undefined;
  });
  d.out(`${node}: rebooted`);

  const boot = await step('node to be ready', Infinity, async () => {
    const b = await d.bootStatus(d.options(CALL_MS));
    const state = b.upgrade?.state;
    if (state === 'committed' || state === 'failed') return b;
    throw new Error(`upgrade ${state ?? 'unknown'}${b.booted ? ` on slot ${b.booted}` : ''}`);
  });
  if (boot.upgrade?.state === 'failed') {
    throw new Error(`${node}: the upgrade failed, the node is back on slot ${boot.booted} (${boot.last ?? 'see bronzectl get bootstatus'})`);
  }
  d.out(`${node}: upgraded to ${boot.version} (slot ${boot.booted})`);

  // etcd Running is a member's: it must be healthy again. A control plane whose etcd still waits
  // for `bronzectl bootstrap` (Preparing) has no cluster to be healthy in.
  const etcd = await d.etcdState(d.options(CALL_MS));
  if (etcd && etcd !== 'Running') d.out(`${node}: etcd is ${etcd} (not bootstrapped or joined yet): not waiting for it`);
  if (etcd === 'Running') {
    await step('etcd to be healthy', Infinity, async () => {
      const errors = await d.etcdErrors(d.options(CALL_MS));
      if (errors.length) throw new Error(errors.join(', '));
      return true;
    });
    d.out(`${node}: etcd is healthy`);
  }
}
