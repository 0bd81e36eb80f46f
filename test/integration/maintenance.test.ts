// Maintenance mode between real processes: a node without configuration serves its API with a
// self-signed certificate and no client certificate, only what Talos's maintenance service
// serves (apply-config and resource reads; src/contract/maintenance.ts);
// a valid configuration applied that way ends maintenance mode (client certificates required
// from then on) and is persisted; an invalid one is refused with its errors.
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

type Cb = (e: grpc.ServiceError | null, r?: any) => void;
type Method = 'Version' | 'Reboot' | 'ApplyConfiguration' | 'Memory' | 'ServiceList' | 'DiskStats';
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

  it('answers resource reads without a client certificate and refuses the rest as Talos does', async () => {
    const c = insecure(node.endpoint);
    const s = new State(node.endpoint, grpc.credentials.createSsl(null, null, null, { checkServerIdentity: () => undefined, rejectUnauthorized: false })) as unknown as grpc.Client & {
      Get: (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: Cb) => void;
    };
    const list = await new Promise<any>((resolve, reject) =>
      s.Get({ namespace: 'meta', type: 'ResourceDefinitions.meta.cosi.dev', id: 'resourcedefinitions.meta.cosi.dev' }, new grpc.Metadata(), { deadline: Date.now() + 20_000 }, (e, r) => (e ? reject(e) : resolve(r))),
    );
    expect(list.resource.metadata.type).toBe('ResourceDefinitions.meta.cosi.dev');
    for (const m of ['Version', 'Reboot', 'Memory', 'ServiceList', 'DiskStats'] as const) {
      await expect(call(c, m)).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED, details: expect.stringMatching(/^API is not implemented in maintenance mode/) });
    }
    // and through bronzectl, as an operator sees it
    const get = await bronzectl(['get', 'resourcedefinitions', '--insecure', '-n', node.endpoint]);
    expect(get.code, get.stderr).toBe(0);
    expect(get.stdout).toMatch(/ResourceDefinition/);
    const version = await bronzectl(['version', '--insecure', '-n', node.endpoint]);
    expect(version.code).not.toBe(0);
    expect(version.stderr).toMatch(/API is not implemented in maintenance mode/);
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
    // Still in maintenance mode: Version stays refused there, as before the configuration.
    await expect(call(insecure(node.endpoint), 'Version')).rejects.toMatchObject({ code: grpc.status.UNIMPLEMENTED });
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
