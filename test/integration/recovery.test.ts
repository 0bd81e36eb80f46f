// A configured node never opens its API (issue 50), between real processes: machined (host
// run) with apid and a META store in a file. A control plane's configuration is activated and
// META records the node as configured, with a recovery identity signed by the OS CA. The node
// then boots without its configuration: it does not enter maintenance mode. apid serves the
// recovery identity and requires client certificates: an insecure apply-config is refused,
// while the admin's client configuration reads machinestatus, sees the event, and applies a
// configuration that brings the node back.
import * as grpc from '@grpc/grpc-js';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { serviceClient } from '../../src/contract/protos.ts';
import { generateSecrets, type SecretsBundle } from '../../src/contract/secrets.ts';
import { META_CONFIGURED, META_RECOVERY, META_SIZE, readMeta } from '../../src/install/meta.ts';
import { readRecord } from '../../src/machined/recovery.ts';
import { bronzectl, bronzectlUntilOk } from '../lib/bronzectl.ts';
import { HostNode } from '../lib/nodes.ts';
import { freePort } from '../lib/ports.ts';

const ADDRESS = '127.0.0.32';
const Machine = serviceClient('machine.MachineService');

describe('a configured node without its configuration keeps its API authenticated', () => {
  let dir: string;
  let meta: string;
  let secrets: SecretsBundle;
  let controlplane: string;
  let admin: string;
  let node: HostNode | undefined;
  let port: number;

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-recovery-'));
    meta = path.join(dir, 'meta');
    fs.writeFileSync(meta, Buffer.alloc(META_SIZE));
    secrets = await generateSecrets();
    controlplane = generateConfigs({ clusterName: 'rec', endpoint: `https://${ADDRESS}:6443`, secrets }).controlplane;
    port = await freePort();
    admin = path.join(dir, 'admin.bronzeconfig');
    await save(admin, await newClientConfig({ contextName: 'rec', endpoints: [`${ADDRESS}:${port}`], ca: secrets.certs.os, roles: ['os:admin'], ttlMs: 3600_000 }));
  }, 60_000);
  afterAll(async () => {
    await node?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const start = (config?: string) =>
    new HostNode({ name: 'recovery', address: ADDRESS, apiPort: port, services: ['apid'], ...(config !== undefined ? { config } : {}), env: { BRONZE_META_FILE: meta } }).start();

  it('records the configured node and its recovery identity in META once a configuration is active', async () => {
    node = start(controlplane);
    await node.waitFor(/META: recovery identity issued by the OS CA/, 60_000);
    const rec = readRecord(readMeta(meta).values);
    expect(rec.configured).toBe(true);
    expect(rec.identity).toMatchObject({ type: 'controlplane', ca: secrets.certs.os.crt });
    expect(rec.identity!.names).toContain(ADDRESS);
    expect(readMeta(meta).values.get(META_RECOVERY)).not.toContain(secrets.certs.os.key.split('\n')[1]);
    await node.stop();
    node = undefined;
  }, 90_000);

  it('boots without its configuration: no maintenance mode, insecure apply-config refused, the admin still served', async () => {
    node = start();
    await node.waitFor(/configuration unavailable: no machine configuration on STATE .*META records that this node was configured/, 60_000);
    await node.waitFor(/configuration unavailable: the API serves the recovery identity in META/, 60_000);
    await node.waitFor(/serving the API on/, 60_000);
    expect(node.output.some((l) => /maintenance mode:|left maintenance mode/.test(l)), node.output.join('\n')).toBe(false);
    const endpoint = `${ADDRESS}:${port}`;

    // The admin's client configuration works (the recovery certificate names the node's address).
    const v = await bronzectlUntilOk(['version'], { config: admin, timeoutMs: 60_000 });
    expect(v.code, v.stderr).toBe(0);

    // What was open in maintenance mode is not: apply-config without credentials is refused.
    const file = path.join(dir, 'controlplane.yaml');
    fs.writeFileSync(file, controlplane);
    const insecure = await bronzectl(['apply-config', '--insecure', '-n', endpoint, '-f', file]);
    expect(insecure.code, insecure.stdout + insecure.stderr).not.toBe(0);
    expect(insecure.stderr).toMatch(/Unauthenticated desc = no client certificate was presented/);
    const raw = new Machine(endpoint, grpc.credentials.createSsl(null, null, null, { checkServerIdentity: () => undefined, rejectUnauthorized: false })) as unknown as grpc.Client & {
      ApplyConfiguration: (req: object, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null) => void) => void;
    };
    const err = await new Promise<grpc.ServiceError | null>((resolve) => raw.ApplyConfiguration({ data: Buffer.from(controlplane), mode: 'AUTO' }, new grpc.Metadata(), { deadline: Date.now() + 20_000 }, resolve));
    raw.close();
    expect(err?.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(fs.existsSync(path.join(node.dir, 'state', 'config.yaml')), 'nothing was applied').toBe(false);

    // The failure is reported: machinestatus and the event stream.
    const ms = await bronzectl(['get', 'machinestatus', '-o', 'json'], { config: admin });
    expect(ms.code, ms.stderr).toBe(0);
    const spec = JSON.parse(ms.stdout).spec;
    expect(spec.stage).toBe('booting');
    expect(spec.status.ready).toBe(false);
    expect(spec.status.unmetConditions.map((c: { name: string }) => c.name)).toEqual(['config', 'config']);
    expect(spec.status.unmetConditions[1].reason).toMatch(/bronzectl repair STATE/);
    const ev = await bronzectl(['events', '--tail', '-1'], { config: admin, timeoutMs: 8000 });
    expect(ev.stdout, ev.stderr).toMatch(/ConfigLoadErrorEvent.*no machine configuration on STATE/);

    // A reader may look but not apply.
    const reader = path.join(dir, 'reader.bronzeconfig');
    await save(reader, await newClientConfig({ contextName: 'rec', endpoints: [endpoint], ca: secrets.certs.os, roles: ['os:reader'], ttlMs: 3600_000 }));
    const denied = await bronzectl(['apply-config', '-f', file], { config: reader });
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toMatch(/PermissionDenied|permission|not allowed|denied/i);

    // The admin applies the configuration: the node is back, and META keeps its record.
    const ok = await bronzectl(['apply-config', '-f', file], { config: admin });
    expect(ok.code, ok.stderr).toBe(0);
    await node.waitFor(/configuration applied: the node has its configuration again/, 30_000);
    expect(fs.readFileSync(path.join(node.dir, 'state', 'config.yaml'), 'utf8')).toBe(controlplane);
    expect(readMeta(meta).values.has(META_CONFIGURED)).toBe(true);
  }, 180_000);
});
