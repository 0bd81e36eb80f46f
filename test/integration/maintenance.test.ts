// Maintenance mode between real processes: a node without configuration serves its API with a
// self-signed certificate and no client certificate, to every caller as os:reader, as Talos does
// (src/contract/maintenance.ts): the reader API answers (version, get disks, dmesg, ...),
// apply-config is open, the rest is PERMISSION_DENIED, and nothing sensitive is shown (no
// machine config, even when typed documents alone were applied); a valid configuration applied
// that way ends maintenance mode (client certificates required from then on) and is persisted;
// an invalid one is refused with its errors.
import * as grpc from '@grpc/grpc-js';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateConfigs } from '../../src/contract/genconfig.ts';
import { serviceClient } from '../../src/contract/protos.ts';
import { generateSecrets, type SecretsBundle } from '../../src/contract/secrets.ts';
import { issueClientCert } from '../../src/pki/certs.ts';
import { newClientConfig, save } from '../../src/contract/clientconfig.ts';
import { bronzectl } from '../lib/bronzectl.ts';
import { HostNode } from '../lib/nodes.ts';
import { freePort } from '../lib/ports.ts';

/** Whether this host lets its processes read the kernel log (machined reads /dev/kmsg). */
function kmsgReadable(): boolean {
  try {
    fs.closeSync(fs.openSync('/dev/kmsg', fs.constants.O_RDONLY | fs.constants.O_NONBLOCK));
    return true;
  } catch {
    return false;
  }
}

type Cb = (e: grpc.ServiceError | null, r?: any) => void;
type Method = 'Version' | 'Reboot' | 'ApplyConfiguration' | 'Memory' | 'ServiceList' | 'DiskStats' | 'Reset' | 'Upgrade' | 'GenerateClientConfiguration';
type MachineClient = grpc.Client & Record<Method, (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: Cb) => void>;
const Machine = serviceClient('machine.MachineService');
const State = serviceClient('cosi.resource.State');

/** TLS without verifying the server, no client certificate: what `--insecure` does. */
function insecure(endpoint: string): MachineClient {
  return new Machine(endpoint, grpc.credentials.createSsl(null, null, null, { checkServerIdentity: () => undefined, rejectUnauthorized: false })) as unknown as MachineClient;
}
function call(c: MachineClient, m: Method, req: object = {}): Promise<any> {
  return new Promise((resolve, reject) => c[m](req, new grpc.Metadata(), { deadline: Date.now() + 20_000 }, (e, r) => (e ? reject(e) : resolve(r))));
}

describe('maintenance mode over real processes', () => {
  let node: HostNode;
  let secrets: SecretsBundle;
  let controlplane: string;

  beforeAll(async () => {
    secrets = await generateSecrets();
    controlplane = generateConfigs({ clusterName: 'm', endpoint: 'https://127.0.0.30:6443', secrets }).controlplane;
    node = new HostNode({ name: 'maint', address: '127.0.0.30', apiPort: await freePort(), services: ['apid'] }).start();
    await node.waitFor(/maintenance mode: no machine configuration/, 60_000);
    await node.waitFor(/serving the API on/, 60_000);
  }, 90_000);
  afterAll(() => node?.stop());

  it('answers the reader API without a client certificate and refuses the rest as Talos does', async () => {
    const c = insecure(node.endpoint);
    const s = new State(node.endpoint, grpc.credentials.createSsl(null, null, null, { checkServerIdentity: () => undefined, rejectUnauthorized: false })) as unknown as grpc.Client & {
      Get: (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: Cb) => void;
    };
    const list = await new Promise<any>((resolve, reject) =>
      s.Get({ namespace: 'meta', type: 'ResourceDefinitions.meta.cosi.dev', id: 'resourcedefinitions.meta.cosi.dev' }, new grpc.Metadata(), { deadline: Date.now() + 20_000 }, (e, r) => (e ? reject(e) : resolve(r))),
    );
    expect(list.resource.metadata.type).toBe('ResourceDefinitions.meta.cosi.dev');
    // The reader API (Talos's maintenance_basic calls Version on every maintenance node).
    const v = await call(c, 'Version');
    expect(v.messages).toHaveLength(1);
    expect(v.messages[0].version.tag).toMatch(/\S/);
    for (const m of ['Memory', 'ServiceList', 'DiskStats'] as const) expect((await call(c, m)).messages, m).toHaveLength(1);
    // What a reader may not do: refused, saying why, as Talos refuses it (PermissionDenied).
    for (const m of ['Reboot', 'Reset', 'Upgrade'] as const) {
      await expect(call(c, m), m).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED, details: expect.stringMatching(/in maintenance mode every caller is os:reader: apply a configuration first/) });
    }
    await expect(call(c, 'GenerateClientConfiguration', { roles: ['os:admin'] })).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });

    // and through bronzectl, as an operator sees it
    const get = await bronzectl(['get', 'resourcedefinitions', '--insecure', '-n', node.endpoint]);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/ResourceDefinition/);
    const version = await bronzectl(['version', '--insecure', '-n', node.endpoint]);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout).toMatch(new RegExp(`Server:\\n\\tNODE: +${node.endpoint.replace(/\./g, '\\.')}\\n\\tTag: +\\S`));
    const disks = await bronzectl(['get', 'disks', '--insecure', '-n', node.endpoint]);
    expect(disks.code, disks.stderr).toBe(0);
    expect(disks.stderr).toBe('');
    const dmesg = await bronzectl(['dmesg', '--insecure', '-n', node.endpoint]);
    if (kmsgReadable()) {
      expect(dmesg.code, dmesg.stderr).toBe(0);
      const lines = dmesg.stdout.split('\n').filter(Boolean);
      expect(lines.length).toBeGreaterThan(0);
      for (const l of lines.slice(0, 20)) expect(l.startsWith(`${node.endpoint}: `), l).toBe(true);
    } else {
      // Served (not refused): the host only keeps its kernel log from this process.
      expect(dmesg.stderr).toMatch(/the kernel log cannot be read/);
    }
  });

  it('shows nothing sensitive: get machineconfig --insecure is PERMISSION_DENIED', async () => {
    for (const type of ['machineconfig', 'parsedmachineconfig']) {
      const r = await bronzectl(['get', type, '--insecure', '-n', node.endpoint]);
      expect(r.code, type).not.toBe(0);
      expect(r.stderr, type).toMatch(/code = PermissionDenied desc = resources of type \S+ are only shown to os:admin/);
    }
  });

  /** A client config for the node with `ca`'s admin certificate. */
  async function clientConfig(name: string, ca: SecretsBundle['certs']['os']): Promise<string> {
    const file = path.join(node.dir, `${name}.bronzeconfig`);
    await save(file, await newClientConfig({ contextName: name, endpoints: [node.endpoint], ca, roles: ['os:admin'], ttlMs: 3600_000 }));
    return file;
  }

  it('bronzectl with the cluster\'s config, meeting the node in maintenance mode, is told so and to use --insecure', async () => {
    const r = await bronzectl(['version'], { config: await clientConfig('cluster', secrets.certs.os) });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${node.endpoint} is in maintenance mode (it has no configuration yet, and so no certificate from your cluster's CA): talk to it with --insecure`);
    expect(r.stderr).not.toMatch(/self-signed certificate/);
  });

  it('refuses an invalid configuration with its errors', async () => {
    const c = insecure(node.endpoint);
    const bad = controplaneWith('type: controlplane', 'type: spaceship');
    await expect(call(c, 'ApplyConfiguration', { data: Buffer.from(bad), mode: 'AUTO' })).rejects.toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: expect.stringMatching(/machine\.type/),
    });
    expect(fs.existsSync(path.join(node.dir, 'state', 'config.yaml'))).toBe(false);
  });

  it('bronzectl apply-config prints each error of an invalid configuration once (issue 17)', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['type.yaml', controplaneWith('type: controlplane', 'type: spaceship'), /machine\.type/],
      ['yaml.yaml', controplaneWith('type: controlplane', 'type: controlplane\n   oops: [1,'), /invalid YAML/],
    ];
    for (const [name, text, marker] of cases) {
      const file = path.join(node.dir, name);
      fs.writeFileSync(file, text);
      const r = await bronzectl(['apply-config', '--insecure', '-n', node.endpoint, '-f', file]);
      expect(r.code, r.stderr).toBe(1);
      const lines = `${r.stdout}${r.stderr}`.split('\n').filter((l) => marker.test(l));
      expect(lines.length, `${name}:\n${r.stderr}`).toBeGreaterThan(0);
      // One line per problem: no line twice, and machine.type named once, in one wording.
      expect(new Set(lines).size, `${name}:\n${r.stderr}`).toBe(lines.length);
      if (name === 'type.yaml') expect(lines, r.stderr).toHaveLength(1);
    }
    expect(fs.existsSync(path.join(node.dir, 'state', 'config.yaml'))).toBe(false);
  });

  it('takes a configuration of typed documents alone (as Talos): applied and kept, still in maintenance mode, with the warnings', async () => {
    const c = insecure(node.endpoint);
    const typedOnly = 'apiVersion: v1alpha1\nkind: TimeSyncConfig\nntp:\n  servers: [time.example]\n---\napiVersion: v1alpha1\nkind: KubeletConfig\nimage: ghcr.io/siderolabs/kubelet:v1.34.1\n';
    const r = await call(c, 'ApplyConfiguration', { data: Buffer.from(typedOnly), mode: 'AUTO' });
    expect(r.messages[0].warnings).toEqual([expect.stringMatching(/^KubeletConfig \(line 7\): ignored: Bronze runs no Kubernetes$/)]);
    await node.waitFor(/maintenance mode: the configuration has typed documents only/, 30_000);
    expect(fs.readFileSync(path.join(node.dir, 'state', 'config.yaml'), 'utf8')).toBe(typedOnly);
    // Still in maintenance mode: the reader API answers, a reader's refusals stay.
    expect((await call(insecure(node.endpoint), 'Version')).messages).toHaveLength(1);
    await expect(call(insecure(node.endpoint), 'Reboot')).rejects.toMatchObject({ code: grpc.status.PERMISSION_DENIED });
    // A MachineConfig resource exists now, and is not shown: neither read, listed nor watched.
    const mc = await bronzectl(['get', 'machineconfig', '--insecure', '-n', node.endpoint, '-o', 'yaml']);
    expect(mc.code).not.toBe(0);
    expect(mc.stderr).toMatch(/code = PermissionDenied desc = resources of type MachineConfigs.config.talos.dev are only shown to os:admin/);
    expect(mc.stdout + mc.stderr).not.toMatch(/time\.example|TimeSyncConfig/);
    const watch = await bronzectl(['get', 'mc', 'v1alpha1', '--insecure', '-n', node.endpoint, '-w'], { timeoutMs: 20_000 });
    expect(watch.code).not.toBe(0);
    expect(watch.stdout + watch.stderr).not.toMatch(/time\.example|TimeSyncConfig/);
  });

  it('leaves maintenance mode with a valid configuration: persisted, certificates required', async () => {
    const c = insecure(node.endpoint);
    const r = await call(c, 'ApplyConfiguration', { data: Buffer.from(controlplane), mode: 'AUTO' });
    expect(r.messages[0].mode).toBe('NO_REBOOT');
    await node.waitFor(/left maintenance mode/, 30_000);
    expect(fs.readFileSync(path.join(node.dir, 'state', 'config.yaml'), 'utf8')).toBe(controlplane);
    // A fresh connection without a certificate is now refused...
    await new Promise((r) => setTimeout(r, 1500)); // apid polls its certificates every second
    await expect(call(insecure(node.endpoint), 'Version')).rejects.toMatchObject({ code: grpc.status.UNAUTHENTICATED });
    // ...and one with an admin certificate from the cluster's CA works.
    const admin = await issueClientCert(secrets.certs.os, { commonName: 'admin', roles: ['os:admin'], ttlMs: 3600_000 });
    const mtls = new Machine(node.endpoint, grpc.credentials.createSsl(Buffer.from(secrets.certs.os.crt), Buffer.from(admin.key), Buffer.from(admin.crt))) as unknown as MachineClient;
    expect((await call(mtls, 'Version')).messages).toHaveLength(1);
    // A client config of another cluster: told that the node's CA is not the one it holds.
    const other = await generateSecrets();
    const o = await bronzectl(['version'], { config: await clientConfig('other', other.certs.os) });
    expect(o.code).toBe(1);
    expect(o.stderr).toMatch(/certificate is issued by "[^"]+", not by the CA in your client config \("[^"]+", fingerprint [0-9A-F:]+…\): the node belongs to another cluster, or this client config is for another one/);
  }, 60_000);

  function controplaneWith(a: string, b: string): string {
    return controlplane.replace(a, b);
  }
});
