// The client library against a real mTLS grpc-js server: routing metadata, endpoint failover,
// server-name checks, client-certificate checks, maintenance (insecure) mode, stream cancellation.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as grpc from '@grpc/grpc-js';
import { connect, node, nodes, parseEndpoint, RpcError } from '../../../src/client/index.ts';
import { upgradeRequests } from '../../../src/bronzectl/commands/upgrade.ts';
import { newCA } from '../../../src/pki/ca.ts';
import { issueClientCert, issueServerCert } from '../../../src/pki/certs.ts';
import { deadEndpoint, makePki, startApi, type FakeApi, type Pki } from './testing.ts';

const DAY = 86_400_000;
let pki: Pki;
let admin: { crt: string; key: string };
let api: FakeApi;
/** What the fake UpgradeStream saw last; while `gate` is pending it does not read. */
let upgradeSeen = { bytes: 0, sha256: '', cancelled: false };
let gate: Promise<void> | undefined;

const version = (hostname: string) => ({ messages: [{ metadata: { hostname }, version: { tag: 'v9' } }] });

beforeAll(async () => {
  pki = await makePki();
  admin = await issueClientCert(pki.ca, { commonName: 'admin', roles: ['os:admin'], ttlMs: DAY });
  api = await startApi(pki, {
    '/machine.MachineService/Version': { unary: () => version('n1') },
    '/machine.MachineService/UpgradeStream': {
      bidi: async (call) => {
        const hash = crypto.createHash('sha256');
        upgradeSeen = { bytes: 0, sha256: '', cancelled: false };
        const seen = upgradeSeen;
        let replied = false;
        // ('cancelled' also comes when a finished call closes)
        call.on('cancelled', () => (seen.cancelled ||= !replied));
        if (gate) {
          call.pause();
          await gate;
          call.resume();
        }
        let size = -1;
        for await (const m of call.iterator({ destroyOnReturn: false })) {
          if (size < 0) {
            size = Number(m.size);
            continue;
          }
          hash.update(m.chunk);
          seen.bytes += m.chunk.length;
        }
        // A client's cancel looks like the end of its requests at first: answer only a whole upload.
        if (seen.bytes !== size) return new Promise<void>((resolve) => call.on('cancelled', () => resolve()));
        seen.sha256 = hash.digest('hex');
        replied = true;
        call.write({ stage: 'reboot', message: seen.sha256 });
      },
    },
    '/machine.MachineService/Dmesg': {
      stream: async (_req, call) => {
        call.write({ bytes: Buffer.from('first\n') });
        await new Promise<void>((resolve) => call.on('cancelled', resolve));
      },
    },
  });
});

afterAll(async () => {
  await api.close();
});

const creds = () => ({ ca: pki.ca.crt, crt: admin.crt, key: admin.key });

describe('parseEndpoint', () => {
  it('defaults the port to 50000 and keeps an explicit one', () => {
    expect(parseEndpoint('10.5.0.2')).toMatchObject({ host: '10.5.0.2', port: 50000, address: '10.5.0.2:50000' });
    expect(parseEndpoint('127.0.0.1:50123')).toMatchObject({ host: '127.0.0.1', port: 50123 });
    expect(parseEndpoint('node1.lab')).toMatchObject({ host: 'node1.lab', address: 'node1.lab:50000' });
    expect(parseEndpoint('fd00::2')).toMatchObject({ host: 'fd00::2', address: '[fd00::2]:50000' });
    expect(parseEndpoint('[fd00::2]:1234')).toMatchObject({ host: 'fd00::2', port: 1234 });
  });

  it('rejects what is not host[:port]', () => {
    expect(() => parseEndpoint('')).toThrow(/empty/);
    expect(() => parseEndpoint('h:99999')).toThrow(/out of range/);
    expect(() => parseEndpoint('https://h/x')).toThrow(/want host/);
  });
});

describe('connect', () => {
  it('calls over mTLS and sends `node` / `nodes` metadata (one value per node)', async () => {
    expect(nodes(['a', 'b', 'c']).get('nodes')).toEqual(['a', 'b', 'c']);
    expect(node('x', nodes(['a'])).getMap()).toEqual({ node: 'x' });
    const c = connect({ endpoints: [api.endpoint], ...creds() });
    try {
      expect((await c.machine.Version()).messages[0]!.version!.tag).toBe('v9');
      await c.machine.Version({}, { metadata: node('n2') });
      await c.machine.Version({}, { metadata: nodes(['a', 'b', 'c']) });
    } finally {
      c.close();
    }
    const seen = api.calls.filter((x) => x.path === '/machine.MachineService/Version').slice(-3);
    expect(seen.map((x) => [x.node, x.nodes])).toEqual([
      [[], []],
      [['n2'], []],
      [[], ['a', 'b', 'c']],
    ]);
  });

  it('fails over to the next endpoint when the first is down', async () => {
    const dead = await deadEndpoint();
    const c = connect({ endpoints: [dead, api.endpoint], ...creds(), random: () => 0 });
    try {
      expect(c.currentEndpoint).toBe(dead);
      const r = await c.machine.Version();
      expect(r.messages[0]!.metadata!.hostname).toBe('n1');
      expect(c.currentEndpoint).toBe(api.endpoint); // stays on the one that answered
      // Streams fail over too.
      const ac = new AbortController();
      const c2 = connect({ endpoints: [dead, api.endpoint], ...creds(), random: () => 0 });
      for await (const d of c2.machine.Dmesg({}, { signal: ac.signal })) {
        expect(d.bytes.toString()).toBe('first\n');
        ac.abort();
      }
      c2.close();
    } finally {
      c.close();
    }
  });

  it('reports UNAVAILABLE naming the endpoint when every endpoint is down', async () => {
    const c = connect({ endpoints: [await deadEndpoint()], ...creds() });
    try {
      const err = await c.machine.Version().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(RpcError);
      expect((err as RpcError).code).toBe(grpc.status.UNAVAILABLE);
      expect((err as RpcError).message).toMatch(/^rpc error: code = Unavailable desc = /);
    } finally {
      c.close();
    }
  });

  it('checks the server certificate names the endpoint host (IP SAN)', async () => {
    const other = await issueServerCert(pki.ca, { commonName: 'x', dnsNames: ['elsewhere.example'], ipAddresses: ['10.9.9.9'], ttlMs: DAY });
    const wrong = await startApi(pki, { '/machine.MachineService/Version': { unary: () => version('w') } }, { cert: other });
    const c = connect({ endpoints: [wrong.endpoint], ...creds() });
    try {
      await expect(c.machine.Version()).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE });
      // `localhost` is in the good certificate's DNS SANs: a name endpoint is checked by name.
      const byName = connect({ endpoints: [`localhost:${api.port}`], ...creds() });
      await expect(byName.machine.Version()).resolves.toBeDefined();
      byName.close();
    } finally {
      c.close();
      await wrong.close();
    }
  });

  it('is refused with a client certificate from another CA', async () => {
    const otherCA = await newCA({ commonName: 'other', validityDays: 1 });
    const stranger = await issueClientCert(otherCA, { commonName: 'x', roles: ['os:admin'], ttlMs: DAY });
    const c = connect({ endpoints: [api.endpoint], ca: pki.ca.crt, crt: stranger.crt, key: stranger.key });
    try {
      await expect(c.machine.Version()).rejects.toBeInstanceOf(RpcError);
    } finally {
      c.close();
    }
  });

  it('insecure mode talks TLS without a client certificate and without verifying the server', async () => {
    const selfCA = await newCA({ commonName: 'maintenance', validityDays: 1 });
    const cert = await issueServerCert(selfCA, { commonName: 'm', dnsNames: ['unrelated'], ttlMs: DAY });
    const maint = await startApi({ ca: selfCA, server: cert }, { '/machine.MachineService/Version': { unary: () => version('m') } }, { requireClientCert: false });
    const c = connect({ endpoints: [maint.endpoint], insecure: true });
    try {
      expect((await c.machine.Version()).messages[0]!.metadata!.hostname).toBe('m');
    } finally {
      c.close();
      await maint.close();
    }
    expect(() => connect({ endpoints: [maint.endpoint] })).toThrow(/CA certificate/);
  });

  it('ends a stream without error when the signal aborts', async () => {
    const c = connect({ endpoints: [api.endpoint], ...creds() });
    const ac = new AbortController();
    const got: string[] = [];
    try {
      for await (const d of c.machine.Dmesg({ follow: true }, { signal: ac.signal })) {
        got.push(d.bytes.toString());
        setTimeout(() => ac.abort(), 10);
      }
    } finally {
      c.close();
    }
    expect(got).toEqual(['first\n']);
  });
});

describe('bidirectional streams (UpgradeStream)', () => {
  const MiB = 1 << 20;

  it('pulls the next message only as the connection takes them; everything arrives intact', async () => {
    const data = crypto.randomBytes(64 * MiB);
    let pulled = 0;
    async function* chunks(): AsyncGenerator<Buffer> {
      for (let off = 0; off < data.length; off += MiB) {
        pulled++;
        yield data.subarray(off, off + MiB);
      }
    }
    let open!: () => void;
    gate = new Promise((r) => (open = r));
    const c = connect({ endpoints: [api.endpoint], ...creds() });
    try {
      const replies: Array<{ stage: string; message: string }> = [];
      const done = (async () => {
        for await (const p of c.machine.UpgradeStream(upgradeRequests({ image: '' }, { size: data.length, chunks: chunks() }))) replies.push(p);
      })();
      await new Promise((r) => setTimeout(r, 500));
      // The server reads nothing: a few messages in flight and what the HTTP/2 windows hold, not 64.
      expect(pulled).toBeGreaterThan(0);
      expect(pulled).toBeLessThanOrEqual(8);
      open();
      await done;
      expect(pulled).toBe(64);
      expect(upgradeSeen).toMatchObject({ bytes: data.length, cancelled: false });
      expect(replies).toEqual([expect.objectContaining({ stage: 'reboot', message: crypto.createHash('sha256').update(data).digest('hex') })]);
    } finally {
      gate = undefined;
      c.close();
    }
  });

  it('starts on an endpoint that connects, skipping a dead one', async () => {
    const c = connect({ endpoints: [await deadEndpoint(), api.endpoint], ...creds(), random: () => 0 });
    try {
      const out = [];
      for await (const p of c.machine.UpgradeStream(upgradeRequests({ image: '' }, { size: 3, chunks: (async function* () { yield Buffer.from('abc'); })() }))) out.push(p);
      expect(out).toHaveLength(1);
      expect(c.currentEndpoint).toBe(api.endpoint);
      expect(upgradeSeen.bytes).toBe(3);
    } finally {
      c.close();
    }
  });

  it('with every endpoint down, fails with gRPC\'s UNAVAILABLE naming the endpoint', async () => {
    const dead = await deadEndpoint();
    const c = connect({ endpoints: [dead], ...creds() });
    try {
      const run = (async () => {
        for await (const _ of c.machine.UpgradeStream(upgradeRequests({ image: 'https://x/y' }))) void _;
      })();
      await expect(run).rejects.toMatchObject({ code: grpc.status.UNAVAILABLE, endpoint: dead });
    } finally {
      c.close();
    }
  });

  it('an error reading the requests cancels the call and is thrown as it is', async () => {
    const c = connect({ endpoints: [api.endpoint], ...creds() });
    try {
      async function* failing(): AsyncGenerator<Buffer> {
        yield Buffer.alloc(MiB);
        await new Promise((r) => setTimeout(r, 50));
        throw new Error('EIO: reading upgrade.tar');
      }
      const run = (async () => {
        for await (const _ of c.machine.UpgradeStream(upgradeRequests({ image: '' }, { size: 10 * MiB, chunks: failing() }))) void _;
      })();
      await expect(run).rejects.toThrow('EIO: reading upgrade.tar');
      const deadline = Date.now() + 2000;
      while (!upgradeSeen.cancelled && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(upgradeSeen.cancelled).toBe(true);
    } finally {
      c.close();
    }
  });
});
