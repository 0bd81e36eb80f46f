// grpc-js's DNS resolver as bundle.ts bundles it: node:dns is not loaded with it, and the
// resolver still resolves a name once it is asked to.
import fs from 'node:fs';
import net from 'node:net';
import { createRequire } from 'node:module';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { EAGER_DNS, GRPC_IS_IPV6_FILES, GRPC_IS_IPV6_USES, GRPC_SERVER, IPV6_LITERAL, grpcFastIsIPv6, grpcLazyDns, grpcServerListen } from './grpc-lazy-dns.ts';

const require = createRequire(import.meta.url);
const file = require.resolve('@grpc/grpc-js/build/src/resolver-dns.js');

/** The module from `source`, its requires recorded: grpc-js's own modules are the real ones. */
function load(source: string): { exports: { setup(): void }; required: string[] } {
  const real = createRequire(file);
  const required: string[] = [];
  const recording = (id: string) => (required.push(id), real(id) as unknown);
  const mod = { exports: {} as { setup(): void } };
  vm.runInThisContext(`(function (exports, require, module) {${source}\n})`)(mod.exports, recording, mod);
  return { exports: mod.exports, required };
}

describe('grpcLazyDns', () => {
  it('loads node:dns when the resolver first needs it, not with the module', async () => {
    const source = fs.readFileSync(file, 'utf8');
    expect(load(source).required).toContain('dns');
    const lazy = load(grpcLazyDns(source, file));
    expect(lazy.required).not.toContain('dns');
    // Registered as grpc-js's dns resolver, it answers for an address without node:dns (an IP
    // target is never looked up: no DNS traffic), and loads it for a name.
    lazy.exports.setup();
    const real = createRequire(file);
    // grpc-js's internal modules (no type declarations are published for them).
    const resolver = real('./resolver') as { createResolver(uri: unknown, listener: unknown, options: object): { updateResolution(): void } };
    const parseUri = (real('./uri-parser') as { parseUri(s: string): unknown }).parseUri;
    const resolve = (target: string) =>
      new Promise<string>((done) => {
        const r = resolver.createResolver(parseUri(target), ((result: unknown) => (done(JSON.stringify(result)), true)) as never, { 'grpc.service_config_disable_resolution': 1 });
        r.updateResolution();
      });
    expect(await resolve('dns:127.0.0.1:50000')).toMatch(/127\.0\.0\.1.*50000/);
    expect(await resolve('dns:[::]:50000')).toMatch(/"host":"::","port":50000/);
    expect(lazy.required).not.toContain('dns');
    expect(await resolve('dns:localhost:50000')).toMatch(/50000/);
    expect(lazy.required).toContain('dns');
  });

  it('tells IPv6 literals from names as net.isIPv6 does', async () => {
    const net = await import('node:net');
    const isIPv6 = vm.runInNewContext(`${IPV6_LITERAL}; bronzeIsIPv6`, { net_1: net, URL }) as (s: string) => boolean;
    const cases = ['::', '::1', '1::', 'fe80::1', 'fe80::1%eth0', 'fe80::1%', '2001:db8::1', '::ffff:1.2.3.4', '::ffff:01.2.3.4', '1:2:3:4:5:6:7:8', '1:2:3:4:5:6:7:8:9',
      '1:2:3:4:5:6:7::', '12345::', 'g::1', '::1.2.3', '1.2.3.4', ':::', '1::2::3', 'FE80::ABCD', '::ffff:256.1.1.1', '0:0:0:0:0:0:1.2.3.4', '[::1]', '::1]/x[',
      'a:b', ' ::1', '::1 ', '::1/64', '::1?x', '00000::1', '0000::1', 'localhost', '', 'example.com:80'];
    for (const c of cases) expect(isIPv6(c), JSON.stringify(c)).toBe(net.isIPv6(c));
  });

  it('refuses a resolver that does not load node:dns as expected', () => {
    expect(() => grpcLazyDns('const dns = require("node:dns");', 'x.js')).toThrow(new RegExp(`x\\.js: expected one '${EAGER_DNS.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}'`));
    expect(() => grpcLazyDns(`${EAGER_DNS}\ndns_1.lookup("a");`, 'y.js')).toThrow(/y\.js: uses dns_1\.lookup/);
  });

  it('has grpc-js name server and peer addresses without net.isIPv6', () => {
    const at = require.resolve('@grpc/grpc-js/build/src/subchannel-address.js');
    const real = createRequire(at);
    // net.isIPv6 is refused: an IPv6 literal must be told from the URL parser alone.
    const net = { ...(real('net') as object), isIPv6: () => { throw new Error('net.isIPv6 called'); } };
    const mod = { exports: {} as { subchannelAddressToString(a: object): string } };
    const source = grpcFastIsIPv6(fs.readFileSync(at, 'utf8'), at);
    vm.runInThisContext(`(function (exports, require, module) {${source}\n})`)(mod.exports, (id: string) => (id === 'net' ? net : real(id)), mod);
    expect(mod.exports.subchannelAddressToString({ host: '::', port: 50000 })).toBe('[::]:50000');
    expect(mod.exports.subchannelAddressToString({ host: '10.0.2.15', port: 50000 })).toBe('10.0.2.15:50000');
    expect(mod.exports.subchannelAddressToString({ path: '/run/x.sock' })).toBe('/run/x.sock');
  });

  it('replaces every net.isIPv6 call in the modules it names, and refuses when their count changed', () => {
    for (const [base, count] of Object.entries(GRPC_IS_IPV6_USES)) {
      const at = require.resolve(`@grpc/grpc-js/build/src/${base}`);
      expect(GRPC_IS_IPV6_FILES.test(at), at).toBe(true);
      const out = grpcFastIsIPv6(fs.readFileSync(at, 'utf8'), at);
      expect(out.split('bronzeIsIPv6(').length - 1, base).toBe(count + 1); // the calls and the definition
      // The one net.isIPv6 left is bronzeIsIPv6's own fallback, for a zone index.
      expect(out.split('(0, net_1.isIPv6)(').length - 1, base).toBe(1);
    }
    expect(() => grpcFastIsIPv6('(0, net_1.isIPv6)(a); (0, net_1.isIPv6)(b);', '/x/resolver-ip.js')).toThrow(/resolver-ip\.js: expected .* 1 time\(s\), found 2/);
    expect(() => grpcFastIsIPv6('', '/x/other.js')).toThrow(/other\.js: not a module/);
  });

  it("has grpc-js's server listen on [::] without a lookup, and on any other address as before", async () => {
    const at = require.resolve('@grpc/grpc-js/build/src/server.js');
    expect(GRPC_SERVER.test(at)).toBe(true);
    const real = createRequire(at);
    const mod = { exports: {} as { Server: new () => { bindAsync(a: string, c: unknown, cb: (e: Error | null, port: number) => void): void; forceShutdown(): void } } };
    vm.runInThisContext(`(function (exports, require, module) {${grpcServerListen(fs.readFileSync(at, 'utf8'), at)}\n})`)(mod.exports, real, mod);
    const creds = (real('./server-credentials') as { ServerCredentials: { createInsecure(): unknown } }).ServerCredentials.createInsecure();
    const listened: unknown[] = [];
    const listen = net.Server.prototype.listen;
    net.Server.prototype.listen = function (this: net.Server, ...args: unknown[]) {
      listened.push(args[0]);
      return (listen as (...a: unknown[]) => net.Server).apply(this, args);
    } as typeof listen;
    const servers: { forceShutdown(): void }[] = [];
    const bind = (address: string) =>
      new Promise<number>((resolve, reject) => {
        const server = new mod.exports.Server();
        servers.push(server);
        server.bindAsync(address, creds, (err, port) => (err ? reject(err) : resolve(port)));
      });
    const reaches = (host: string, port: number) =>
      new Promise<boolean>((resolve) => {
        const s = net.connect({ host, port }, () => (s.destroy(), resolve(true)));
        s.on('error', () => resolve(false));
      });
    try {
      const any = await bind('[::]:0');
      expect(listened[0]).toEqual({ port: 0 });
      // The unspecified IPv6 address, dual stack: both loopbacks reach it.
      expect(await reaches('127.0.0.1', any)).toBe(true);
      expect(await reaches('::1', any)).toBe(true);
      const v4 = await bind('127.0.0.1:0');
      expect(listened[1]).toEqual({ host: '127.0.0.1', port: 0 });
      expect(await reaches('127.0.0.1', v4)).toBe(true);
    } finally {
      net.Server.prototype.listen = listen;
      for (const s of servers) s.forceShutdown();
    }
    expect(() => grpcServerListen('http2Server.listen(x, () => {', '/x/server.js')).toThrow(/server\.js: expected 'http2Server\.listen\(address, \(\) => \{' 1 time\(s\), found 0/);
  });
});
