// NodeConfig.boot's decision (issue 50): a node never configured enters maintenance mode; a
// configured one whose configuration cannot be used reports it and gives apid its recovery
// identity, never the maintenance marker. Real NodeConfig, real certificates, files on disk.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { generateConfigs } from '../contract/genconfig.ts';
import { MAINTENANCE_MARKER } from '../contract/maintenance.ts';
import { generateSecrets, type SecretsBundle } from '../contract/secrets.ts';
import { META_CONFIGURED, META_RECOVERY } from '../install/meta.ts';
import { silentLogger } from '../lib/log.ts';
import { MemoryState } from '../state/memory.ts';
import { validateMachineConfig } from './config/validation.ts';
import { CONFIG_FILE } from './config/manager.ts';
import { MachineStatusReporter } from './machine-status.ts';
import { NodeConfig } from './node-config.ts';
import { memoryRecordStore, readRecord } from './recovery.ts';
import type { VolumeStatusSpec } from './volume-status.ts';

const FAILED_STATE: VolumeStatusSpec = { phase: 'failed', type: 'partition', location: '/dev/vda5', errorMessage: 'mount STATE (/dev/vda5) at /system/state (xfs): EUCLEAN', mountSpec: { targetPath: '/system/state' } };

describe('NodeConfig at boot: open only when never configured', () => {
  let secrets: SecretsBundle;
  let cp: string;
  const dirs: string[] = [];
  const nodes: NodeConfig[] = [];

  beforeAll(async () => {
    secrets = await generateSecrets();
    cp = generateConfigs({ clusterName: 'b', endpoint: 'https://10.0.0.1:6443', secrets, additionalSANs: ['127.0.0.1'] }).controlplane;
  });
  afterEach(() => {
    for (const n of nodes.splice(0)) n.stop();
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
  });

  function node(o: { meta?: ReturnType<typeof memoryRecordStore>; stored?: string; stateVolume?: VolumeStatusSpec } = {}) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'node-config-'));
    dirs.push(dir);
    const stateDir = path.join(dir, 'state');
    fs.mkdirSync(stateDir);
    if (o.stored !== undefined) fs.writeFileSync(path.join(stateDir, CONFIG_FILE), o.stored);
    const state = new MemoryState();
    const status = new MachineStatusReporter(state);
    const events: Array<{ type: string; error: string }> = [];
    const nc = new NodeConfig({
      state,
      log: silentLogger,
      secretsDir: path.join(dir, 'secrets'),
      stateDir,
      validate: validateMachineConfig,
      reboot: () => {},
      extraAddresses: () => [],
      certTtlMs: 3600_000,
      certCheckMs: 3600_000,
      trustdPort: 50001,
      status,
      stateVolume: () => o.stateVolume,
      meta: o.meta ? () => o.meta : undefined,
      event: (type, error) => events.push({ type, error }),
    });
    nodes.push(nc);
    const apid = (f: string) => path.join(dir, 'secrets', 'apid', f);
    return { nc, status, events, apid };
  }

  it('a blank node (no META record, nothing on STATE) enters maintenance mode', async () => {
    const n = node({ meta: memoryRecordStore() });
    await n.nc.boot(new Map());
    expect(fs.existsSync(n.apid(MAINTENANCE_MARKER))).toBe(true);
    expect(n.status.stage).toBe('maintenance');
    expect(n.nc.locked).toBeUndefined();
  });

  it('records an activated configuration in META, then a later boot without it stays authenticated, with the recovery identity', async () => {
    const meta = memoryRecordStore();
    const first = node({ meta, stored: cp });
    await first.nc.boot(new Map());
    expect(first.nc.identity?.type).toBe('controlplane');
    await first.nc.recovery.settled();
    // ApiCertificates' first issue calls the recorder; wait for it to land.
    for (let i = 0; i < 100 && !meta.values.has(META_RECOVERY); i++) await new Promise((r) => setTimeout(r, 50));
    await first.nc.recovery.settled();
    expect(meta.values.has(META_CONFIGURED)).toBe(true);
    const rec = readRecord(meta.values);
    expect(rec.identity?.type).toBe('controlplane');

    // STATE empty while META says configured (and a kernel argument is not an open door either).
    const second = node({ meta });
    await second.nc.boot(new Map([['bronze.config.inline', '']]));
    expect(fs.existsSync(second.apid(MAINTENANCE_MARKER)), 'no maintenance mode').toBe(false);
    expect(fs.readFileSync(second.apid('server.crt'), 'utf8')).toBe(rec.identity!.crt);
    expect(fs.readFileSync(second.apid('ca.crt'), 'utf8')).toBe(secrets.certs.os.crt);
    expect(second.nc.identity).toBeUndefined();
    expect(second.status.stage).toBe('booting');
    const conditions = second.status.unmet.filter((c) => c.name === 'config').map((c) => c.reason);
    expect(conditions[0]).toMatch(/no machine configuration on STATE .*META records that this node was configured/);
    expect(conditions[1]).toMatch(/the API serves the recovery identity in META .*client certificates signed by the OS CA.*bronzectl repair STATE/);
    expect(second.events).toEqual([{ type: 'machine.ConfigLoadErrorEvent', error: conditions[0] }]);
  });

  it('STATE that failed to mount on a configured node: reported, the kernel arguments are not read, no maintenance mode', async () => {
    const meta = memoryRecordStore({ [META_CONFIGURED]: '2025-01-01T00:00:00.000Z' });
    const n = node({ meta, stateVolume: FAILED_STATE });
    const inline = Buffer.from(cp).toString('base64');
    await n.nc.boot(new Map([['bronze.config.inline', inline]]));
    expect(n.nc.identity, 'the kernel argument was not taken').toBeUndefined();
    expect(fs.existsSync(n.apid(MAINTENANCE_MARKER))).toBe(false);
    // No recovery identity recorded (a disk of an older Bronze): nothing is served, and it says so.
    expect(fs.existsSync(n.apid('server.crt'))).toBe(false);
    const reasons = n.status.unmet.filter((c) => c.name === 'config').map((c) => c.reason);
    expect(reasons[0]).toMatch(/cannot be read: STATE \(\/dev\/vda5\) cannot be mounted/);
    expect(reasons[1]).toMatch(/the API serves nothing: no recovery identity/);
  });

  it('a stored configuration that fails validation: reported with its errors and an event; a control plane signs with its CA for this boot', async () => {
    const broken = cp.replace(/^machine:\n/m, 'machine:\n  notAField: 1\n');
    const n = node({ meta: memoryRecordStore(), stored: broken });
    await n.nc.boot(new Map());
    expect(fs.existsSync(n.apid(MAINTENANCE_MARKER))).toBe(false);
    const crt = new crypto.X509Certificate(fs.readFileSync(n.apid('server.crt')));
    expect(crt.checkIssued(new crypto.X509Certificate(secrets.certs.os.crt))).toBe(true);
    expect(n.events[0]).toMatchObject({ type: 'machine.ConfigLoadErrorEvent', error: expect.stringMatching(/invalid configuration from STATE .*notAField/) });
    // An authenticated apply of a valid configuration brings the node back.
    await n.nc.applyConfiguration({ data: Buffer.from(cp), mode: 'NO_REBOOT' });
    expect(n.nc.identity?.type).toBe('controlplane');
    expect(n.nc.locked).toBeUndefined();
    expect(n.status.unmet.filter((c) => c.name === 'config')).toEqual([]);
  });

  it('without META (ISO, PXE) an invalid configuration from the kernel arguments still opens maintenance mode, as before', async () => {
    const n = node({});
    await n.nc.boot(new Map([['bronze.config.inline', Buffer.from('version: v1alpha1\nmachine: {type: nope}\n').toString('base64')]]));
    expect(fs.existsSync(n.apid(MAINTENANCE_MARKER))).toBe(true);
  });
});
