// META and the dependency graph through the real bronzectl, a real apid (mTLS, RBAC) and a real
// machined on this host, with META in a file (BRONZE_META_FILE): `meta write` and `meta delete`
// of a user key (Talos's 12, Bronze's user.1) land in META, keys Bronze manages or does not use
// are refused with the reason, and only the admin may write; `inspect dependencies` draws the
// controllers' and daemons' graph for a reader, `--with-resources` the node's live resources.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { generateSecrets } from '../../src/contract/secrets.ts';
import { META_SIZE, readMeta, writeMeta } from '../../src/install/meta.ts';
import { bronzectl } from '../lib/bronzectl.ts';
import { HostNode } from '../lib/nodes.ts';
import { freePort } from '../lib/ports.ts';

describe('meta write|delete and inspect dependencies through bronzectl, apid and machined', () => {
  let node: HostNode;
  let dir: string;
  let meta: string;
  const config: Record<'admin' | 'reader', string> = { admin: '', reader: '' };

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-meta-it-'));
    meta = path.join(dir, 'meta');
    fs.writeFileSync(meta, Buffer.alloc(META_SIZE));
    writeMeta(meta, { 'upgrade.state': 'committed' });
    const secrets = await generateSecrets();
    const cfg = generateConfigs({ clusterName: 'mi', endpoint: 'https://127.0.0.51:6443', secrets });
    node = new HostNode({ name: 'mi', address: '127.0.0.51', apiPort: await freePort(), config: cfg.controlplane, services: ['apid'], env: { BRONZE_META_FILE: meta } }).start();
    await node.waitFor(/serving the API on/, 60_000);
    for (const role of ['admin', 'reader'] as const) {
      config[role] = path.join(dir, `${role}.bronzeconfig`);
      await save(config[role], await newClientConfig({ contextName: 'mi', endpoints: [node.endpoint], ca: secrets.certs.os, roles: [`os:${role}`], ttlMs: 3600_000 }));
    }
  }, 90_000);

  afterAll(async () => {
    await node?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  // What the test wrote and the user keys (machined records its configuration in META too).
  const values = () => Object.fromEntries([...readMeta(meta).values].filter(([k]) => k === 'upgrade.state' || k.startsWith('user.')));

  it('writes and deletes a user key; refuses managed and unused keys, and a reader', async () => {
    const w = await bronzectl(['meta', 'write', '0xc', 'rack 7'], { config: config.admin });
    expect(w.stderr).toBe('');
    expect(w.code).toBe(0);
    expect(values()).toEqual({ 'upgrade.state': 'committed', 'user.1': 'rack 7' });

    const managed = await bronzectl(['meta', 'write', '6', 'x'], { config: config.admin });
    expect(managed.code).not.toBe(0);
    expect(managed.stderr).toMatch(/META key 6 \(Upgrade\) is managed by Bronze/);
    const unused = await bronzectl(['meta', 'write', '10', '{}'], { config: config.admin });
    expect(unused.code).not.toBe(0);
    expect(unused.stderr).toMatch(/Bronze does not use META key 10 \(MetalNetworkPlatformConfig\)/);
    const reader = await bronzectl(['meta', 'delete', '12'], { config: config.reader });
    expect(reader.code).not.toBe(0);
    expect(reader.stderr).toMatch(/requires one of os:admin/);
    expect(values()).toEqual({ 'upgrade.state': 'committed', 'user.1': 'rack 7' });

    const d = await bronzectl(['meta', 'delete', '12'], { config: config.admin });
    expect(d.code, d.stderr).toBe(0);
    expect(values()).toEqual({ 'upgrade.state': 'committed' });
    const again = await bronzectl(['meta', 'delete', '12'], { config: config.admin });
    expect(again.code).not.toBe(0);
    expect(again.stderr).toMatch(/meta key not found/);
  }, 60_000);

  it('draws the dependency graph for a reader, and the live resources with --with-resources', async () => {
    const g = await bronzectl(['inspect', 'dependencies'], { config: config.reader });
    expect(g.code, g.stderr).toBe(0);
    expect(g.stdout).toMatch(/^digraph {2}\{\n/);
    expect(g.stdout).toMatch(/label="ServiceController",shape="box"/);
    expect(g.stdout).toMatch(/label="networkd",shape="box"/);
    expect(g.stdout).toMatch(/label="Services\.v1alpha1\.talos\.dev",shape="note"/);
    const live = await bronzectl(['inspect', 'dependencies', '--with-resources'], { config: config.admin });
    expect(live.code, live.stderr).toBe(0);
    expect(live.stdout).toContain('label="runtime/Services.v1alpha1.talos.dev/apid"');
    expect(live.stdout).toMatch(/subgraph cluster_s\d+ \{/);
  }, 60_000);
});
